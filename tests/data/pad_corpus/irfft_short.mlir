module @jit_irfft_short attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x9xcomplex<f32>>) -> (tensor<2x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:2, 0:5] : (tensor<2x9xcomplex<f32>>) -> tensor<2x5xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<2x5xcomplex<f32>>, tensor<i32>) -> tensor<2x5xcomplex<f32>>
    %2 = call @fft(%1) : (tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32>
    return %2 : tensor<2x8xf32>
  }
  func.func private @_pad(%arg0: tensor<2x5xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<2x5xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<2x5xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2x5xcomplex<f32>>
    return %1 : tensor<2x5xcomplex<f32>>
  }
  func.func private @fft(%arg0: tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [8] : (tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32>
    return %0 : tensor<2x8xf32>
  }
}
