module @jit_wrap_stencil attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x10xf32>) -> (tensor<2x10xf32> {jax.result_info = "result"}) {
    %0 = call @_pad(%arg0) : (tensor<2x10xf32>) -> tensor<2x12xf32>
    %1 = stablehlo.slice %0 [0:2, 0:10] : (tensor<2x12xf32>) -> tensor<2x10xf32>
    %2 = stablehlo.slice %0 [0:2, 2:12] : (tensor<2x12xf32>) -> tensor<2x10xf32>
    %3 = stablehlo.add %1, %2 : tensor<2x10xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x10xf32>
    %5 = stablehlo.multiply %4, %arg0 : tensor<2x10xf32>
    %6 = stablehlo.subtract %3, %5 : tensor<2x10xf32>
    return %6 : tensor<2x10xf32>
  }
  func.func private @_pad(%arg0: tensor<2x10xf32>) -> tensor<2x12xf32> {
    %0 = stablehlo.slice %arg0 [0:2, 9:10] : (tensor<2x10xf32>) -> tensor<2x1xf32>
    %1 = stablehlo.slice %arg0 [0:2, 0:1] : (tensor<2x10xf32>) -> tensor<2x1xf32>
    %2 = stablehlo.concatenate %0, %arg0, %1, dim = 1 : (tensor<2x1xf32>, tensor<2x10xf32>, tensor<2x1xf32>) -> tensor<2x12xf32>
    return %2 : tensor<2x12xf32>
  }
}
