module @jit_pad_broadcast attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32>) -> (tensor<4x8xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<5xf32>, tensor<i32>) -> tensor<8xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<4x8xf32>
    return %4 : tensor<4x8xf32>
  }
  func.func private @_pad(%arg0: tensor<5xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [2], high = [1], interior = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}
