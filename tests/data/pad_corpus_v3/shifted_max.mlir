module @jit_shifted_max attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32>, %arg1: tensor<5xf32>) -> (tensor<7xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = call @_pad(%arg0, %cst) : (tensor<5xf32>, tensor<f32>) -> tensor<7xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = call @_pad_0(%arg1, %cst_0) : (tensor<5xf32>, tensor<f32>) -> tensor<7xf32>
    %2 = stablehlo.maximum %0, %1 : tensor<7xf32>
    return %2 : tensor<7xf32>
  }
  func.func private @_pad(%arg0: tensor<5xf32>, %arg1: tensor<f32>) -> tensor<7xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [2], high = [0], interior = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<7xf32>
    return %1 : tensor<7xf32>
  }
  func.func private @_pad_0(%arg0: tensor<5xf32>, %arg1: tensor<f32>) -> tensor<7xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0], high = [2], interior = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<7xf32>
    return %1 : tensor<7xf32>
  }
}
