module @jit_fft_conv attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x32xf32>, %arg1: tensor<5xf32>) -> (tensor<2x36xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<2x32xf32>, tensor<i32>) -> tensor<2x36xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad_0(%arg1, %c_0) : (tensor<5xf32>, tensor<i32>) -> tensor<36xf32>
    %2 = call @fft(%0) : (tensor<2x36xf32>) -> tensor<2x19xcomplex<f32>>
    %3 = call @fft_1(%1) : (tensor<36xf32>) -> tensor<19xcomplex<f32>>
    %4 = stablehlo.broadcast_in_dim %3, dims = [1] : (tensor<19xcomplex<f32>>) -> tensor<1x19xcomplex<f32>>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<1x19xcomplex<f32>>) -> tensor<2x19xcomplex<f32>>
    %6 = stablehlo.multiply %2, %5 : tensor<2x19xcomplex<f32>>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7 = call @_pad_2(%6, %c_1) : (tensor<2x19xcomplex<f32>>, tensor<i32>) -> tensor<2x19xcomplex<f32>>
    %8 = call @fft_3(%7) : (tensor<2x19xcomplex<f32>>) -> tensor<2x36xf32>
    return %8 : tensor<2x36xf32>
  }
  func.func private @_pad(%arg0: tensor<2x32xf32>, %arg1: tensor<i32>) -> tensor<2x36xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 4], interior = [0, 0] : (tensor<2x32xf32>, tensor<f32>) -> tensor<2x36xf32>
    return %1 : tensor<2x36xf32>
  }
  func.func private @_pad_0(%arg0: tensor<5xf32>, %arg1: tensor<i32>) -> tensor<36xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0], high = [31], interior = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<36xf32>
    return %1 : tensor<36xf32>
  }
  func.func private @fft(%arg0: tensor<2x36xf32>) -> tensor<2x19xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [36] : (tensor<2x36xf32>) -> tensor<2x19xcomplex<f32>>
    return %0 : tensor<2x19xcomplex<f32>>
  }
  func.func private @fft_1(%arg0: tensor<36xf32>) -> tensor<19xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [36] : (tensor<36xf32>) -> tensor<19xcomplex<f32>>
    return %0 : tensor<19xcomplex<f32>>
  }
  func.func private @_pad_2(%arg0: tensor<2x19xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<2x19xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<2x19xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2x19xcomplex<f32>>
    return %1 : tensor<2x19xcomplex<f32>>
  }
  func.func private @fft_3(%arg0: tensor<2x19xcomplex<f32>>) -> tensor<2x36xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [36] : (tensor<2x19xcomplex<f32>>) -> tensor<2x36xf32>
    return %0 : tensor<2x36xf32>
  }
}
