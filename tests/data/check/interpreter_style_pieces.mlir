// hloforge's own test of StableHLO's interpreter-test conventions: pieces split at "// -----",
// several test functions per piece (no visibility = public), check ops in the custom syntax
// (over several lines, with comments, tolerance = ...), probes and prints.

func.func @sum_is_exact() {
  %a = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = stablehlo.add %a, %a : tensor<2x2xi32>
  check.expect_eq_const %b, dense<[[2, 4],
                                   [6, 8]]> : tensor<2x2xi32>  // a constant over two lines
  check.expect_eq %b, %b : tensor<2x2xi32>
  func.return
}

func.func public @halves_within_tolerance() {
  %a = stablehlo.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %h = stablehlo.constant dense<0.5> : tensor<2xf32>
  %b = stablehlo.multiply %a, %h : tensor<2xf32>
  check.expect_almost_eq_const %b, dense<[0.5001, 1.5]> : tensor<2xf32>, tolerance = 0.001
  check.expect_almost_eq_const %b, dense<[0.52, 1.5]> : tensor<2xf32> {tolerance = 0.05 : f64}
  func.return
}

func.func private @never_run_alone() {
  func.return
}

// -----

module @wrapped {
  func.func @square(%x: tensor<complex<f32>>) -> tensor<complex<f32>> {
    %y = stablehlo.multiply %x, %x : tensor<complex<f32>>
    func.return %y : tensor<complex<f32>>
  }
  func.func @complex_square() {
    %a = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
    %b = func.call @square(%a) : (tensor<complex<f32>>) -> tensor<complex<f32>>
    %e = stablehlo.constant dense<(-3.0, 4.0)> : tensor<complex<f32>>
    check.expect_close %b, %e, max_ulp_difference = 0 : tensor<complex<f32>>, tensor<complex<f32>>
    check.expect_eq %b, %e : tensor<complex<f32>>
    check.expect_almost_eq_const %b, dense<(-3.00001, 4.0)> : tensor<complex<f32>>
    func.return
  }
}

// -----

func.func @one_ulp_apart() {
  %a = stablehlo.constant dense<1.0> : tensor<f16>
  %b = stablehlo.constant dense<1.0009765625> : tensor<f16>
  check.expect_close %a, %b, max_ulp_difference = 1, min_ulp_difference = 1 : tensor<f16>, tensor<f16>
  check.expect_almost_eq %a, %b, tolerance = 0.001 : tensor<f16>
  func.return
}

// -----

func.func @probed_and_printed() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %b = interpreter.probe %a, probe_id = "value" : tensor<2xi64>
  interpreter.print %b : tensor<2xi64>
  check.expect_serialized_eq %b, probe_id = "value" : tensor<2xi64>
  check.expect_serialized_eq %a,
    probe_id = "value",
    iter = 0 : tensor<2xi64>
  func.return
}

// -----

func.func @narrow_element_types() {
  %i4 = stablehlo.constant dense<[-8, 3, 7]> : tensor<3xi4>
  %ui2 = stablehlo.constant dense<[0, 1, 3]> : tensor<3xui2>
  %f8 = stablehlo.constant dense<[0.5, -1.0, 448.0]> : tensor<3xf8E4M3FN>
  %f4 = stablehlo.constant dense<[0.5, -6.0, 1.5]> : tensor<3xf4E2M1FN>
  %i4n = stablehlo.negate %i4 : tensor<3xi4>
  %f8n = stablehlo.negate %f8 : tensor<3xf8E4M3FN>
  check.expect_eq_const %i4n, dense<[-8, -3, -7]> : tensor<3xi4>
  check.expect_eq_const %ui2, dense<[0, 1, 3]> : tensor<3xui2>
  check.expect_almost_eq_const %f8n, dense<[-0.5, 1.0, -448.0]> : tensor<3xf8E4M3FN>
  check.expect_close %f4, %f4, max_ulp_difference = 0 : tensor<3xf4E2M1FN>, tensor<3xf4E2M1FN>
  func.return
}
