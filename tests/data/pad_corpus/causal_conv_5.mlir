module @jit_fn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x24xf32>, %arg1: tensor<5xf32>) -> (tensor<1x24xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<1x24xf32>, tensor<i32>) -> tensor<1x28xf32>
    %1 = stablehlo.slice %arg1 [0:1] : (tensor<5xf32>) -> tensor<1xf32>
    %2 = stablehlo.reshape %1 : (tensor<1xf32>) -> tensor<f32>
    %3 = stablehlo.slice %0 [0:1, 0:24] : (tensor<1x28xf32>) -> tensor<1x24xf32>
    %4 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<1x24xf32>
    %5 = stablehlo.multiply %4, %3 : tensor<1x24xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x24xf32>
    %7 = stablehlo.add %6, %5 : tensor<1x24xf32>
    %8 = stablehlo.slice %arg1 [1:2] : (tensor<5xf32>) -> tensor<1xf32>
    %9 = stablehlo.reshape %8 : (tensor<1xf32>) -> tensor<f32>
    %10 = stablehlo.slice %0 [0:1, 1:25] : (tensor<1x28xf32>) -> tensor<1x24xf32>
    %11 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<1x24xf32>
    %12 = stablehlo.multiply %11, %10 : tensor<1x24xf32>
    %13 = stablehlo.add %7, %12 : tensor<1x24xf32>
    %14 = stablehlo.slice %arg1 [2:3] : (tensor<5xf32>) -> tensor<1xf32>
    %15 = stablehlo.reshape %14 : (tensor<1xf32>) -> tensor<f32>
    %16 = stablehlo.slice %0 [0:1, 2:26] : (tensor<1x28xf32>) -> tensor<1x24xf32>
    %17 = stablehlo.broadcast_in_dim %15, dims = [] : (tensor<f32>) -> tensor<1x24xf32>
    %18 = stablehlo.multiply %17, %16 : tensor<1x24xf32>
    %19 = stablehlo.add %13, %18 : tensor<1x24xf32>
    %20 = stablehlo.slice %arg1 [3:4] : (tensor<5xf32>) -> tensor<1xf32>
    %21 = stablehlo.reshape %20 : (tensor<1xf32>) -> tensor<f32>
    %22 = stablehlo.slice %0 [0:1, 3:27] : (tensor<1x28xf32>) -> tensor<1x24xf32>
    %23 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<f32>) -> tensor<1x24xf32>
    %24 = stablehlo.multiply %23, %22 : tensor<1x24xf32>
    %25 = stablehlo.add %19, %24 : tensor<1x24xf32>
    %26 = stablehlo.slice %arg1 [4:5] : (tensor<5xf32>) -> tensor<1xf32>
    %27 = stablehlo.reshape %26 : (tensor<1xf32>) -> tensor<f32>
    %28 = stablehlo.slice %0 [0:1, 4:28] : (tensor<1x28xf32>) -> tensor<1x24xf32>
    %29 = stablehlo.broadcast_in_dim %27, dims = [] : (tensor<f32>) -> tensor<1x24xf32>
    %30 = stablehlo.multiply %29, %28 : tensor<1x24xf32>
    %31 = stablehlo.add %25, %30 : tensor<1x24xf32>
    return %31 : tensor<1x24xf32>
  }
  func.func private @_pad(%arg0: tensor<1x24xf32>, %arg1: tensor<i32>) -> tensor<1x28xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 4], high = [0, 0], interior = [0, 0] : (tensor<1x24xf32>, tensor<f32>) -> tensor<1x28xf32>
    return %1 : tensor<1x28xf32>
  }
}
