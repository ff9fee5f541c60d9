module @jit_concat_slices attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x8xf32>) -> (tensor<3x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:3, 0:3] : (tensor<3x8xf32>) -> tensor<3x3xf32>
    %1 = stablehlo.slice %arg0 [0:3, 3:6] : (tensor<3x8xf32>) -> tensor<3x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x2xf32>
    %3 = stablehlo.concatenate %0, %1, %2, dim = 1 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x8xf32>
    return %3 : tensor<3x8xf32>
  }
}
