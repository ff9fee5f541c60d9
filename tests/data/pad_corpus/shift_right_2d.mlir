module @jit_shift_right_2d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x5xf32>) -> (tensor<6x5xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:5, 0:5] : (tensor<6x5xf32>) -> tensor<5x5xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<5x5xf32>, tensor<i32>) -> tensor<6x5xf32>
    return %1 : tensor<6x5xf32>
  }
  func.func private @_pad(%arg0: tensor<5x5xf32>, %arg1: tensor<i32>) -> tensor<6x5xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [0, 0], interior = [0, 0] : (tensor<5x5xf32>, tensor<f32>) -> tensor<6x5xf32>
    return %1 : tensor<6x5xf32>
  }
}
