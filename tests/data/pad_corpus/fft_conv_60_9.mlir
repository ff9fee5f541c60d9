module @jit_fft_conv attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x60xf32>, %arg1: tensor<9xf32>) -> (tensor<1x68xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<1x60xf32>, tensor<i32>) -> tensor<1x68xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad_0(%arg1, %c_0) : (tensor<9xf32>, tensor<i32>) -> tensor<68xf32>
    %2 = call @fft(%0) : (tensor<1x68xf32>) -> tensor<1x35xcomplex<f32>>
    %3 = call @fft_1(%1) : (tensor<68xf32>) -> tensor<35xcomplex<f32>>
    %4 = stablehlo.broadcast_in_dim %3, dims = [1] : (tensor<35xcomplex<f32>>) -> tensor<1x35xcomplex<f32>>
    %5 = stablehlo.multiply %2, %4 : tensor<1x35xcomplex<f32>>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %6 = call @_pad_2(%5, %c_1) : (tensor<1x35xcomplex<f32>>, tensor<i32>) -> tensor<1x35xcomplex<f32>>
    %7 = call @fft_3(%6) : (tensor<1x35xcomplex<f32>>) -> tensor<1x68xf32>
    return %7 : tensor<1x68xf32>
  }
  func.func private @_pad(%arg0: tensor<1x60xf32>, %arg1: tensor<i32>) -> tensor<1x68xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 8], interior = [0, 0] : (tensor<1x60xf32>, tensor<f32>) -> tensor<1x68xf32>
    return %1 : tensor<1x68xf32>
  }
  func.func private @_pad_0(%arg0: tensor<9xf32>, %arg1: tensor<i32>) -> tensor<68xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0], high = [59], interior = [0] : (tensor<9xf32>, tensor<f32>) -> tensor<68xf32>
    return %1 : tensor<68xf32>
  }
  func.func private @fft(%arg0: tensor<1x68xf32>) -> tensor<1x35xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [68] : (tensor<1x68xf32>) -> tensor<1x35xcomplex<f32>>
    return %0 : tensor<1x35xcomplex<f32>>
  }
  func.func private @fft_1(%arg0: tensor<68xf32>) -> tensor<35xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [68] : (tensor<68xf32>) -> tensor<35xcomplex<f32>>
    return %0 : tensor<35xcomplex<f32>>
  }
  func.func private @_pad_2(%arg0: tensor<1x35xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<1x35xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<1x35xcomplex<f32>>, tensor<complex<f32>>) -> tensor<1x35xcomplex<f32>>
    return %1 : tensor<1x35xcomplex<f32>>
  }
  func.func private @fft_3(%arg0: tensor<1x35xcomplex<f32>>) -> tensor<1x68xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [68] : (tensor<1x35xcomplex<f32>>) -> tensor<1x68xf32>
    return %0 : tensor<1x68xf32>
  }
}
