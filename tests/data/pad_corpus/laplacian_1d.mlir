module @jit_laplacian_1d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16xf32>) -> (tensor<2x16xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<2x16xf32>, tensor<i32>) -> tensor<2x18xf32>
    %1 = stablehlo.slice %0 [0:2, 0:16] : (tensor<2x18xf32>) -> tensor<2x16xf32>
    %2 = stablehlo.slice %0 [0:2, 1:17] : (tensor<2x18xf32>) -> tensor<2x16xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x16xf32>
    %4 = stablehlo.multiply %3, %2 : tensor<2x16xf32>
    %5 = stablehlo.subtract %1, %4 : tensor<2x16xf32>
    %6 = stablehlo.slice %0 [0:2, 2:18] : (tensor<2x18xf32>) -> tensor<2x16xf32>
    %7 = stablehlo.add %5, %6 : tensor<2x16xf32>
    return %7 : tensor<2x16xf32>
  }
  func.func private @_pad(%arg0: tensor<2x16xf32>, %arg1: tensor<i32>) -> tensor<2x18xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x18xf32>
    return %1 : tensor<2x18xf32>
  }
}
