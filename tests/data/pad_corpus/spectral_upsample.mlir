module @jit_spectral_upsample attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16xcomplex<f32>>) -> (tensor<2x32xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<2x16xcomplex<f32>>) -> tensor<2x16xcomplex<f32>>
    %1 = stablehlo.slice %0 [0:2, 0:8] : (tensor<2x16xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<2x16xcomplex<f32>>
    %3 = stablehlo.slice %0 [0:2, 8:16] : (tensor<2x16xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>
    %4 = stablehlo.concatenate %1, %2, %3, dim = 1 : (tensor<2x8xcomplex<f32>>, tensor<2x16xcomplex<f32>>, tensor<2x8xcomplex<f32>>) -> tensor<2x32xcomplex<f32>>
    %5 = call @fft_0(%4) : (tensor<2x32xcomplex<f32>>) -> tensor<2x32xcomplex<f32>>
    %6 = stablehlo.real %5 : (tensor<2x32xcomplex<f32>>) -> tensor<2x32xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x32xf32>
    %8 = stablehlo.multiply %6, %7 : tensor<2x32xf32>
    return %8 : tensor<2x32xf32>
  }
  func.func private @fft(%arg0: tensor<2x16xcomplex<f32>>) -> tensor<2x16xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = FFT, length = [16] : (tensor<2x16xcomplex<f32>>) -> tensor<2x16xcomplex<f32>>
    return %0 : tensor<2x16xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<2x32xcomplex<f32>>) -> tensor<2x32xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = IFFT, length = [32] : (tensor<2x32xcomplex<f32>>) -> tensor<2x32xcomplex<f32>>
    return %0 : tensor<2x32xcomplex<f32>>
  }
}
