module @jit_halo_crop attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x6xf32>) -> (tensor<3x6xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:3, 5:6] : (tensor<3x6xf32>) -> tensor<3x1xf32>
    %1 = stablehlo.slice %arg0 [0:3, 0:1] : (tensor<3x6xf32>) -> tensor<3x1xf32>
    %2 = stablehlo.concatenate %0, %arg0, %1, dim = 1 : (tensor<3x1xf32>, tensor<3x6xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
    %3 = stablehlo.slice %2 [0:3, 1:7] : (tensor<3x8xf32>) -> tensor<3x6xf32>
    %4 = stablehlo.subtract %3, %arg0 : tensor<3x6xf32>
    return %4 : tensor<3x6xf32>
  }
}
