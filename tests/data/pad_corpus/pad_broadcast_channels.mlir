module @jit_pad_broadcast_channels attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x6xf32>) -> (tensor<2x3x8xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<2x6xf32>, tensor<i32>) -> tensor<2x8xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 2] : (tensor<2x8xf32>) -> tensor<2x1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<2x1x8xf32>) -> tensor<2x3x8xf32>
    return %2 : tensor<2x3x8xf32>
  }
  func.func private @_pad(%arg0: tensor<2x6xf32>, %arg1: tensor<i32>) -> tensor<2x8xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x8xf32>
    return %1 : tensor<2x8xf32>
  }
}
