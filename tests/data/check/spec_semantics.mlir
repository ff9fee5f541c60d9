// hloforge's own test of passes/spec_semantics.py through hloforge check: ops XLA:CPU computes
// otherwise than the StableHLO spec, on constants (XLA folds them); the expected values are the spec's.

func.func @spec_values() {
  %t = stablehlo.constant dense<[false, false, true, true]> : tensor<4xi1>
  %u = stablehlo.constant dense<[false, true, false, true]> : tensor<4xi1>
  %or = stablehlo.add %t, %u : tensor<4xi1>
  check.expect_eq_const %or, dense<[false, true, true, true]> : tensor<4xi1>
  %x = stablehlo.constant dense<[0x8001, 0x0001, 0x807F, 0x007F, -1.5, 0x0080, 0x8080]> : tensor<7xbf16>
  %ceil = stablehlo.ceil %x : tensor<7xbf16>
  check.expect_eq_const %ceil, dense<[-0.0, 1.0, -0.0, 1.0, -1.0, 1.0, -0.0]> : tensor<7xbf16>
  %floor = stablehlo.floor %x : tensor<7xbf16>
  check.expect_eq_const %floor, dense<[-1.0, 0.0, -1.0, 0.0, -2.0, 0.0, -1.0]> : tensor<7xbf16>
  %a = stablehlo.constant dense<[(0.0, 1.5), (1.401298464324817e-45, 0.0), (2.0, -1.0), (1.0, 3.0)]> : tensor<4xcomplex<f32>>
  %b = stablehlo.constant dense<[(-0.0, 2.5), (0.0, 5.0), (2.0, -3.0), (-1.0, 9.0)]> : tensor<4xcomplex<f32>>
  %max = stablehlo.maximum %a, %b : tensor<4xcomplex<f32>>
  check.expect_eq_const %max, dense<[(-0.0, 2.5), (1.401298464324817e-45, 0.0), (2.0, -1.0), (1.0, 3.0)]> : tensor<4xcomplex<f32>>
  %min = stablehlo.minimum %a, %b : tensor<4xcomplex<f32>>
  check.expect_eq_const %min, dense<[(0.0, 1.5), (0.0, 5.0), (2.0, -3.0), (-1.0, 9.0)]> : tensor<4xcomplex<f32>>
  %bools = stablehlo.constant dense<[[true, false, false, false, false, false, false, true],
                                     [false, true, true, true, true, true, true, false]]> : tensor<2x8xi1>
  %packed = stablehlo.bitcast_convert %bools : (tensor<2x8xi1>) -> tensor<2xui8>
  check.expect_eq_const %packed, dense<[129, 126]> : tensor<2xui8>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %unpacked = stablehlo.bitcast_convert %one : (tensor<f32>) -> tensor<32xi1>
  check.expect_eq_const %unpacked, dense<[false, false, false, false, false, false, false, false,
                                          false, false, false, false, false, false, false, false,
                                          false, false, false, false, false, false, false, true,
                                          true, true, true, true, true, true, false, false]> : tensor<32xi1>
  %z = stablehlo.constant dense<[(3.0, 4.0), (-8.0, 0.0)]> : tensor<2xcomplex<f64>>
  %cbrt = stablehlo.cbrt %z : tensor<2xcomplex<f64>>
  check.expect_almost_eq_const %cbrt, dense<[(1.6289371459221759, 0.5201745023045458), (1.0, 1.7320508075688772)]> : tensor<2xcomplex<f64>>
  %zs = stablehlo.constant dense<(0.0, 27.0)> : tensor<complex<f32>>
  %cbrts = stablehlo.cbrt %zs : tensor<complex<f32>>
  check.expect_almost_eq_const %cbrts, dense<(2.598076211353316, 1.5)> : tensor<complex<f32>>
  func.return
}
