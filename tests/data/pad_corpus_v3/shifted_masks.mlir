module @jit_shifted_masks attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>, %arg1: tensor<6xf32>) -> (tensor<7xi1> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = call @_pad(%1, %c) : (tensor<6xi1>, tensor<i32>) -> tensor<7xi1>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %4 = stablehlo.compare GT, %arg1, %3, FLOAT : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = call @_pad_0(%4, %c_1) : (tensor<6xi1>, tensor<i32>) -> tensor<7xi1>
    %6 = stablehlo.and %2, %5 : tensor<7xi1>
    return %6 : tensor<7xi1>
  }
  func.func private @_pad(%arg0: tensor<6xi1>, %arg1: tensor<i32>) -> tensor<7xi1> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %1 = stablehlo.compare NE, %arg1, %0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.convert %1 : tensor<i1>
    %3 = stablehlo.pad %arg0, %2, low = [1], high = [0], interior = [0] : (tensor<6xi1>, tensor<i1>) -> tensor<7xi1>
    return %3 : tensor<7xi1>
  }
  func.func private @_pad_0(%arg0: tensor<6xi1>, %arg1: tensor<i32>) -> tensor<7xi1> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %1 = stablehlo.compare NE, %arg1, %0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.convert %1 : tensor<i1>
    %3 = stablehlo.pad %arg0, %2, low = [0], high = [1], interior = [0] : (tensor<6xi1>, tensor<i1>) -> tensor<7xi1>
    return %3 : tensor<7xi1>
  }
}
