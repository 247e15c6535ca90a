// hmrt-measure-cuda's fused program registered as a generated kernel
// (driver/measure_gelu_kernel.h), so that the backend runs it as programs
// run theirs: the measured `fused` efficiency is the generated kernels'
// (HMRT_CUDA_FUSED=interpreter measures the interpreter instead).
#include "driver/measure_gelu_kernel.h"

namespace {

const int kRegistered = hmrt::cuda::register_programs<hmrt::MeasureGelu>();

}  // namespace
