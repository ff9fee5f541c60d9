// The older convention: @check.eq returns tensor<i1>, which @main returns.
module @jit_testcase {
  func.func public @main() -> tensor<i1> {
    %0:2 = call @inputs() : () -> (tensor<2x2xi32>, tensor<i32>)
    %1 = call @expected() : () -> tensor<3x5xi32>
    %2 = stablehlo.pad %0#0, %0#1, low = [1, 0], high = [0, 2], interior = [0, 1] : (tensor<2x2xi32>, tensor<i32>) -> tensor<3x5xi32>
    %3 = stablehlo.custom_call @check.eq(%2, %1) : (tensor<3x5xi32>, tensor<3x5xi32>) -> tensor<i1>
    return %3 : tensor<i1>
  }
  func.func private @inputs() -> (tensor<2x2xi32>, tensor<i32>) {
    %c = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
    %c_0 = stablehlo.constant dense<7> : tensor<i32>
    return %c, %c_0 : tensor<2x2xi32>, tensor<i32>
  }
  func.func private @expected() -> tensor<3x5xi32> {
    %c = stablehlo.constant dense<[[7, 7, 7, 7, 7], [1, 7, 2, 7, 7], [3, 7, 4, 7, 7]]> : tensor<3x5xi32>
    return %c : tensor<3x5xi32>
  }
}
