// RUN: hmcc-opt %s -split-input-file -tg-optimizer='optimizer=adamw' | FileCheck %s --check-prefix=ADAMW
// RUN: hmcc-opt %s -split-input-file -tg-optimizer='optimizer=sgd momentum=0.9 clip-norm=1.0' | FileCheck %s --check-prefix=SGD
// RUN: hmcc-opt %s -split-input-file -tg-optimizer='optimizer=adamw8bit' | FileCheck %s --check-prefix=Q8
// RUN: not hmcc-opt %s -split-input-file -tg-optimizer='optimizer=lion' 2>&1 | FileCheck %s --check-prefix=BAD
// One small and one large (>= 4096 elements) parameter: AdamW gets two fp32
// moments each; SGD one momentum buffer and clipping; 8-bit AdamW quantizes
// only the large parameter's moments.

tg.parameter @b : tensor<8xf32> {source = "b"}
tg.parameter @w : tensor<64x64xf32> {source = "w"}
func.func @forward_backward(%x: tensor<64xf32> {tg.input = "x"}) -> (tensor<f32>, tensor<8xf32>, tensor<64x64xf32>) {
  %l = tg.constant dense<1.0> : tensor<f32>
  %gb = tg.constant dense<0.5> : tensor<8xf32>
  %gw = tg.constant dense<0.25> : tensor<64x64xf32>
  return %l, %gb, %gw : tensor<f32>, tensor<8xf32>, tensor<64x64xf32>
}

// ADAMW-DAG: tg.state @b.exp_avg : tensor<8xf32> {kind = "exp_avg", param = @b}
// ADAMW-DAG: tg.state @b.exp_avg_sq : tensor<8xf32> {kind = "exp_avg_sq", param = @b}
// ADAMW-DAG: tg.state @w.exp_avg : tensor<64x64xf32>
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: %{{.*}}: tensor<i64> {tg.role = "step"}, %{{.*}}: tensor<f32> {tg.role = "lr"}
// ADAMW-SAME: -> (tensor<f32> {tg.output = "loss"}, tensor<f32> {tg.output = "grad_norm"})
// The norm: a running sum of squares, one right after each gradient is
// made, in that order, then the norm of the last.
// ADAMW: %[[GB:.*]] = tg.constant dense<5.000000e-01>
// ADAMW-NEXT: %[[SB:.*]] = tg.sum_squares %[[GB]] : tensor<8xf32>
// ADAMW-NEXT: %[[GW:.*]] = tg.constant dense<2.500000e-01>
// ADAMW-NEXT: %[[SW:.*]] = tg.sum_squares %[[GW]], %[[SB]] : tensor<64x64xf32>
// ADAMW: %[[N:.*]] = tg.norm_of_sum %[[SW]]{{$}}
// ADAMW: tg.adamw_update @b, {{.*}} {beta1 = 0.899999976 : f32, beta2 = 9.990000e-01 : f32, eps = 9.99999993E-9 : f32, exp_avg = @b.exp_avg, exp_avg_sq = @b.exp_avg_sq, weight_decay = 0.00999999977 : f32}
// ADAMW: tg.adamw_update @w
// ADAMW: return %{{.*}}, %[[N]]

// SGD: tg.state @b.momentum : tensor<8xf32> {kind = "momentum", param = @b}
// SGD-LABEL: func.func @train_step
// SGD: %[[N:.*]] = tg.norm_of_sum
// SGD: %[[C:.*]] = tg.clip_coefficient %[[N]] {max_norm = 1.000000e+00 : f32}
// SGD: %[[G:.*]] = tg.mul %{{.*}}, %[[C]]
// SGD: tg.sgd_update @b, %[[G]], {{.*}} {momentum = 0.899999976 : f32, momentum_buffer = @b.momentum, weight_decay = 0.000000e+00 : f32}

// Q8-DAG: tg.state @b.exp_avg : tensor<8xf32>
// Q8-DAG: tg.state @w.exp_avg : tensor<64x64xui8>
// Q8-DAG: tg.state @w.exp_avg_absmax : tensor<16xf32>
// Q8-DAG: tg.state @w.exp_avg_sq : tensor<64x64xui8>
// Q8-DAG: tg.state @w.exp_avg_sq_absmax : tensor<16xf32>
// Q8: tg.adamw_update @b
// Q8: tg.adamw8bit_update @w, {{.*}}exp_avg = @w.exp_avg, exp_avg_absmax = @w.exp_avg_absmax, exp_avg_sq = @w.exp_avg_sq, exp_avg_sq_absmax = @w.exp_avg_sq_absmax

// BAD: error: tg-optimizer: unknown optimizer 'lion' (sgd, adamw or adamw8bit)
