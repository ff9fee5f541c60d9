// A shape-polymorphic module as jax.export writes them: %n is the dimension variable (the size of
// %x's dynamic dimension). It has no check ops: `hloforge check` runs it with %n bound to a size.
module @jit_polymorphic {
  func.func public @main(%n: tensor<i64>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = stablehlo.reshape %n : (tensor<i64>) -> tensor<1xi64>
    %c = stablehlo.constant dense<4> : tensor<1xi64>
    %1 = stablehlo.concatenate %0, %c, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %2 = stablehlo.dynamic_iota %1, dim = 0 : (tensor<2xi64>) -> tensor<?x4xf32>
    %3 = stablehlo.abs %x : tensor<?x4xf32>
    %4 = stablehlo.add %3, %2 : tensor<?x4xf32>
    return %4 : tensor<?x4xf32>
  }
}
