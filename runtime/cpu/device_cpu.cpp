// The CPU backend of the device interface (hmrt/device.h, core/backend.h).
//
//  - device and host tiers: 64-byte aligned host memory (aligned_alloc);
//  - storage tier: one temporary file per buffer, unlinked at once (O_TMPFILE
//    where the file system has it, else mkstemp + unlink) in
//    $HMRT_STORAGE_DIR, else $TMPDIR, else /tmp; sized with ftruncate (so
//    it reads as zeros) and moved with pread/pwrite;
//  - streams (cpu_stream.h): a worker thread each, running their copies,
//    memsets and host functions in order; inline streams run them on the
//    submitting thread;
//  - kernels: the runtime's CPU kernels.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/backend.h"
#include "core/internal.h"
#include "cpu/cpu_stream.h"
#include "hmrt/kernels.h"
#include "hmrt/tensor_ops.h"

namespace hmrt {
namespace {

constexpr size_t kAlign = 64;
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
};

struct StorageFile {
  int fd;
};

std::string storage_dir() {
  for (const char* var : {"HMRT_STORAGE_DIR", "TMPDIR"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && v[0] != '\0') return v;
  }
  return "/tmp";
}

// An anonymous file in `dir`: O_TMPFILE when available, else a named
// temporary file removed at once.  -1 with errno on failure.
int open_anonymous(const std::string& dir) {
#ifdef O_TMPFILE
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
#endif
  std::string name = dir + "/hmrt-storage-XXXXXX";
  std::vector<char> path(name.begin(), name.end());
  path.push_back('\0');
  int fd2 = ::mkstemp(path.data());
  if (fd2 < 0) return -1;
  ::unlink(path.data());
  return fd2;
}

bool pwrite_all(int fd, const void* data, uint64_t bytes, uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const size_t n = bytes < (uint64_t{1} << 30) ? bytes : (size_t{1} << 30);
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    offset += static_cast<uint64_t>(w);
    bytes -= static_cast<uint64_t>(w);
  }
  return true;
}

bool pread_all(int fd, void* data, uint64_t bytes, uint64_t offset) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const size_t n = bytes < (uint64_t{1} << 30) ? bytes : (size_t{1} << 30);
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) {  // past the end of the file: reads as zeros
      std::memset(p, 0, bytes);
      return true;
    }
    p += r;
    offset += static_cast<uint64_t>(r);
    bytes -= static_cast<uint64_t>(r);
  }
  return true;
}

CpuStream* stream_of(hmrt_stream* s) { return static_cast<CpuStream*>(s->impl); }

int fd_of(const hmrt_buffer* b) { return static_cast<StorageFile*>(b->impl)->fd; }

// The host address of a place, or nullptr for a storage buffer.
uint8_t* host_of(const Place& p) {
  if (p.buffer == nullptr) return static_cast<uint8_t*>(p.host);
  return p.buffer->host == nullptr ? nullptr : p.buffer->host + p.offset;
}

class CpuBackend final : public Backend {
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
    auto* f = static_cast<StorageFile*>(impl);
    if (f == nullptr) return;
    ::close(f->fd);
    delete f;
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
    if (d != nullptr) {  // storage -> memory
      if (!pread_all(fd_of(src.buffer), d, bytes, src.offset))
        return io_error(fn, "read", bytes, src.offset);
      return HMRT_OK;
    }
    if (s != nullptr) {  // memory -> storage
      if (!pwrite_all(fd_of(dst.buffer), s, bytes, dst.offset))
        return io_error(fn, "write", bytes, dst.offset);
      return HMRT_OK;
    }
    // storage -> storage through a bounce buffer (ranges do not overlap).
    std::vector<uint8_t> tmp;
    try {
      tmp.resize(static_cast<size_t>(bytes < kChunk ? bytes : kChunk));
    } catch (const std::bad_alloc&) {
      return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate a bounce buffer",
                  fn);
    }
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t n = bytes - done < kChunk ? bytes - done : kChunk;
      if (!pread_all(fd_of(src.buffer), tmp.data(), n, src.offset + done))
        return io_error(fn, "read", n, src.offset + done);
      if (!pwrite_all(fd_of(dst.buffer), tmp.data(), n, dst.offset + done))
        return io_error(fn, "write", n, dst.offset + done);
      done += n;
    }
    return HMRT_OK;
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
    std::vector<uint8_t> tmp;
    try {
      tmp.assign(static_cast<size_t>(bytes < kChunk ? bytes : kChunk),
                 static_cast<uint8_t>(value));
    } catch (const std::bad_alloc&) {
      return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate a bounce buffer",
                  fn);
    }
    for (uint64_t done = 0; done < bytes;) {
      const uint64_t n = bytes - done < kChunk ? bytes - done : kChunk;
      if (!pwrite_all(fd_of(dst.buffer), tmp.data(), n, dst.offset + done))
        return io_error(fn, "write", n, dst.offset + done);
      done += n;
    }
    return HMRT_OK;
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
  hmrt_status stream_synchronize(void* impl) override {
    return static_cast<CpuStream*>(impl)->synchronize();
  }
  hmrt_status stream_query(void* impl, bool* done) override {
    *done = static_cast<CpuStream*>(impl)->idle();
    return HMRT_OK;
  }
  hmrt_status event_create(void** impl) override {
    *impl = new (std::nothrow) CpuEvent;
    if (*impl == nullptr)
      return fail(HMRT_OUT_OF_MEMORY,
                  "hmrt_event_create: cannot allocate the event");
    return HMRT_OK;
  }
  void event_destroy(void* impl) override {
    delete static_cast<CpuEvent*>(impl);
  }
  hmrt_status event_record(void* event, void* stream) override {
    auto* e = static_cast<CpuEvent*>(event);
    const uint64_t mark = e->mark();
    return static_cast<CpuStream*>(stream)->submit_sync([e, mark] {
      e->complete(mark);
      return HMRT_OK;
    });
  }
  hmrt_status stream_wait_event(void* stream, void* event) override {
    auto* e = static_cast<CpuEvent*>(event);
    const uint64_t mark = e->last_mark();
    if (mark == 0) return HMRT_OK;  // never recorded: complete
    return static_cast<CpuStream*>(stream)->submit_sync([e, mark] {
      e->wait(mark);
      return HMRT_OK;
    });
  }
  hmrt_status event_synchronize(void* event) override {
    auto* e = static_cast<CpuEvent*>(event);
    e->wait(e->last_mark());
    return HMRT_OK;
  }
  hmrt_status event_query(void* event, bool* done) override {
    auto* e = static_cast<CpuEvent*>(event);
    *done = e->done(e->last_mark());
    return HMRT_OK;
  }
  hmrt_status launch_host_func(void* stream, hmrt_status (*fn)(void*),
                               void* arg) override {
    return static_cast<CpuStream*>(stream)->submit([fn, arg] { return fn(arg); });
  }

  const hmrt_kernels* kernels() const override { return &kCpuKernels; }

 private:
  hmrt_status alloc_storage(uint64_t bytes, uint8_t** host, void** impl) {
    *host = nullptr;
    *impl = nullptr;
    if (bytes == 0) return HMRT_OK;  // nothing to store: no file
    std::string dir;
    try {
      dir = storage_dir();
    } catch (const std::bad_alloc&) {
      return fail(HMRT_OUT_OF_MEMORY, "hmrt_buffer_alloc: out of memory");
    }
    const int fd = open_anonymous(dir);
    if (fd < 0)
      return fail(HMRT_IO_ERROR,
                  "hmrt_buffer_alloc: cannot create a storage file in %s "
                  "(set HMRT_STORAGE_DIR): %s",
                  dir.c_str(), std::strerror(errno));
    if (bytes > uint64_t(INT64_MAX) ||
        ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      const int err = errno;
      ::close(fd);
      return fail(HMRT_IO_ERROR,
                  "hmrt_buffer_alloc: cannot size a storage file in %s to "
                  "%llu bytes: %s",
                  dir.c_str(), (unsigned long long)bytes, std::strerror(err));
    }
    auto* f = new (std::nothrow) StorageFile{fd};
    if (f == nullptr) {
      ::close(fd);
      return fail(HMRT_OUT_OF_MEMORY,
                  "hmrt_buffer_alloc: cannot allocate the handle");
    }
    *impl = f;
    return HMRT_OK;
  }

  static hmrt_status io_error(const char* fn, const char* what,
                              uint64_t bytes, uint64_t offset) {
    return fail(HMRT_IO_ERROR,
                "%s: cannot %s %llu bytes at offset %llu of a storage buffer's "
                "file: %s",
                fn, what, (unsigned long long)bytes,
                (unsigned long long)offset, std::strerror(errno));
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
