module @jit_central_difference attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<11xf32>) -> (tensor<11xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [1:11] : (tensor<11xf32>) -> tensor<10xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<10xf32>, tensor<i32>) -> tensor<11xf32>
    %2 = stablehlo.slice %arg0 [0:10] : (tensor<11xf32>) -> tensor<10xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = call @_pad_0(%2, %c_0) : (tensor<10xf32>, tensor<i32>) -> tensor<11xf32>
    %4 = stablehlo.subtract %1, %3 : tensor<11xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<11xf32>
    %6 = stablehlo.divide %4, %5 : tensor<11xf32>
    return %6 : tensor<11xf32>
  }
  func.func private @_pad(%arg0: tensor<10xf32>, %arg1: tensor<i32>) -> tensor<11xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0], high = [1], interior = [0] : (tensor<10xf32>, tensor<f32>) -> tensor<11xf32>
    return %1 : tensor<11xf32>
  }
  func.func private @_pad_0(%arg0: tensor<10xf32>, %arg1: tensor<i32>) -> tensor<11xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1], high = [0], interior = [0] : (tensor<10xf32>, tensor<f32>) -> tensor<11xf32>
    return %1 : tensor<11xf32>
  }
}
