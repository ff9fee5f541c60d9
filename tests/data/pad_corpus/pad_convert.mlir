module @jit_pad_convert attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<3x4xf32>, tensor<i32>) -> tensor<4x6xf32>
    %1 = stablehlo.convert %0 : (tensor<4x6xf32>) -> tensor<4x6xf16>
    %2 = stablehlo.convert %1 : (tensor<4x6xf16>) -> tensor<4x6xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %4 = stablehlo.add %2, %3 : tensor<4x6xf32>
    return %4 : tensor<4x6xf32>
  }
  func.func private @_pad(%arg0: tensor<3x4xf32>, %arg1: tensor<i32>) -> tensor<4x6xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [0, 2], interior = [0, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<4x6xf32>
    return %1 : tensor<4x6xf32>
  }
}
