// A dynamic result dimension (tensor<?x2xf32>) that shape refinement resolves from the constant
// shape operand of stablehlo.dynamic_reshape; old-style @check.eq.
module @jit_testcase {
  func.func public @main() -> tensor<i1> {
    %operand = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
    %shape = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
    %0 = stablehlo.dynamic_reshape %operand, %shape : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x2xf32>
    %expected = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
    %1 = stablehlo.custom_call @check.eq(%0, %expected) : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<i1>
    return %1 : tensor<i1>
  }
}
