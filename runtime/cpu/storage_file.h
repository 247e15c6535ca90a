// One file of the CPU backend's storage tier (hmrt/device.h).
//
// The file is anonymous (O_TMPFILE where the file system has it, else a
// named temporary file removed at once) in the storage directory
// ($HMRT_STORAGE_DIR, else $TMPDIR, else /tmp), sized with ftruncate so that
// it reads as zeros.  It is opened twice: once with O_DIRECT, so that large
// transfers bypass the page cache as NVMe wants, and once without.  The
// whole kDirectAlign blocks of a read or write whose memory address and
// file offset are multiples of kDirectAlign go through the O_DIRECT
// descriptor, driven by io_uring (liburing) with several 1 MiB requests in
// flight; a partial last block, and any unaligned transfer, go through the
// other descriptor with pread/pwrite.  Where the file system
// refuses O_DIRECT (tmpfs), or the kernel io_uring, the runtime prints one
// line saying so on stderr, once, and carries on with the page cache or
// pread/pwrite.
#ifndef HMRT_CPU_STORAGE_FILE_H
#define HMRT_CPU_STORAGE_FILE_H

#include <cstdint>
#include <string>

#include "hmrt/hmrt.h"

namespace hmrt {

class StorageFile {
 public:
  static constexpr uint64_t kDirectAlign = 4096;

  // A file of `bytes` bytes in the storage directory; `fn` names the
  // public function in messages.
  static hmrt_status create(uint64_t bytes, const char* fn, StorageFile** out);
  ~StorageFile();

  // `bytes` at `offset` of the file into / from memory at `data`.
  hmrt_status read(void* data, uint64_t bytes, uint64_t offset, const char* fn);
  hmrt_status write(const void* data, uint64_t bytes, uint64_t offset,
                    const char* fn);

 private:
  StorageFile(int fd, int direct_fd, std::string dir)
      : fd_(fd), direct_fd_(direct_fd), dir_(std::move(dir)) {}
  hmrt_status transfer(bool write, void* data, uint64_t bytes, uint64_t offset,
                       const char* fn);

  int fd_;
  int direct_fd_;  // -1 without O_DIRECT
  std::string dir_;
};

}  // namespace hmrt

#endif  // HMRT_CPU_STORAGE_FILE_H
