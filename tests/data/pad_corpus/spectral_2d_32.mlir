module @jit_fn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x3x32x32xf32>, %arg1: tensor<2x3x3x8x8xcomplex<f32>>) -> (tensor<1x3x32x32xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x17xcomplex<f32>>
    %1 = stablehlo.slice %0 [0:1, 0:3, 0:8, 0:8] : (tensor<1x3x32x17xcomplex<f32>>) -> tensor<1x3x8x8xcomplex<f32>>
    %2 = stablehlo.slice %arg1 [0:1, 0:3, 0:3, 0:8, 0:8] : (tensor<2x3x3x8x8xcomplex<f32>>) -> tensor<1x3x3x8x8xcomplex<f32>>
    %3 = stablehlo.reshape %2 : (tensor<1x3x3x8x8xcomplex<f32>>) -> tensor<3x3x8x8xcomplex<f32>>
    %4 = stablehlo.dot_general %3, %1, batching_dims = [2, 3] x [2, 3], contracting_dims = [0] x [1], precision = [DEFAULT, DEFAULT] : (tensor<3x3x8x8xcomplex<f32>>, tensor<1x3x8x8xcomplex<f32>>) -> tensor<8x8x3x1xcomplex<f32>>
    %5 = stablehlo.transpose %4, dims = [3, 2, 0, 1] : (tensor<8x8x3x1xcomplex<f32>>) -> tensor<1x3x8x8xcomplex<f32>>
    %6 = stablehlo.slice %0 [0:1, 0:3, 24:32, 0:8] : (tensor<1x3x32x17xcomplex<f32>>) -> tensor<1x3x8x8xcomplex<f32>>
    %7 = stablehlo.slice %arg1 [1:2, 0:3, 0:3, 0:8, 0:8] : (tensor<2x3x3x8x8xcomplex<f32>>) -> tensor<1x3x3x8x8xcomplex<f32>>
    %8 = stablehlo.reshape %7 : (tensor<1x3x3x8x8xcomplex<f32>>) -> tensor<3x3x8x8xcomplex<f32>>
    %9 = stablehlo.dot_general %8, %6, batching_dims = [2, 3] x [2, 3], contracting_dims = [0] x [1], precision = [DEFAULT, DEFAULT] : (tensor<3x3x8x8xcomplex<f32>>, tensor<1x3x8x8xcomplex<f32>>) -> tensor<8x8x3x1xcomplex<f32>>
    %10 = stablehlo.transpose %9, dims = [3, 2, 0, 1] : (tensor<8x8x3x1xcomplex<f32>>) -> tensor<1x3x8x8xcomplex<f32>>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %11 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<1x3x16x8xcomplex<f32>>
    %12 = stablehlo.concatenate %5, %11, %10, dim = 2 : (tensor<1x3x8x8xcomplex<f32>>, tensor<1x3x16x8xcomplex<f32>>, tensor<1x3x8x8xcomplex<f32>>) -> tensor<1x3x32x8xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %13 = call @_pad(%12, %c) : (tensor<1x3x32x8xcomplex<f32>>, tensor<i32>) -> tensor<1x3x32x17xcomplex<f32>>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %14 = call @_pad_0(%13, %c_0) : (tensor<1x3x32x17xcomplex<f32>>, tensor<i32>) -> tensor<1x3x32x17xcomplex<f32>>
    %15 = call @fft_1(%14) : (tensor<1x3x32x17xcomplex<f32>>) -> tensor<1x3x32x32xf32>
    return %15 : tensor<1x3x32x32xf32>
  }
  func.func private @fft(%arg0: tensor<1x3x32x32xf32>) -> tensor<1x3x32x17xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [32, 32] : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x17xcomplex<f32>>
    return %0 : tensor<1x3x32x17xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<1x3x32x8xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<1x3x32x17xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0, 0], high = [0, 0, 0, 9], interior = [0, 0, 0, 0] : (tensor<1x3x32x8xcomplex<f32>>, tensor<complex<f32>>) -> tensor<1x3x32x17xcomplex<f32>>
    return %1 : tensor<1x3x32x17xcomplex<f32>>
  }
  func.func private @_pad_0(%arg0: tensor<1x3x32x17xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<1x3x32x17xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<1x3x32x17xcomplex<f32>>, tensor<complex<f32>>) -> tensor<1x3x32x17xcomplex<f32>>
    return %1 : tensor<1x3x32x17xcomplex<f32>>
  }
  func.func private @fft_1(%arg0: tensor<1x3x32x17xcomplex<f32>>) -> tensor<1x3x32x32xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [32, 32] : (tensor<1x3x32x17xcomplex<f32>>) -> tensor<1x3x32x32xf32>
    return %0 : tensor<1x3x32x32xf32>
  }
}
