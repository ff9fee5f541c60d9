module @jit_concat_of_pads_rows attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x5xf32>, %arg1: tensor<3x5xf32>) -> (tensor<7x5xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<2x5xf32>, tensor<i32>) -> tensor<3x5xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad_0(%arg1, %c_0) : (tensor<3x5xf32>, tensor<i32>) -> tensor<4x5xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<7x5xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<7x5xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<7x5xf32>
    return %4 : tensor<7x5xf32>
  }
  func.func private @_pad(%arg0: tensor<2x5xf32>, %arg1: tensor<i32>) -> tensor<3x5xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [0, 0], interior = [0, 0] : (tensor<2x5xf32>, tensor<f32>) -> tensor<3x5xf32>
    return %1 : tensor<3x5xf32>
  }
  func.func private @_pad_0(%arg0: tensor<3x5xf32>, %arg1: tensor<i32>) -> tensor<4x5xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    return %1 : tensor<4x5xf32>
  }
}
