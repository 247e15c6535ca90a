// What the CUDA backend's kernel files share to launch their kernels:
// grid sizes for grid-stride loops, the stream handle, the launch's error.
#ifndef HMRT_CUDA_LAUNCH_CUH
#define HMRT_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>

#include <cstdint>

namespace hmrt {
namespace cuda {

constexpr int kThreads = 256;                       // threads per block of elementwise kernels
constexpr int64_t kMaxBlocks = int64_t{1} << 20;    // a grid-stride loop covers the rest

// Blocks for a grid-stride loop over n elements.
inline unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b > kMaxBlocks) b = kMaxBlocks;
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

inline cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

// The error of the last launch, as the launchers return it (0: none).
inline int launched() { return static_cast<int>(cudaGetLastError()); }

#define HMRT_GRID_LOOP(i, n)                                                    \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += int64_t(gridDim.x) * blockDim.x)

}  // namespace cuda
}  // namespace hmrt

#endif  // HMRT_CUDA_LAUNCH_CUH
