module @jit_zero_insert_2d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<6x8xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [0, 0], high = [1, 1], interior = [1, 1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<6x8xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<6x8xf32>
    return %2 : tensor<6x8xf32>
  }
}
