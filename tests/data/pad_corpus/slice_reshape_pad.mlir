module @jit_slice_reshape_pad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<12xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:3, 1:4] : (tensor<3x4xf32>) -> tensor<3x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<3x3xf32>) -> tensor<9xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = call @_pad(%1, %c) : (tensor<9xf32>, tensor<i32>) -> tensor<12xf32>
    return %2 : tensor<12xf32>
  }
  func.func private @_pad(%arg0: tensor<9xf32>, %arg1: tensor<i32>) -> tensor<12xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0], high = [3], interior = [0] : (tensor<9xf32>, tensor<f32>) -> tensor<12xf32>
    return %1 : tensor<12xf32>
  }
}
