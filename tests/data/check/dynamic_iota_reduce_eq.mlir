// A dynamic 1-D iota (tensor<?xi32>) reduced to a scalar; check dialect syntax.
module @jit_testcase {
  func.func public @main() {
    %shape = stablehlo.constant dense<5> : tensor<1xi64>
    %iota = stablehlo.dynamic_iota %shape, dim = 0 : (tensor<1xi64>) -> tensor<?xi32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %sum = stablehlo.reduce(%iota init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<?xi32>, tensor<i32>) -> tensor<i32>
    check.expect_eq_const %sum, dense<10> : tensor<i32>
    return
  }
}
