module @jit_fn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x1x12x12x8xf32>, %arg1: tensor<4x3x3x3xcomplex<f32>>) -> (tensor<1x1x12x12x8xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<1x1x12x12x8xf32>) -> tensor<1x1x12x12x5xcomplex<f32>>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<1x1x12x12x5xcomplex<f32>>
    %2 = stablehlo.slice %0 [0:1, 0:1, 0:3, 0:3, 0:3] : (tensor<1x1x12x12x5xcomplex<f32>>) -> tensor<1x1x3x3x3xcomplex<f32>>
    %3 = stablehlo.slice %arg1 [0:1, 0:3, 0:3, 0:3] : (tensor<4x3x3x3xcomplex<f32>>) -> tensor<1x3x3x3xcomplex<f32>>
    %4 = stablehlo.reshape %3 : (tensor<1x3x3x3xcomplex<f32>>) -> tensor<3x3x3xcomplex<f32>>
    %5 = stablehlo.broadcast_in_dim %4, dims = [2, 3, 4] : (tensor<3x3x3xcomplex<f32>>) -> tensor<1x1x3x3x3xcomplex<f32>>
    %6 = stablehlo.multiply %2, %5 : tensor<1x1x3x3x3xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %10 = stablehlo.concatenate %7, %8, %9, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %11 = "stablehlo.scatter"(%1, %10, %6) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1, 2, 3, 4], scatter_dims_to_operand_dims = [2, 3, 4]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<complex<f32>>, %arg3: tensor<complex<f32>>):
      stablehlo.return %arg3 : tensor<complex<f32>>
    }) : (tensor<1x1x12x12x5xcomplex<f32>>, tensor<3xi32>, tensor<1x1x3x3x3xcomplex<f32>>) -> tensor<1x1x12x12x5xcomplex<f32>>
    %12 = stablehlo.slice %0 [0:1, 0:1, 0:3, 9:12, 0:3] : (tensor<1x1x12x12x5xcomplex<f32>>) -> tensor<1x1x3x3x3xcomplex<f32>>
    %13 = stablehlo.slice %arg1 [1:2, 0:3, 0:3, 0:3] : (tensor<4x3x3x3xcomplex<f32>>) -> tensor<1x3x3x3xcomplex<f32>>
    %14 = stablehlo.reshape %13 : (tensor<1x3x3x3xcomplex<f32>>) -> tensor<3x3x3xcomplex<f32>>
    %15 = stablehlo.broadcast_in_dim %14, dims = [2, 3, 4] : (tensor<3x3x3xcomplex<f32>>) -> tensor<1x1x3x3x3xcomplex<f32>>
    %16 = stablehlo.multiply %12, %15 : tensor<1x1x3x3x3xcomplex<f32>>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %17 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_3 = stablehlo.constant dense<9> : tensor<i32>
    %18 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %19 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %20 = stablehlo.concatenate %17, %18, %19, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %21 = "stablehlo.scatter"(%11, %20, %16) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1, 2, 3, 4], scatter_dims_to_operand_dims = [2, 3, 4]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<complex<f32>>, %arg3: tensor<complex<f32>>):
      stablehlo.return %arg3 : tensor<complex<f32>>
    }) : (tensor<1x1x12x12x5xcomplex<f32>>, tensor<3xi32>, tensor<1x1x3x3x3xcomplex<f32>>) -> tensor<1x1x12x12x5xcomplex<f32>>
    %22 = stablehlo.slice %0 [0:1, 0:1, 9:12, 0:3, 0:3] : (tensor<1x1x12x12x5xcomplex<f32>>) -> tensor<1x1x3x3x3xcomplex<f32>>
    %23 = stablehlo.slice %arg1 [2:3, 0:3, 0:3, 0:3] : (tensor<4x3x3x3xcomplex<f32>>) -> tensor<1x3x3x3xcomplex<f32>>
    %24 = stablehlo.reshape %23 : (tensor<1x3x3x3xcomplex<f32>>) -> tensor<3x3x3xcomplex<f32>>
    %25 = stablehlo.broadcast_in_dim %24, dims = [2, 3, 4] : (tensor<3x3x3xcomplex<f32>>) -> tensor<1x1x3x3x3xcomplex<f32>>
    %26 = stablehlo.multiply %22, %25 : tensor<1x1x3x3x3xcomplex<f32>>
    %c_5 = stablehlo.constant dense<9> : tensor<i32>
    %27 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %28 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %29 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %30 = stablehlo.concatenate %27, %28, %29, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %31 = "stablehlo.scatter"(%21, %30, %26) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1, 2, 3, 4], scatter_dims_to_operand_dims = [2, 3, 4]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<complex<f32>>, %arg3: tensor<complex<f32>>):
      stablehlo.return %arg3 : tensor<complex<f32>>
    }) : (tensor<1x1x12x12x5xcomplex<f32>>, tensor<3xi32>, tensor<1x1x3x3x3xcomplex<f32>>) -> tensor<1x1x12x12x5xcomplex<f32>>
    %32 = stablehlo.slice %0 [0:1, 0:1, 9:12, 9:12, 0:3] : (tensor<1x1x12x12x5xcomplex<f32>>) -> tensor<1x1x3x3x3xcomplex<f32>>
    %33 = stablehlo.slice %arg1 [3:4, 0:3, 0:3, 0:3] : (tensor<4x3x3x3xcomplex<f32>>) -> tensor<1x3x3x3xcomplex<f32>>
    %34 = stablehlo.reshape %33 : (tensor<1x3x3x3xcomplex<f32>>) -> tensor<3x3x3xcomplex<f32>>
    %35 = stablehlo.broadcast_in_dim %34, dims = [2, 3, 4] : (tensor<3x3x3xcomplex<f32>>) -> tensor<1x1x3x3x3xcomplex<f32>>
    %36 = stablehlo.multiply %32, %35 : tensor<1x1x3x3x3xcomplex<f32>>
    %c_8 = stablehlo.constant dense<9> : tensor<i32>
    %37 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_9 = stablehlo.constant dense<9> : tensor<i32>
    %38 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_10 = stablehlo.constant dense<0> : tensor<i32>
    %39 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %40 = stablehlo.concatenate %37, %38, %39, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %41 = "stablehlo.scatter"(%31, %40, %36) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1, 2, 3, 4], scatter_dims_to_operand_dims = [2, 3, 4]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<complex<f32>>, %arg3: tensor<complex<f32>>):
      stablehlo.return %arg3 : tensor<complex<f32>>
    }) : (tensor<1x1x12x12x5xcomplex<f32>>, tensor<3xi32>, tensor<1x1x3x3x3xcomplex<f32>>) -> tensor<1x1x12x12x5xcomplex<f32>>
    %c_11 = stablehlo.constant dense<0> : tensor<i32>
    %42 = call @_pad(%41, %c_11) : (tensor<1x1x12x12x5xcomplex<f32>>, tensor<i32>) -> tensor<1x1x12x12x5xcomplex<f32>>
    %43 = call @fft_0(%42) : (tensor<1x1x12x12x5xcomplex<f32>>) -> tensor<1x1x12x12x8xf32>
    return %43 : tensor<1x1x12x12x8xf32>
  }
  func.func private @fft(%arg0: tensor<1x1x12x12x8xf32>) -> tensor<1x1x12x12x5xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [12, 12, 8] : (tensor<1x1x12x12x8xf32>) -> tensor<1x1x12x12x5xcomplex<f32>>
    return %0 : tensor<1x1x12x12x5xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<1x1x12x12x5xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<1x1x12x12x5xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0, 0, 0], high = [0, 0, 0, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<1x1x12x12x5xcomplex<f32>>, tensor<complex<f32>>) -> tensor<1x1x12x12x5xcomplex<f32>>
    return %1 : tensor<1x1x12x12x5xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<1x1x12x12x5xcomplex<f32>>) -> tensor<1x1x12x12x8xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [12, 12, 8] : (tensor<1x1x12x12x5xcomplex<f32>>) -> tensor<1x1x12x12x8xf32>
    return %0 : tensor<1x1x12x12x8xf32>
  }
}
