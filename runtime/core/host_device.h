// HMRT_HD marks a function that the CPU kernels and the CUDA backend's
// kernels share (core/*_math.h, core/plan.h, core/float16.h, ...): compiled
// for the host by the host compiler, for host and device by nvcc.
#ifndef HMRT_CORE_HOST_DEVICE_H
#define HMRT_CORE_HOST_DEVICE_H

#if defined(__CUDACC__)
#define HMRT_HD __host__ __device__
#else
#define HMRT_HD
#endif

// Unrolls the loop that follows where nvcc compiles it for the device (so
// that a small array indexed by the loop's counter stays in registers).
#if defined(__CUDA_ARCH__)
#define HMRT_UNROLL _Pragma("unroll")
#else
#define HMRT_UNROLL
#endif

#endif  // HMRT_CORE_HOST_DEVICE_H
