module @jit_pad_reshape_unit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>) -> (tensor<1x6x6xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<4x6xf32>, tensor<i32>) -> tensor<6x6xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [1, 2] : (tensor<6x6xf32>) -> tensor<1x6x6x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [3] : (tensor<1x6x6x1xf32>, tensor<f32>) -> tensor<1x6x6xf32>
    return %2 : tensor<1x6x6xf32>
  }
  func.func private @_pad(%arg0: tensor<4x6xf32>, %arg1: tensor<i32>) -> tensor<6x6xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<6x6xf32>
    return %1 : tensor<6x6xf32>
  }
}
