// One file of the CPU backend's storage tier: see storage_file.h.
#include "cpu/storage_file.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HMRT_HAVE_LIBURING
#include <liburing.h>
#endif

#include "core/internal.h"
#include "hmrt/device.h"

extern "C" const char* hmrt_storage_dir(void) {
  for (const char* var : {"HMRT_STORAGE_DIR", "TMPDIR"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && v[0] != '\0') return v;
  }
  return "/tmp";
}

namespace hmrt {
namespace {

// Bytes per request and requests in flight of an io_uring transfer.
constexpr uint64_t kRequest = uint64_t{1} << 20;
constexpr unsigned kDepth = 16;

std::atomic<bool> g_no_direct_notice{false};
std::atomic<bool> g_no_uring_notice{false};

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

// pread/pwrite until done; false with errno on failure.  Reads past the end
// of the file read zeros.
bool sync_transfer(bool write, int fd, uint8_t* p, uint64_t bytes,
                   uint64_t offset) {
  while (bytes > 0) {
    const size_t n = bytes < (uint64_t{1} << 30) ? bytes : (size_t{1} << 30);
    const ssize_t r = write ? ::pwrite(fd, p, n, static_cast<off_t>(offset))
                            : ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || (write && r == 0)) {
      if (r == 0) errno = EIO;
      return false;
    }
    if (r == 0) {  // past the end of the file
      std::memset(p, 0, bytes);
      return true;
    }
    p += r;
    offset += static_cast<uint64_t>(r);
    bytes -= static_cast<uint64_t>(r);
  }
  return true;
}

#ifdef HMRT_HAVE_LIBURING
// Each thread's ring, set up at its first transfer.
struct Ring {
  io_uring ring;
  bool tried = false, ready = false;
  ~Ring() {
    if (ready) io_uring_queue_exit(&ring);
  }
  io_uring* get() {
    if (!tried) {
      tried = true;
      const char* off = std::getenv("HMRT_NO_IO_URING");
      if (off != nullptr && off[0] != '\0' && off[0] != '0') {
        notice_once(g_no_uring_notice,
                    "io_uring is off (HMRT_NO_IO_URING); storage transfers use "
                    "pread/pwrite");
        return nullptr;
      }
      const int rc = io_uring_queue_init(kDepth, &ring, 0);
      ready = rc == 0;
      if (!ready)
        notice_once(g_no_uring_notice,
                    std::string("io_uring is unavailable (") +
                        std::strerror(-rc) +
                        "); storage transfers use pread/pwrite");
    }
    return ready ? &ring : nullptr;
  }
};
thread_local Ring t_ring;

// The transfer through `ring` on `fd` (O_DIRECT), kDepth requests of
// kRequest bytes in flight; the rest of a short request goes through
// `plain_fd` (it need not be aligned). False with errno on failure, after
// every request in flight has ended.
bool uring_transfer(io_uring* ring, bool write, int fd, int plain_fd,
                    uint8_t* p, uint64_t bytes, uint64_t offset) {
  uint64_t next = 0;  // bytes submitted
  unsigned inflight = 0;
  int error = 0;
  while (next < bytes || inflight > 0) {
    while (error == 0 && inflight < kDepth && next < bytes) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (sqe == nullptr) break;
      const unsigned n = static_cast<unsigned>(std::min(kRequest, bytes - next));
      if (write)
        io_uring_prep_write(sqe, fd, p + next, n, offset + next);
      else
        io_uring_prep_read(sqe, fd, p + next, n, offset + next);
      sqe->user_data = next;
      next += n;
      ++inflight;
    }
    if (error != 0) next = bytes;  // submit nothing more; drain
    if (inflight == 0) break;
    const int rc = io_uring_submit_and_wait(ring, 1);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      // The ring itself failed: wait out what is in flight, then report.
      if (error == 0) error = -rc;
      io_uring_cqe* cqe = nullptr;
      while (inflight > 0 && io_uring_wait_cqe(ring, &cqe) == 0) {
        io_uring_cqe_seen(ring, cqe);
        --inflight;
      }
      break;
    }
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(ring, &cqe) == 0 && cqe != nullptr) {
      const uint64_t start = cqe->user_data;
      const uint64_t n = std::min(kRequest, bytes - start);
      const int res = cqe->res;
      io_uring_cqe_seen(ring, cqe);
      --inflight;
      if (res < 0) {
        if (error == 0) error = -res;
      } else if (static_cast<uint64_t>(res) < n && error == 0) {
        // A short transfer: the rest of this request synchronously.
        if (!sync_transfer(write, plain_fd, p + start + res, n - res,
                           offset + start + res))
          error = errno != 0 ? errno : EIO;
      }
    }
  }
  if (error != 0) errno = error;
  return error == 0;
}
#endif

}  // namespace

hmrt_status StorageFile::create(uint64_t bytes, const char* fn,
                                StorageFile** out) {
  std::string dir;
  try {
    dir = hmrt_storage_dir();
  } catch (const std::bad_alloc&) {
    return fail(HMRT_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  const int fd = open_anonymous(dir);
  if (fd < 0)
    return fail(HMRT_IO_ERROR,
                "%s: cannot create a storage file in %s (set "
                "HMRT_STORAGE_DIR or train --nvme): %s",
                fn, dir.c_str(), std::strerror(errno));
  if (bytes > uint64_t(INT64_MAX) ||
      ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(HMRT_IO_ERROR,
                "%s: cannot size a storage file in %s to %llu bytes: %s", fn,
                dir.c_str(), (unsigned long long)bytes, std::strerror(err));
  }
  // The same file again, bypassing the page cache.
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  const int direct = ::open(self.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
  if (direct < 0)
    notice_once(g_no_direct_notice,
                "storage in " + dir + ": O_DIRECT is refused there (" +
                    std::strerror(errno) +
                    "); transfers go through the page cache");
  auto* f = new (std::nothrow) StorageFile(fd, direct, dir);
  if (f == nullptr) {
    ::close(fd);
    if (direct >= 0) ::close(direct);
    return fail(HMRT_OUT_OF_MEMORY, "%s: cannot allocate the handle", fn);
  }
  *out = f;
  return HMRT_OK;
}

StorageFile::~StorageFile() {
  ::close(fd_);
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

hmrt_status StorageFile::read(void* data, uint64_t bytes, uint64_t offset,
                              const char* fn) {
  return transfer(false, data, bytes, offset, fn);
}

hmrt_status StorageFile::write(const void* data, uint64_t bytes,
                               uint64_t offset, const char* fn) {
  return transfer(true, const_cast<void*>(data), bytes, offset, fn);
}

hmrt_status StorageFile::transfer(bool write, void* data, uint64_t bytes,
                                  uint64_t offset, const char* fn) {
  auto* p = static_cast<uint8_t*>(data);
  // Whole blocks from an aligned start go around the page cache; a
  // partial last block (a tensor's tail) through it.
  const bool aligned = direct_fd_ >= 0 &&
                       reinterpret_cast<uintptr_t>(p) % kDirectAlign == 0 &&
                       offset % kDirectAlign == 0;
  const uint64_t direct = aligned ? bytes / kDirectAlign * kDirectAlign : 0;
  errno = 0;
  bool ok = true;
  if (direct > 0) {
#ifdef HMRT_HAVE_LIBURING
    io_uring* ring = t_ring.get();
    ok = ring != nullptr
             ? uring_transfer(ring, write, direct_fd_, fd_, p, direct, offset)
             : sync_transfer(write, direct_fd_, p, direct, offset);
#else
    ok = sync_transfer(write, direct_fd_, p, direct, offset);
#endif
  }
  if (ok && direct < bytes)
    ok = sync_transfer(write, fd_, p + direct, bytes - direct, offset + direct);
  if (ok) return HMRT_OK;
  return fail(HMRT_IO_ERROR,
              "%s: cannot %s %llu bytes at offset %llu of a storage file in "
              "%s: %s",
              fn, write ? "write" : "read", (unsigned long long)bytes,
              (unsigned long long)offset, dir_.c_str(),
              std::strerror(errno != 0 ? errno : EIO));
}

}  // namespace hmrt
