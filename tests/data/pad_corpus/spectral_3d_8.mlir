module @jit_fn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x2x8x8x8xf32>, %arg1: tensor<4x2x2x2xcomplex<f32>>) -> (tensor<1x2x8x8x8xf32> {jax.result_info = "result"}) {
    %0 = call @fft(%arg0) : (tensor<1x2x8x8x8xf32>) -> tensor<1x2x8x8x5xcomplex<f32>>
    %cst = stablehlo.constant dense<(0.000000e+00,0.000000e+00)> : tensor<complex<f32>>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<complex<f32>>) -> tensor<1x2x8x8x5xcomplex<f32>>
    %2 = stablehlo.slice %0 [0:1, 0:2, 0:2, 0:2, 0:2] : (tensor<1x2x8x8x5xcomplex<f32>>) -> tensor<1x2x2x2x2xcomplex<f32>>
    %3 = stablehlo.slice %arg1 [0:1, 0:2, 0:2, 0:2] : (tensor<4x2x2x2xcomplex<f32>>) -> tensor<1x2x2x2xcomplex<f32>>
    %4 = stablehlo.reshape %3 : (tensor<1x2x2x2xcomplex<f32>>) -> tensor<2x2x2xcomplex<f32>>
    %5 = stablehlo.broadcast_in_dim %4, dims = [2, 3, 4] : (tensor<2x2x2xcomplex<f32>>) -> tensor<1x1x2x2x2xcomplex<f32>>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1, 2, 3, 4] : (tensor<1x1x2x2x2xcomplex<f32>>) -> tensor<1x2x2x2x2xcomplex<f32>>
    %7 = stablehlo.multiply %2, %6 : tensor<1x2x2x2x2xcomplex<f32>>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %11 = stablehlo.concatenate %8, %9, %10, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %12 = "stablehlo.scatter"(%1, %11, %7) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1, 2, 3, 4], scatter_dims_to_operand_dims = [2, 3, 4]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<complex<f32>>, %arg3: tensor<complex<f32>>):
      stablehlo.return %arg3 : tensor<complex<f32>>
    }) : (tensor<1x2x8x8x5xcomplex<f32>>, tensor<3xi32>, tensor<1x2x2x2x2xcomplex<f32>>) -> tensor<1x2x8x8x5xcomplex<f32>>
    %13 = stablehlo.slice %0 [0:1, 0:2, 0:2, 6:8, 0:2] : (tensor<1x2x8x8x5xcomplex<f32>>) -> tensor<1x2x2x2x2xcomplex<f32>>
    %14 = stablehlo.slice %arg1 [1:2, 0:2, 0:2, 0:2] : (tensor<4x2x2x2xcomplex<f32>>) -> tensor<1x2x2x2xcomplex<f32>>
    %15 = stablehlo.reshape %14 : (tensor<1x2x2x2xcomplex<f32>>) -> tensor<2x2x2xcomplex<f32>>
    %16 = stablehlo.broadcast_in_dim %15, dims = [2, 3, 4] : (tensor<2x2x2xcomplex<f32>>) -> tensor<1x1x2x2x2xcomplex<f32>>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1, 2, 3, 4] : (tensor<1x1x2x2x2xcomplex<f32>>) -> tensor<1x2x2x2x2xcomplex<f32>>
    %18 = stablehlo.multiply %13, %17 : tensor<1x2x2x2x2xcomplex<f32>>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %19 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_3 = stablehlo.constant dense<6> : tensor<i32>
    %20 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_4 = stablehlo.constant dense<0> : tensor<i32>
    %21 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %22 = stablehlo.concatenate %19, %20, %21, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %23 = "stablehlo.scatter"(%12, %22, %18) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1, 2, 3, 4], scatter_dims_to_operand_dims = [2, 3, 4]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<complex<f32>>, %arg3: tensor<complex<f32>>):
      stablehlo.return %arg3 : tensor<complex<f32>>
    }) : (tensor<1x2x8x8x5xcomplex<f32>>, tensor<3xi32>, tensor<1x2x2x2x2xcomplex<f32>>) -> tensor<1x2x8x8x5xcomplex<f32>>
    %24 = stablehlo.slice %0 [0:1, 0:2, 6:8, 0:2, 0:2] : (tensor<1x2x8x8x5xcomplex<f32>>) -> tensor<1x2x2x2x2xcomplex<f32>>
    %25 = stablehlo.slice %arg1 [2:3, 0:2, 0:2, 0:2] : (tensor<4x2x2x2xcomplex<f32>>) -> tensor<1x2x2x2xcomplex<f32>>
    %26 = stablehlo.reshape %25 : (tensor<1x2x2x2xcomplex<f32>>) -> tensor<2x2x2xcomplex<f32>>
    %27 = stablehlo.broadcast_in_dim %26, dims = [2, 3, 4] : (tensor<2x2x2xcomplex<f32>>) -> tensor<1x1x2x2x2xcomplex<f32>>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2, 3, 4] : (tensor<1x1x2x2x2xcomplex<f32>>) -> tensor<1x2x2x2x2xcomplex<f32>>
    %29 = stablehlo.multiply %24, %28 : tensor<1x2x2x2x2xcomplex<f32>>
    %c_5 = stablehlo.constant dense<6> : tensor<i32>
    %30 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %31 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %32 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %33 = stablehlo.concatenate %30, %31, %32, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %34 = "stablehlo.scatter"(%23, %33, %29) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1, 2, 3, 4], scatter_dims_to_operand_dims = [2, 3, 4]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<complex<f32>>, %arg3: tensor<complex<f32>>):
      stablehlo.return %arg3 : tensor<complex<f32>>
    }) : (tensor<1x2x8x8x5xcomplex<f32>>, tensor<3xi32>, tensor<1x2x2x2x2xcomplex<f32>>) -> tensor<1x2x8x8x5xcomplex<f32>>
    %35 = stablehlo.slice %0 [0:1, 0:2, 6:8, 6:8, 0:2] : (tensor<1x2x8x8x5xcomplex<f32>>) -> tensor<1x2x2x2x2xcomplex<f32>>
    %36 = stablehlo.slice %arg1 [3:4, 0:2, 0:2, 0:2] : (tensor<4x2x2x2xcomplex<f32>>) -> tensor<1x2x2x2xcomplex<f32>>
    %37 = stablehlo.reshape %36 : (tensor<1x2x2x2xcomplex<f32>>) -> tensor<2x2x2xcomplex<f32>>
    %38 = stablehlo.broadcast_in_dim %37, dims = [2, 3, 4] : (tensor<2x2x2xcomplex<f32>>) -> tensor<1x1x2x2x2xcomplex<f32>>
    %39 = stablehlo.broadcast_in_dim %38, dims = [0, 1, 2, 3, 4] : (tensor<1x1x2x2x2xcomplex<f32>>) -> tensor<1x2x2x2x2xcomplex<f32>>
    %40 = stablehlo.multiply %35, %39 : tensor<1x2x2x2x2xcomplex<f32>>
    %c_8 = stablehlo.constant dense<6> : tensor<i32>
    %41 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_9 = stablehlo.constant dense<6> : tensor<i32>
    %42 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %c_10 = stablehlo.constant dense<0> : tensor<i32>
    %43 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %44 = stablehlo.concatenate %41, %42, %43, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %45 = "stablehlo.scatter"(%34, %44, %40) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1, 2, 3, 4], scatter_dims_to_operand_dims = [2, 3, 4]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<complex<f32>>, %arg3: tensor<complex<f32>>):
      stablehlo.return %arg3 : tensor<complex<f32>>
    }) : (tensor<1x2x8x8x5xcomplex<f32>>, tensor<3xi32>, tensor<1x2x2x2x2xcomplex<f32>>) -> tensor<1x2x8x8x5xcomplex<f32>>
    %c_11 = stablehlo.constant dense<0> : tensor<i32>
    %46 = call @_pad(%45, %c_11) : (tensor<1x2x8x8x5xcomplex<f32>>, tensor<i32>) -> tensor<1x2x8x8x5xcomplex<f32>>
    %47 = call @fft_0(%46) : (tensor<1x2x8x8x5xcomplex<f32>>) -> tensor<1x2x8x8x8xf32>
    return %47 : tensor<1x2x8x8x8xf32>
  }
  func.func private @fft(%arg0: tensor<1x2x8x8x8xf32>) -> tensor<1x2x8x8x5xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [8, 8, 8] : (tensor<1x2x8x8x8xf32>) -> tensor<1x2x8x8x5xcomplex<f32>>
    return %0 : tensor<1x2x8x8x5xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<1x2x8x8x5xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<1x2x8x8x5xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0, 0, 0], high = [0, 0, 0, 0, 0], interior = [0, 0, 0, 0, 0] : (tensor<1x2x8x8x5xcomplex<f32>>, tensor<complex<f32>>) -> tensor<1x2x8x8x5xcomplex<f32>>
    return %1 : tensor<1x2x8x8x5xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<1x2x8x8x5xcomplex<f32>>) -> tensor<1x2x8x8x8xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [8, 8, 8] : (tensor<1x2x8x8x5xcomplex<f32>>) -> tensor<1x2x8x8x8xf32>
    return %0 : tensor<1x2x8x8x8xf32>
  }
}
