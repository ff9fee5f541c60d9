// StableHLO testdata style with dynamic types through private functions (func.call), then
// real_dynamic_slice and dynamic_pad with constant bounds: all refined from the constants.
module @jit_testcase {
  func.func public @main() {
    %0 = call @inputs() : () -> tensor<?x4xf32>
    %1 = call @double(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %start = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
    %limit = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
    %stride = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %2 = stablehlo.real_dynamic_slice %1, %start, %limit, %stride : (tensor<?x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
    %lo = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
    %hi = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
    %in = stablehlo.constant dense<[0, 0]> : tensor<2xi64>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %3 = stablehlo.dynamic_pad %2, %z, %lo, %hi, %in : (tensor<?x?xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
    %e = call @expected() : () -> tensor<3x3xf32>
    stablehlo.custom_call @check.expect_eq(%3, %e) {has_side_effect = true} : (tensor<?x?xf32>, tensor<3x3xf32>) -> ()
    return
  }
  func.func private @inputs() -> tensor<?x4xf32> {
    %c = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
    %d = stablehlo.convert %c : (tensor<3x4xf32>) -> tensor<?x4xf32>
    return %d : tensor<?x4xf32>
  }
  func.func private @double(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = stablehlo.add %x, %x : tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
  func.func private @expected() -> tensor<3x3xf32> {
    %c = stablehlo.constant dense<[[0.0, 0.0, 0.0], [10.0, 14.0, 0.0], [18.0, 22.0, 0.0]]> : tensor<3x3xf32>
    return %c : tensor<3x3xf32>
  }
}
