// A failing test file: the expected value is wrong on purpose.
module @jit_testcase {
  func.func public @main() -> tensor<3xf32> {
    %cst = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %0 = stablehlo.multiply %cst, %cst : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<[1.0, 4.0, 10.0]> : tensor<3xf32>
    stablehlo.custom_call @check.expect_eq(%0, %cst_0) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
    return %0 : tensor<3xf32>
  }
}
