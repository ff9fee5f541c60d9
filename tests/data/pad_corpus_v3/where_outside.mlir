module @jit_where_outside attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4xf32>, %arg1: tensor<2x7xf32>) -> (tensor<2x7xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<7xi32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %2 = stablehlo.compare LT, %0, %1, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<7xi32>
    %4 = stablehlo.compare GE, %0, %3, SIGNED : (tensor<7xi32>, tensor<7xi32>) -> tensor<7xi1>
    %5 = stablehlo.or %2, %4 : tensor<7xi1>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %6 = call @_pad(%arg0, %c_1) : (tensor<2x4xf32>, tensor<i32>) -> tensor<2x7xf32>
    %7 = call @_where(%5, %arg1, %6) : (tensor<7xi1>, tensor<2x7xf32>, tensor<2x7xf32>) -> tensor<2x7xf32>
    return %7 : tensor<2x7xf32>
  }
  func.func private @_pad(%arg0: tensor<2x4xf32>, %arg1: tensor<i32>) -> tensor<2x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1], high = [0, 2], interior = [0, 0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x7xf32>
    return %1 : tensor<2x7xf32>
  }
  func.func private @_where(%arg0: tensor<7xi1>, %arg1: tensor<2x7xf32>, %arg2: tensor<2x7xf32>) -> tensor<2x7xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<7xi1>) -> tensor<2x7xi1>
    %1 = stablehlo.select %0, %arg1, %arg2 : tensor<2x7xi1>, tensor<2x7xf32>
    return %1 : tensor<2x7xf32>
  }
}
