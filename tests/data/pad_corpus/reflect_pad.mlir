module @jit_reflect_pad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x8xf32>) -> (tensor<3x12xf32> {jax.result_info = "result"}) {
    %0 = call @_pad(%arg0) : (tensor<3x8xf32>) -> tensor<3x12xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x12xf32>
    %2 = stablehlo.add %0, %1 : tensor<3x12xf32>
    return %2 : tensor<3x12xf32>
  }
  func.func private @_pad(%arg0: tensor<3x8xf32>) -> tensor<3x12xf32> {
    %0 = stablehlo.slice %arg0 [0:3, 1:3] : (tensor<3x8xf32>) -> tensor<3x2xf32>
    %1 = call @_flip(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %2 = stablehlo.concatenate %1, %arg0, dim = 1 : (tensor<3x2xf32>, tensor<3x8xf32>) -> tensor<3x10xf32>
    %3 = stablehlo.slice %2 [0:3, 7:9] : (tensor<3x10xf32>) -> tensor<3x2xf32>
    %4 = call @_flip(%3) : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %5 = stablehlo.concatenate %2, %4, dim = 1 : (tensor<3x10xf32>, tensor<3x2xf32>) -> tensor<3x12xf32>
    return %5 : tensor<3x12xf32>
  }
  func.func private @_flip(%arg0: tensor<3x2xf32>) -> tensor<3x2xf32> {
    %0 = stablehlo.reverse %arg0, dims = [1] : tensor<3x2xf32>
    return %0 : tensor<3x2xf32>
  }
}
