// StableHLO testdata convention: constants in private functions, assertions as custom_calls.
module @jit_testcase {
  func.func public @main() -> (tensor<2x3xf32> {jax.result_info = ""}) {
    %0:2 = call @inputs() : () -> (tensor<2x3xf32>, tensor<2x3xf32>)
    %1 = call @expected() : () -> tensor<2x3xf32>
    %2 = stablehlo.add %0#0, %0#1 : tensor<2x3xf32>
    stablehlo.custom_call @check.expect_close(%2, %1) {has_side_effect = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()
    return %2 : tensor<2x3xf32>
  }
  func.func private @inputs() -> (tensor<2x3xf32>, tensor<2x3xf32>) {
    %cst = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
    %cst_0 = stablehlo.constant dense<[[0.5, 0.25, -3.0], [1.0e-3, 2.0, 0.0]]> : tensor<2x3xf32>
    return %cst, %cst_0 : tensor<2x3xf32>, tensor<2x3xf32>
  }
  func.func private @expected() -> tensor<2x3xf32> {
    %cst = stablehlo.constant dense<[[1.5, 2.25, 0.0], [4.001, 7.0, 6.0]]> : tensor<2x3xf32>
    return %cst : tensor<2x3xf32>
  }
}
