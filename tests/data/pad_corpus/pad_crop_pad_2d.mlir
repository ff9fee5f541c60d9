module @jit_pad_crop_pad_2d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>) -> (tensor<8x7xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<4x5xf32>, tensor<i32>) -> tensor<8x7xf32>
    %1 = stablehlo.slice %0 [1:7, 0:7] : (tensor<8x7xf32>) -> tensor<6x7xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %2 = call @_pad_0(%1, %c_0) : (tensor<6x7xf32>, tensor<i32>) -> tensor<8x7xf32>
    return %2 : tensor<8x7xf32>
  }
  func.func private @_pad(%arg0: tensor<4x5xf32>, %arg1: tensor<i32>) -> tensor<8x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [2, 1], high = [2, 1], interior = [0, 0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<8x7xf32>
    return %1 : tensor<8x7xf32>
  }
  func.func private @_pad_0(%arg0: tensor<6x7xf32>, %arg1: tensor<i32>) -> tensor<8x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<6x7xf32>, tensor<f32>) -> tensor<8x7xf32>
    return %1 : tensor<8x7xf32>
  }
}
