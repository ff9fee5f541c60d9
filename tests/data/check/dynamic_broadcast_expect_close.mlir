// tensor<?x4xf32> values: a static constant converted to a dynamic type, its dimension read back
// with get_dimension_size and used to broadcast a row (dynamic_broadcast_in_dim).
module @jit_testcase {
  func.func public @main() {
    %c = stablehlo.constant dense<[[1.0, -2.0, 3.0, -4.0], [5.0, -6.0, 7.0, -8.0]]> : tensor<2x4xf32>
    %x = stablehlo.convert %c : (tensor<2x4xf32>) -> tensor<?x4xf32>
    %a = stablehlo.abs %x : tensor<?x4xf32>
    %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
    %four = stablehlo.constant dense<4> : tensor<1xi32>
    %shape = stablehlo.concatenate %n1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %row = stablehlo.constant dense<[0.5, 0.25, 0.125, 0.0625]> : tensor<4xf32>
    %b = stablehlo.dynamic_broadcast_in_dim %row, %shape, dims = [1] : (tensor<4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
    %r = stablehlo.multiply %a, %b : tensor<?x4xf32>
    %expected = stablehlo.constant dense<[[0.5, 0.5, 0.375, 0.25], [2.5, 1.5, 0.875, 0.5]]> : tensor<2x4xf32>
    stablehlo.custom_call @check.expect_close(%r, %expected) {has_side_effect = true} : (tensor<?x4xf32>, tensor<2x4xf32>) -> ()
    return
  }
}
