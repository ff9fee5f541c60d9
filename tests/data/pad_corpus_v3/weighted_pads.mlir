module @jit_weighted_pads attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>, %arg1: tensor<3x4xf32>) -> (tensor<5x6xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<3x4xf32>, tensor<i32>) -> tensor<5x6xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x6xf32>
    %2 = stablehlo.multiply %1, %0 : tensor<5x6xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = call @_pad(%arg1, %c_0) : (tensor<3x4xf32>, tensor<i32>) -> tensor<5x6xf32>
    %cst_1 = stablehlo.constant dense<2.500000e-01> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<5x6xf32>
    %5 = stablehlo.multiply %4, %3 : tensor<5x6xf32>
    %6 = stablehlo.add %2, %5 : tensor<5x6xf32>
    return %6 : tensor<5x6xf32>
  }
  func.func private @_pad(%arg0: tensor<3x4xf32>, %arg1: tensor<i32>) -> tensor<5x6xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 1], high = [1, 1], interior = [0, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<5x6xf32>
    return %1 : tensor<5x6xf32>
  }
}
