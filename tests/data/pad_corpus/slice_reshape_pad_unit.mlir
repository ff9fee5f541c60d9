module @jit_slice_reshape_pad_unit attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x7xf32>) -> (tensor<1x7xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:1, 2:7] : (tensor<2x7xf32>) -> tensor<1x5xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x5xf32>) -> tensor<5xf32>
    %2 = stablehlo.reshape %1 : (tensor<5xf32>) -> tensor<1x5xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3 = call @_pad(%2, %c) : (tensor<1x5xf32>, tensor<i32>) -> tensor<1x7xf32>
    return %3 : tensor<1x7xf32>
  }
  func.func private @_pad(%arg0: tensor<1x5xf32>, %arg1: tensor<i32>) -> tensor<1x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 2], high = [0, 0], interior = [0, 0] : (tensor<1x5xf32>, tensor<f32>) -> tensor<1x7xf32>
    return %1 : tensor<1x7xf32>
  }
}
