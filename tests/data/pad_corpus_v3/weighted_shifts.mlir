module @jit_weighted_shifts attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x8xf32>) -> (tensor<2x9xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<2x8xf32>, tensor<i32>) -> tensor<2x9xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x9xf32>
    %2 = stablehlo.multiply %1, %0 : tensor<2x9xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = call @_pad_0(%arg0, %c_0) : (tensor<2x8xf32>, tensor<i32>) -> tensor<2x9xf32>
    %cst_1 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x9xf32>
    %5 = stablehlo.multiply %3, %4 : tensor<2x9xf32>
    %6 = stablehlo.subtract %2, %5 : tensor<2x9xf32>
    return %6 : tensor<2x9xf32>
  }
  func.func private @_pad(%arg0: tensor<2x8xf32>, %arg1: tensor<i32>) -> tensor<2x9xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x9xf32>
    return %1 : tensor<2x9xf32>
  }
  func.func private @_pad_0(%arg0: tensor<2x8xf32>, %arg1: tensor<i32>) -> tensor<2x9xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x9xf32>
    return %1 : tensor<2x9xf32>
  }
}
