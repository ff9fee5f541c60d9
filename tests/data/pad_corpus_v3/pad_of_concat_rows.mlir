module @jit_pad_of_concat_rows attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<7x5xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg1, %c) : (tensor<2x3xf32>, tensor<i32>) -> tensor<4x3xf32>
    %1 = stablehlo.concatenate %arg0, %0, dim = 0 : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %2 = call @_pad_0(%1, %c_0) : (tensor<6x3xf32>, tensor<i32>) -> tensor<7x5xf32>
    return %2 : tensor<7x5xf32>
  }
  func.func private @_pad(%arg0: tensor<2x3xf32>, %arg1: tensor<i32>) -> tensor<4x3xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [2, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    return %1 : tensor<4x3xf32>
  }
  func.func private @_pad_0(%arg0: tensor<6x3xf32>, %arg1: tensor<i32>) -> tensor<7x5xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1], high = [1, 1], interior = [0, 0] : (tensor<6x3xf32>, tensor<f32>) -> tensor<7x5xf32>
    return %1 : tensor<7x5xf32>
  }
}
