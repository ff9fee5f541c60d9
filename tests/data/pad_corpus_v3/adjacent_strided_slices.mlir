module @jit_adjacent_strided_slices attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<9x3xf32>) -> (tensor<4x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:4:2, 0:3] : (tensor<9x3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.slice %arg0 [4:8:2, 0:3] : (tensor<9x3xf32>) -> tensor<2x3xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x3xf32>
    %4 = stablehlo.add %2, %3 : tensor<4x3xf32>
    return %4 : tensor<4x3xf32>
  }
}
