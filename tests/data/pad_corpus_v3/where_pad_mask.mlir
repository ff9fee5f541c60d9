module @jit_where_pad_mask attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf32>, %arg1: tensor<6x6xf32>) -> (tensor<6x6xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<true> : tensor<i1>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<4x4xi1>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c_0) : (tensor<4x4xi1>, tensor<i32>) -> tensor<6x6xi1>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %2 = call @_pad_0(%arg0, %c_1) : (tensor<4x4xf32>, tensor<i32>) -> tensor<6x6xf32>
    %3 = call @_where(%1, %2, %arg1) : (tensor<6x6xi1>, tensor<6x6xf32>, tensor<6x6xf32>) -> tensor<6x6xf32>
    return %3 : tensor<6x6xf32>
  }
  func.func private @_pad(%arg0: tensor<4x4xi1>, %arg1: tensor<i32>) -> tensor<6x6xi1> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %1 = stablehlo.compare NE, %arg1, %0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.convert %1 : tensor<i1>
    %3 = stablehlo.pad %arg0, %2, low = [1, 1], high = [1, 1], interior = [0, 0] : (tensor<4x4xi1>, tensor<i1>) -> tensor<6x6xi1>
    return %3 : tensor<6x6xi1>
  }
  func.func private @_pad_0(%arg0: tensor<4x4xf32>, %arg1: tensor<i32>) -> tensor<6x6xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 1], high = [1, 1], interior = [0, 0] : (tensor<4x4xf32>, tensor<f32>) -> tensor<6x6xf32>
    return %1 : tensor<6x6xf32>
  }
  func.func private @_where(%arg0: tensor<6x6xi1>, %arg1: tensor<6x6xf32>, %arg2: tensor<6x6xf32>) -> tensor<6x6xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<6x6xi1>, tensor<6x6xf32>
    return %0 : tensor<6x6xf32>
  }
}
