// irfft(rfft(x)) == x, asserted with expect_almost_eq; the passes remove both ffts under --optimize.
module @jit_testcase {
  func.func public @main() -> tensor<4x6xf64> {
    %0 = call @inputs() : () -> tensor<4x6xf64>
    %1 = stablehlo.fft %0, type = RFFT, length = [4, 6] : (tensor<4x6xf64>) -> tensor<4x4xcomplex<f64>>
    %2 = stablehlo.fft %1, type = IRFFT, length = [4, 6] : (tensor<4x4xcomplex<f64>>) -> tensor<4x6xf64>
    stablehlo.custom_call @check.expect_almost_eq(%2, %0) {has_side_effect = true} : (tensor<4x6xf64>, tensor<4x6xf64>) -> ()
    return %2 : tensor<4x6xf64>
  }
  func.func private @inputs() -> tensor<4x6xf64> {
    %cst = stablehlo.constant dense<[[1.0, -2.0, 3.5, 0.25, 8.0, -1.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [9.0, 8.0, 7.0, 6.0, 5.0, 4.0], [-1.5, 2.5, -3.5, 4.5, -5.5, 6.5]]> : tensor<4x6xf64>
    return %cst : tensor<4x6xf64>
  }
}
