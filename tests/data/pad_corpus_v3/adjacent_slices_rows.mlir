module @jit_adjacent_slices_rows attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x6xf32>) -> (tensor<5x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [1:3, 0:4] : (tensor<8x6xf32>) -> tensor<2x4xf32>
    %1 = stablehlo.slice %arg0 [3:6, 0:4] : (tensor<8x6xf32>) -> tensor<3x4xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x4xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<5x4xf32>
    return %4 : tensor<5x4xf32>
  }
}
