module @jit_box_3x3 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x8x8xf32>) -> (tensor<2x8x8xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<2x8x8xf32>, tensor<i32>) -> tensor<2x10x10xf32>
    %1 = stablehlo.slice %0 [0:2, 0:8, 0:8] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x8x8xf32>
    %3 = stablehlo.add %2, %1 : tensor<2x8x8xf32>
    %4 = stablehlo.slice %0 [0:2, 0:8, 1:9] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %5 = stablehlo.add %3, %4 : tensor<2x8x8xf32>
    %6 = stablehlo.slice %0 [0:2, 0:8, 2:10] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %7 = stablehlo.add %5, %6 : tensor<2x8x8xf32>
    %8 = stablehlo.slice %0 [0:2, 1:9, 0:8] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %9 = stablehlo.add %7, %8 : tensor<2x8x8xf32>
    %10 = stablehlo.slice %0 [0:2, 1:9, 1:9] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %11 = stablehlo.add %9, %10 : tensor<2x8x8xf32>
    %12 = stablehlo.slice %0 [0:2, 1:9, 2:10] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %13 = stablehlo.add %11, %12 : tensor<2x8x8xf32>
    %14 = stablehlo.slice %0 [0:2, 2:10, 0:8] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %15 = stablehlo.add %13, %14 : tensor<2x8x8xf32>
    %16 = stablehlo.slice %0 [0:2, 2:10, 1:9] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %17 = stablehlo.add %15, %16 : tensor<2x8x8xf32>
    %18 = stablehlo.slice %0 [0:2, 2:10, 2:10] : (tensor<2x10x10xf32>) -> tensor<2x8x8xf32>
    %19 = stablehlo.add %17, %18 : tensor<2x8x8xf32>
    %cst_0 = stablehlo.constant dense<9.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x8x8xf32>
    %21 = stablehlo.divide %19, %20 : tensor<2x8x8xf32>
    return %21 : tensor<2x8x8xf32>
  }
  func.func private @_pad(%arg0: tensor<2x8x8xf32>, %arg1: tensor<i32>) -> tensor<2x10x10xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1, 1], high = [0, 1, 1], interior = [0, 0, 0] : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x10x10xf32>
    return %1 : tensor<2x10x10xf32>
  }
}
