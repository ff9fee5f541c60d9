module @jit_crop_of_concat attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<5xf32>) -> (tensor<6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<4xf32>, tensor<5xf32>) -> tensor<9xf32>
    %1 = stablehlo.slice %0 [2:8] : (tensor<9xf32>) -> tensor<6xf32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<6xf32>
    return %3 : tensor<6xf32>
  }
}
