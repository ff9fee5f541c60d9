// hloforge's own test of collective_broadcast_as_all_reduce (passes/spec_semantics.py) through hloforge
// check: the spec's process groups, sources and zeros, on several element types; values the spec gives.

module @cross_replica_four_replicas {
  func.func @broadcast(%c: tensor<2xcomplex<f32>>, %p: tensor<3xi1>, %h: tensor<2xbf16>)
      -> (tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>) {
    %0 = "stablehlo.collective_broadcast"(%c) {replica_groups = dense<[[3, 1]]> : tensor<1x2xi64>}
      : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
    %1 = "stablehlo.collective_broadcast"(%p) {replica_groups = dense<[[3, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>} : (tensor<3xi1>) -> tensor<3xi1>
    %2 = "stablehlo.collective_broadcast"(%h) {replica_groups = dense<[[3, 1]]> : tensor<1x2xi64>}
      : (tensor<2xbf16>) -> tensor<2xbf16>
    func.return %0, %1, %2 : tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>
  }
  func.func @main() {
    %c0 = stablehlo.constant dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>
    %c3 = stablehlo.constant dense<[(-0.0, 1.401298464324817e-45), (5.5, -6.5)]> : tensor<2xcomplex<f32>>
    %p0 = stablehlo.constant dense<[true, true, true]> : tensor<3xi1>
    %p3 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
    %h0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xbf16>
    %h3 = stablehlo.constant dense<[-0.0, 0x0001]> : tensor<2xbf16>
    %r:12 = "interpreter.run_parallel"(%c0, %p0, %h0, %c0, %p0, %h0, %c0, %p0, %h0, %c3, %p3, %h3) {
      programs = [[@broadcast], [@broadcast], [@broadcast], [@broadcast]]
    } : (tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>, tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>,
         tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>, tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>)
      -> (tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>, tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>,
          tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>, tensor<2xcomplex<f32>>, tensor<3xi1>, tensor<2xbf16>)
    check.expect_eq_const %r#0, dense<(0.0, 0.0)> : tensor<2xcomplex<f32>>
    check.expect_eq_const %r#1, dense<false> : tensor<3xi1>
    check.expect_eq_const %r#2, dense<0.0> : tensor<2xbf16>
    check.expect_eq_const %r#3, dense<[(-0.0, 1.401298464324817e-45), (5.5, -6.5)]> : tensor<2xcomplex<f32>>
    check.expect_eq_const %r#4, dense<[true, false, true]> : tensor<3xi1>
    check.expect_eq_const %r#5, dense<[-0.0, 0x0001]> : tensor<2xbf16>
    check.expect_eq_const %r#6, dense<(0.0, 0.0)> : tensor<2xcomplex<f32>>
    check.expect_eq_const %r#7, dense<false> : tensor<3xi1>
    check.expect_eq_const %r#8, dense<0.0> : tensor<2xbf16>
    check.expect_eq_const %r#9, dense<[(-0.0, 1.401298464324817e-45), (5.5, -6.5)]> : tensor<2xcomplex<f32>>
    check.expect_eq_const %r#10, dense<[true, false, true]> : tensor<3xi1>
    check.expect_eq_const %r#11, dense<[-0.0, 0x0001]> : tensor<2xbf16>
    func.return
  }
}

// -----

module @cross_partition_two_by_two {
  func.func @broadcast(%x: tensor<2xf64>) -> tensor<2xf64> {
    %0 = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>} : (tensor<2xf64>) -> tensor<2xf64>
    func.return %0 : tensor<2xf64>
  }
  func.func @main() {
    %x00 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
    %x01 = stablehlo.constant dense<[-0.0, 0x0000000000000001]> : tensor<2xf64>
    %x10 = stablehlo.constant dense<[5.0, 6.0]> : tensor<2xf64>
    %x11 = stablehlo.constant dense<[7.0, 0x7FF0000000000000]> : tensor<2xf64>
    %r:4 = "interpreter.run_parallel"(%x00, %x01, %x10, %x11) {
      programs = [[@broadcast, @broadcast], [@broadcast, @broadcast]]
    } : (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>)
      -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>)
    check.expect_eq_const %r#0, dense<[-0.0, 0x0000000000000001]> : tensor<2xf64>
    check.expect_eq_const %r#1, dense<[-0.0, 0x0000000000000001]> : tensor<2xf64>
    check.expect_eq_const %r#2, dense<[7.0, 0x7FF0000000000000]> : tensor<2xf64>
    check.expect_eq_const %r#3, dense<[7.0, 0x7FF0000000000000]> : tensor<2xf64>
    func.return
  }
}
