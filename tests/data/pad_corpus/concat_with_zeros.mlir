module @jit_concat_with_zeros attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4xf32>) -> (tensor<2x8xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %2 = stablehlo.concatenate %0, %arg0, %1, dim = 1 : (tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
    return %2 : tensor<2x8xf32>
  }
}
