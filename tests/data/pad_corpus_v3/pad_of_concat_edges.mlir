module @jit_pad_of_concat_edges attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<4xf32>) -> (tensor<11xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<3xf32>, tensor<i32>) -> tensor<5xf32>
    %1 = stablehlo.concatenate %0, %arg1, dim = 0 : (tensor<5xf32>, tensor<4xf32>) -> tensor<9xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %2 = call @_pad_0(%1, %c_0) : (tensor<9xf32>, tensor<i32>) -> tensor<11xf32>
    return %2 : tensor<11xf32>
  }
  func.func private @_pad(%arg0: tensor<3xf32>, %arg1: tensor<i32>) -> tensor<5xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [2], high = [0], interior = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<5xf32>
    return %1 : tensor<5xf32>
  }
  func.func private @_pad_0(%arg0: tensor<9xf32>, %arg1: tensor<i32>) -> tensor<11xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1], high = [1], interior = [0] : (tensor<9xf32>, tensor<f32>) -> tensor<11xf32>
    return %1 : tensor<11xf32>
  }
}
