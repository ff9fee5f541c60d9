module @jit_where_iota_2d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3xf32>, %arg1: tensor<6x7xf32>) -> (tensor<6x7xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<6x7xi32>
    %1 = stablehlo.iota dim = 1 : tensor<6x7xi32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<6x7xi32>
    %3 = stablehlo.compare GE, %0, %2, SIGNED : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<6x7xi32>
    %5 = stablehlo.compare LT, %0, %4, SIGNED : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi1>
    %6 = stablehlo.and %3, %5 : tensor<6x7xi1>
    %c_1 = stablehlo.constant dense<2> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<6x7xi32>
    %8 = stablehlo.compare GE, %1, %7, SIGNED : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi1>
    %9 = stablehlo.and %6, %8 : tensor<6x7xi1>
    %c_2 = stablehlo.constant dense<5> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<6x7xi32>
    %11 = stablehlo.compare LT, %1, %10, SIGNED : (tensor<6x7xi32>, tensor<6x7xi32>) -> tensor<6x7xi1>
    %12 = stablehlo.and %9, %11 : tensor<6x7xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %13 = call @_pad(%arg0, %c_3) : (tensor<3x3xf32>, tensor<i32>) -> tensor<6x7xf32>
    %14 = call @_where(%12, %13, %arg1) : (tensor<6x7xi1>, tensor<6x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
    return %14 : tensor<6x7xf32>
  }
  func.func private @_pad(%arg0: tensor<3x3xf32>, %arg1: tensor<i32>) -> tensor<6x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 2], high = [2, 2], interior = [0, 0] : (tensor<3x3xf32>, tensor<f32>) -> tensor<6x7xf32>
    return %1 : tensor<6x7xf32>
  }
  func.func private @_where(%arg0: tensor<6x7xi1>, %arg1: tensor<6x7xf32>, %arg2: tensor<6x7xf32>) -> tensor<6x7xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<6x7xi1>, tensor<6x7xf32>
    return %0 : tensor<6x7xf32>
  }
}
