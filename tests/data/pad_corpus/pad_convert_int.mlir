module @jit_pad_convert_int attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3xf32>) -> (tensor<7x7xi32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x3xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<3x3xf32>
    %2 = stablehlo.convert %1 : (tensor<3x3xf32>) -> tensor<3x3xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3 = call @_pad(%2, %c) : (tensor<3x3xi32>, tensor<i32>) -> tensor<7x7xi32>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<7x7xi32>
    %5 = stablehlo.multiply %3, %4 : tensor<7x7xi32>
    return %5 : tensor<7x7xi32>
  }
  func.func private @_pad(%arg0: tensor<3x3xi32>, %arg1: tensor<i32>) -> tensor<7x7xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.pad %arg0, %0, low = [2, 2], high = [2, 2], interior = [0, 0] : (tensor<3x3xi32>, tensor<i32>) -> tensor<7x7xi32>
    return %1 : tensor<7x7xi32>
  }
}
