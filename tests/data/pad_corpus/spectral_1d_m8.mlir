module @jit_fn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x2x32xf32>, %arg1: tensor<2x2x8xcomplex<f32>>) -> (tensor<2x2x32xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<2x2x32xf32>) -> tensor<2x2x17xcomplex<f32>>
    %1 = stablehlo.slice %0 [0:2, 0:2, 0:8] : (tensor<2x2x17xcomplex<f32>>) -> tensor<2x2x8xcomplex<f32>>
    %2 = stablehlo.dot_general %arg1, %1, batching_dims = [2] x [2], contracting_dims = [0] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x2x8xcomplex<f32>>, tensor<2x2x8xcomplex<f32>>) -> tensor<8x2x2xcomplex<f32>>
    %3 = stablehlo.transpose %2, dims = [2, 1, 0] : (tensor<8x2x2xcomplex<f32>>) -> tensor<2x2x8xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %4 = call @_pad(%3, %c) : (tensor<2x2x8xcomplex<f32>>, tensor<i32>) -> tensor<2x2x17xcomplex<f32>>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %5 = call @_pad_0(%4, %c_0) : (tensor<2x2x17xcomplex<f32>>, tensor<i32>) -> tensor<2x2x17xcomplex<f32>>
    %6 = call @fft_1(%5) : (tensor<2x2x17xcomplex<f32>>) -> tensor<2x2x32xf32>
    return %6 : tensor<2x2x32xf32>
  }
  func.func private @fft(%arg0: tensor<2x2x32xf32>) -> tensor<2x2x17xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [32] : (tensor<2x2x32xf32>) -> tensor<2x2x17xcomplex<f32>>
    return %0 : tensor<2x2x17xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<2x2x8xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<2x2x17xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0], high = [0, 0, 9], interior = [0, 0, 0] : (tensor<2x2x8xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2x2x17xcomplex<f32>>
    return %1 : tensor<2x2x17xcomplex<f32>>
  }
  func.func private @_pad_0(%arg0: tensor<2x2x17xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<2x2x17xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<2x2x17xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2x2x17xcomplex<f32>>
    return %1 : tensor<2x2x17xcomplex<f32>>
  }
  func.func private @fft_1(%arg0: tensor<2x2x17xcomplex<f32>>) -> tensor<2x2x32xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [32] : (tensor<2x2x17xcomplex<f32>>) -> tensor<2x2x32xf32>
    return %0 : tensor<2x2x32xf32>
  }
}
