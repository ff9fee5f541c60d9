module @jit_backward_difference attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x9xf32>) -> (tensor<4x9xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:4, 0:8] : (tensor<4x9xf32>) -> tensor<4x8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<4x8xf32>, tensor<i32>) -> tensor<4x9xf32>
    %2 = stablehlo.subtract %arg0, %1 : tensor<4x9xf32>
    return %2 : tensor<4x9xf32>
  }
  func.func private @_pad(%arg0: tensor<4x8xf32>, %arg1: tensor<i32>) -> tensor<4x9xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x9xf32>
    return %1 : tensor<4x9xf32>
  }
}
