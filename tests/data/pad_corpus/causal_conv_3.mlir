module @jit_fn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16xf32>, %arg1: tensor<3xf32>) -> (tensor<2x16xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<2x16xf32>, tensor<i32>) -> tensor<2x18xf32>
    %1 = stablehlo.slice %arg1 [0:1] : (tensor<3xf32>) -> tensor<1xf32>
    %2 = stablehlo.reshape %1 : (tensor<1xf32>) -> tensor<f32>
    %3 = stablehlo.slice %0 [0:2, 0:16] : (tensor<2x18xf32>) -> tensor<2x16xf32>
    %4 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<2x16xf32>
    %5 = stablehlo.multiply %4, %3 : tensor<2x16xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x16xf32>
    %7 = stablehlo.add %6, %5 : tensor<2x16xf32>
    %8 = stablehlo.slice %arg1 [1:2] : (tensor<3xf32>) -> tensor<1xf32>
    %9 = stablehlo.reshape %8 : (tensor<1xf32>) -> tensor<f32>
    %10 = stablehlo.slice %0 [0:2, 1:17] : (tensor<2x18xf32>) -> tensor<2x16xf32>
    %11 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<2x16xf32>
    %12 = stablehlo.multiply %11, %10 : tensor<2x16xf32>
    %13 = stablehlo.add %7, %12 : tensor<2x16xf32>
    %14 = stablehlo.slice %arg1 [2:3] : (tensor<3xf32>) -> tensor<1xf32>
    %15 = stablehlo.reshape %14 : (tensor<1xf32>) -> tensor<f32>
    %16 = stablehlo.slice %0 [0:2, 2:18] : (tensor<2x18xf32>) -> tensor<2x16xf32>
    %17 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<f32>) -> tensor<2x16xf32>
    %18 = stablehlo.multiply %17, %16 : tensor<2x16xf32>
    %19 = stablehlo.add %13, %18 : tensor<2x16xf32>
    return %19 : tensor<2x16xf32>
  }
  func.func private @_pad(%arg0: tensor<2x16xf32>, %arg1: tensor<i32>) -> tensor<2x18xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 2], high = [0, 0], interior = [0, 0] : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x18xf32>
    return %1 : tensor<2x18xf32>
  }
}
