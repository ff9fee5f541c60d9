module @jit_laplacian_2d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x32xf32>) -> (tensor<32x32xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<32x32xf32>, tensor<i32>) -> tensor<34x34xf32>
    %1 = stablehlo.slice %0 [0:32, 1:33] : (tensor<34x34xf32>) -> tensor<32x32xf32>
    %2 = stablehlo.slice %0 [2:34, 1:33] : (tensor<34x34xf32>) -> tensor<32x32xf32>
    %3 = stablehlo.add %1, %2 : tensor<32x32xf32>
    %4 = stablehlo.slice %0 [1:33, 0:32] : (tensor<34x34xf32>) -> tensor<32x32xf32>
    %5 = stablehlo.add %3, %4 : tensor<32x32xf32>
    %6 = stablehlo.slice %0 [1:33, 2:34] : (tensor<34x34xf32>) -> tensor<32x32xf32>
    %7 = stablehlo.add %5, %6 : tensor<32x32xf32>
    %8 = stablehlo.slice %0 [1:33, 1:33] : (tensor<34x34xf32>) -> tensor<32x32xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %10 = stablehlo.multiply %9, %8 : tensor<32x32xf32>
    %11 = stablehlo.subtract %7, %10 : tensor<32x32xf32>
    return %11 : tensor<32x32xf32>
  }
  func.func private @_pad(%arg0: tensor<32x32xf32>, %arg1: tensor<i32>) -> tensor<34x34xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 1], high = [1, 1], interior = [0, 0] : (tensor<32x32xf32>, tensor<f32>) -> tensor<34x34xf32>
    return %1 : tensor<34x34xf32>
  }
}
