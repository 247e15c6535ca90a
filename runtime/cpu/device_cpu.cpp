// The CPU backend of the device interface (hmrt/device.h, core/backend.h).
//
//  - device and host tiers: page-aligned host memory (aligned_alloc);
//  - storage tier: one anonymous file per buffer in $HMRT_STORAGE_DIR, else
//    $TMPDIR, else /tmp, moved with O_DIRECT and io_uring where it can be
//    (storage_file.h);
//  - streams (cpu_stream.h): a worker thread each, running their copies,
//    memsets and host functions in order; inline streams run them on the
//    submitting thread;
//  - kernels: the runtime's CPU kernels.
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

#include "core/backend.h"
#include "core/internal.h"
#include "cpu/cpu_stream.h"
#include "cpu/storage_file.h"
#include "hmrt/kernel_table.h"

namespace hmrt {
namespace {

// Device and host buffers start on a page, so that storage transfers into
// and out of them can bypass the page cache (StorageFile::kDirectAlign).
constexpr size_t kAlign = StorageFile::kDirectAlign;
// Bounce buffer for storage-to-storage copies and storage memsets.
constexpr uint64_t kChunk = uint64_t{1} << 20;

const hmrt_kernels kCpuKernels = {
    sizeof(hmrt_kernels),
    "cpu",
    hmrt_sgemm,
    hmrt_sgemm_strided_batched,
    hmrt_cast,
    hmrt_fill,
    hmrt_global_norm,
    hmrt_scale,
    hmrt_adamw_step,
    hmrt_sgd_step,
    hmrt_adamw8bit_step,
    hmrt_attention_forward,
    hmrt_attention_backward,
    hmrt_binary_f32,
    hmrt_binary_i64,
    hmrt_clip_coefficient,
    hmrt_concat,
    hmrt_dropout_f32,
    hmrt_dropout_backward_f32,
    hmrt_equal,
    hmrt_expand,
    hmrt_fused_f32,
    hmrt_gather,
    hmrt_gather_backward_f32,
    hmrt_gemm_f32,
    hmrt_layer_norm_f32,
    hmrt_layer_norm_backward_f32,
    hmrt_matmul_f32,
    hmrt_neg_i64,
    hmrt_onnx_adagrad,
    hmrt_onnx_adam,
    hmrt_onnx_momentum,
    hmrt_reduce_f32,
    hmrt_reduce_max_backward_f32,
    hmrt_reduce_to_f32,
    hmrt_relu_backward,
    hmrt_sce_loss_f32,
    hmrt_sce_loss_backward_f32,
    hmrt_slice,
    hmrt_slice_backward_f32,
    hmrt_softmax_axis_f32,
    hmrt_softmax_axis_backward_f32,
    hmrt_transpose,
    hmrt_trilu,
    hmrt_unary_f32,
    hmrt_where,
    hmrt_matmul_f32_bf16,
    hmrt_gemm_f32_bf16,
    hmrt_matmul_bf16,
    hmrt_gemm_bf16,
    hmrt_round_bf16,
    hmrt_add_sum_of_squares,
    hmrt_norm_of_sum,
    hmrt_fused_f32_to_bf16,
    hmrt_layer_norm_f32_to_bf16,
    hmrt_sce_loss_backward_f32_to_bf16,
    hmrt_matmul_mixed_bf16,
    hmrt_gemm_mixed_bf16,
};

CpuStream* stream_of(hmrt_stream* s) { return static_cast<CpuStream*>(s->impl); }

// A page-aligned bounce buffer of min(bytes, kChunk) bytes (data is null
// when it cannot be allocated).
struct Bounce {
  explicit Bounce(uint64_t bytes)
      : size(static_cast<size_t>(bytes < kChunk ? bytes : kChunk)),
        data(static_cast<uint8_t*>(
            std::aligned_alloc(kAlign, (size + kAlign - 1) / kAlign * kAlign))) {}
  ~Bounce() { std::free(data); }
  size_t size;
  uint8_t* data;
};

// step(done, n) for the kChunk pieces of [0, bytes), until one fails.
template <class F>
hmrt_status for_chunks(uint64_t bytes, F step) {
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = bytes - done < kChunk ? bytes - done : kChunk;
    hmrt_status st = step(done, n);
    if (st != HMRT_OK) return st;
    done += n;
  }
  return HMRT_OK;
}

StorageFile* file_of(const hmrt_buffer* b) {
  return static_cast<StorageFile*>(b->impl);
}

// The host address of a place, or nullptr for a storage buffer.
uint8_t* host_of(const Place& p) {
  if (p.buffer == nullptr) return static_cast<uint8_t*>(p.host);
  return p.buffer->host == nullptr ? nullptr : p.buffer->host + p.offset;
}

class CpuBackend final : public WorkerStreamBackend {
 public:
  hmrt_status alloc(int32_t tier, uint64_t bytes, uint8_t** host,
                    void** impl) override {
    if (tier == HMRT_TIER_STORAGE) return alloc_storage(bytes, host, impl);
    // aligned_alloc wants a non-zero multiple of the alignment.
    if (bytes > SIZE_MAX - kAlign)
      return fail(HMRT_OUT_OF_MEMORY,
                  "hmrt_buffer_alloc: %llu bytes is too large for the %s tier",
                  (unsigned long long)bytes, hmrt_tier_name(tier));
    size_t padded = (static_cast<size_t>(bytes) + kAlign - 1) / kAlign * kAlign;
    if (padded == 0) padded = kAlign;
    void* p = std::aligned_alloc(kAlign, padded);
    if (p == nullptr)
      return fail(HMRT_OUT_OF_MEMORY,
                  "hmrt_buffer_alloc: cannot allocate %llu bytes in the %s "
                  "tier",
                  (unsigned long long)bytes, hmrt_tier_name(tier));
    *host = static_cast<uint8_t*>(p);
    *impl = nullptr;
    return HMRT_OK;
  }

  void free(int32_t tier, uint64_t, uint8_t* host, void* impl) override {
    if (tier != HMRT_TIER_STORAGE) {
      std::free(host);
      return;
    }
    delete static_cast<StorageFile*>(impl);
  }

  hmrt_status copy(const char* fn, const Place& dst, const Place& src,
                   uint64_t bytes, hmrt_stream* stream) override {
    if (stream != nullptr)
      return stream_of(stream)->submit(
          [=] { return copy(fn, dst, src, bytes, nullptr); });
    uint8_t* d = host_of(dst);
    const uint8_t* s = host_of(src);
    if (d != nullptr && s != nullptr) {
      std::memmove(d, s, bytes);
      return HMRT_OK;
    }
    if (d != nullptr) return file_of(src.buffer)->read(d, bytes, src.offset, fn);
    if (s != nullptr) return file_of(dst.buffer)->write(s, bytes, dst.offset, fn);
    // storage -> storage through a bounce buffer (ranges do not overlap).
    Bounce tmp(bytes);
    if (tmp.data == nullptr)
      return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate a bounce buffer",
                  fn);
    return for_chunks(bytes, [&](uint64_t done, uint64_t n) {
      hmrt_status st = file_of(src.buffer)->read(tmp.data, n, src.offset + done, fn);
      return st == HMRT_OK ? file_of(dst.buffer)->write(tmp.data, n, dst.offset + done, fn)
                           : st;
    });
  }

  hmrt_status memset(const char* fn, const Place& dst, int value,
                     uint64_t bytes, hmrt_stream* stream) override {
    if (stream != nullptr)
      return stream_of(stream)->submit(
          [=] { return memset(fn, dst, value, bytes, nullptr); });
    uint8_t* d = host_of(dst);
    if (d != nullptr) {
      std::memset(d, value, bytes);
      return HMRT_OK;
    }
    Bounce tmp(bytes);
    if (tmp.data == nullptr)
      return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate a bounce buffer",
                  fn);
    std::memset(tmp.data, value, tmp.size);
    return for_chunks(bytes, [&](uint64_t done, uint64_t n) {
      return file_of(dst.buffer)->write(tmp.data, n, dst.offset + done, fn);
    });
  }

  hmrt_status stream_create(bool is_inline, void** impl) override {
    try {
      *impl = new CpuStream(is_inline);
    } catch (const std::bad_alloc&) {
      return fail(HMRT_OUT_OF_MEMORY,
                  "hmrt_stream_create: cannot allocate the stream");
    } catch (const std::system_error& e) {
      return fail(HMRT_INTERNAL,
                  "hmrt_stream_create: cannot start the stream's thread: %s",
                  e.what());
    }
    return HMRT_OK;
  }
  void stream_destroy(void* impl) override {
    delete static_cast<CpuStream*>(impl);
  }
  const hmrt_kernels* kernels() const override { return &kCpuKernels; }

 private:
  hmrt_status alloc_storage(uint64_t bytes, uint8_t** host, void** impl) {
    *host = nullptr;
    *impl = nullptr;
    if (bytes == 0) return HMRT_OK;  // nothing to store: no file
    StorageFile* f = nullptr;
    hmrt_status st = StorageFile::create(bytes, "hmrt_buffer_alloc", &f);
    if (st == HMRT_OK) *impl = f;
    return st;
  }
};

}  // namespace

hmrt_status create_cpu_backend(std::unique_ptr<Backend>* out) {
  out->reset(new (std::nothrow) CpuBackend());
  if (!*out)
    return fail(HMRT_OUT_OF_MEMORY,
                "hmrt_device_open: cannot allocate the cpu backend");
  return HMRT_OK;
}

}  // namespace hmrt
