module @jit_zero_insert_upsample attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x5xf32>) -> (tensor<2x10xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [0, 0], high = [0, 1], interior = [0, 1] : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x10xf32>
    %1 = stablehlo.slice %0 [0:2, 0:9] : (tensor<2x10xf32>) -> tensor<2x9xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = call @_pad(%1, %c) : (tensor<2x9xf32>, tensor<i32>) -> tensor<2x10xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x10xf32>
    return %3 : tensor<2x10xf32>
  }
  func.func private @_pad(%arg0: tensor<2x9xf32>, %arg1: tensor<i32>) -> tensor<2x10xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<2x9xf32>, tensor<f32>) -> tensor<2x10xf32>
    return %1 : tensor<2x10xf32>
  }
}
