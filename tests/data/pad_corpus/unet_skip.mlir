module @jit_unet_skip attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x6x6xf32>, %arg1: tensor<3x6x6xf32>) -> (tensor<5x6x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:2, 1:5, 1:5] : (tensor<2x6x6xf32>) -> tensor<2x4x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<2x4x4xf32>, tensor<i32>) -> tensor<2x6x6xf32>
    %2 = stablehlo.concatenate %1, %arg1, dim = 0 : (tensor<2x6x6xf32>, tensor<3x6x6xf32>) -> tensor<5x6x6xf32>
    return %2 : tensor<5x6x6xf32>
  }
  func.func private @_pad(%arg0: tensor<2x4x4xf32>, %arg1: tensor<i32>) -> tensor<2x6x6xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1, 1], high = [0, 1, 1], interior = [0, 0, 0] : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x6x6xf32>
    return %1 : tensor<2x6x6xf32>
  }
}
