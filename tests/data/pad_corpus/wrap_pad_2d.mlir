module @jit_wrap_pad_2d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf32>) -> (tensor<6x6xf32> {jax.result_info = "result"}) {
    %0 = call @_pad(%arg0) : (tensor<4x4xf32>) -> tensor<6x6xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x6xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<6x6xf32>
    return %2 : tensor<6x6xf32>
  }
  func.func private @_pad(%arg0: tensor<4x4xf32>) -> tensor<6x6xf32> {
    %0 = stablehlo.slice %arg0 [3:4, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %1 = stablehlo.slice %arg0 [0:1, 0:4] : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %2 = stablehlo.concatenate %0, %arg0, %1, dim = 0 : (tensor<1x4xf32>, tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<6x4xf32>
    %3 = stablehlo.slice %2 [0:6, 3:4] : (tensor<6x4xf32>) -> tensor<6x1xf32>
    %4 = stablehlo.slice %2 [0:6, 0:1] : (tensor<6x4xf32>) -> tensor<6x1xf32>
    %5 = stablehlo.concatenate %3, %2, %4, dim = 1 : (tensor<6x1xf32>, tensor<6x4xf32>, tensor<6x1xf32>) -> tensor<6x6xf32>
    return %5 : tensor<6x6xf32>
  }
}
