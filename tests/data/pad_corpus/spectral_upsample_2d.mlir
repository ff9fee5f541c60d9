module @jit_spectral_upsample_2d attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x8x8xf32>) -> (tensor<1x8x16xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<1x8x8xf32>) -> tensor<1x8x5xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<1x8x5xcomplex<f32>>, tensor<i32>) -> tensor<1x16x9xcomplex<f32>>
    %2 = stablehlo.slice %1 [0:1, 0:8, 0:9] : (tensor<1x16x9xcomplex<f32>>) -> tensor<1x8x9xcomplex<f32>>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = call @_pad_0(%2, %c_0) : (tensor<1x8x9xcomplex<f32>>, tensor<i32>) -> tensor<1x8x9xcomplex<f32>>
    %4 = call @fft_1(%3) : (tensor<1x8x9xcomplex<f32>>) -> tensor<1x8x16xf32>
    return %4 : tensor<1x8x16xf32>
  }
  func.func private @fft(%arg0: tensor<1x8x8xf32>) -> tensor<1x8x5xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [8, 8] : (tensor<1x8x8xf32>) -> tensor<1x8x5xcomplex<f32>>
    return %0 : tensor<1x8x5xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<1x8x5xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<1x16x9xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0], high = [0, 8, 4], interior = [0, 0, 0] : (tensor<1x8x5xcomplex<f32>>, tensor<complex<f32>>) -> tensor<1x16x9xcomplex<f32>>
    return %1 : tensor<1x16x9xcomplex<f32>>
  }
  func.func private @_pad_0(%arg0: tensor<1x8x9xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<1x8x9xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<1x8x9xcomplex<f32>>, tensor<complex<f32>>) -> tensor<1x8x9xcomplex<f32>>
    return %1 : tensor<1x8x9xcomplex<f32>>
  }
  func.func private @fft_1(%arg0: tensor<1x8x9xcomplex<f32>>) -> tensor<1x8x16xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [8, 16] : (tensor<1x8x9xcomplex<f32>>) -> tensor<1x8x16xf32>
    return %0 : tensor<1x8x16xf32>
  }
}
