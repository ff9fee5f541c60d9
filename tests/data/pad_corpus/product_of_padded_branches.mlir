module @jit_product_of_padded_branches attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x6xf32>) -> (tensor<2x10xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.tanh %arg0 : tensor<2x6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<2x6xf32>, tensor<i32>) -> tensor<2x10xf32>
    %2 = stablehlo.multiply %arg0, %arg0 : tensor<2x6xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = call @_pad(%2, %c_0) : (tensor<2x6xf32>, tensor<i32>) -> tensor<2x10xf32>
    %4 = stablehlo.multiply %1, %3 : tensor<2x10xf32>
    return %4 : tensor<2x10xf32>
  }
  func.func private @_pad(%arg0: tensor<2x6xf32>, %arg1: tensor<i32>) -> tensor<2x10xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 2], high = [0, 2], interior = [0, 0] : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x10xf32>
    return %1 : tensor<2x10xf32>
  }
}
