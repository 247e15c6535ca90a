// libFuzzer target: the bytes are an .npy file for hmrt_npy_read.  A file
// that reads must describe itself consistently and survive a round trip
// through hmrt_npy_write; one that does not must fail with one line naming
// it.  Files live in a private temporary directory (fuzz_util.h).
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "hmrt/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hmrt_fuzz;
  const std::string in = dir() / "in.npy", out = dir() / "out.npy";
  write_file(in, data, size);
  hmrt_clear_error();
  hmrt_npy a;
  std::memset(&a, 0, sizeof(a));
  const hmrt_status st = hmrt_npy_read(in.c_str(), &a);
  check_failure(st, in);
  if (st != HMRT_OK) return 0;

  // What a successful read promises (hmrt/io.h).
  const size_t elem = hmrt_dtype_size(a.dtype);
  if (elem == 0) broken("unknown dtype", std::to_string(a.dtype));
  if (a.rank < 0 || a.rank > HMRT_NPY_MAX_RANK)
    broken("rank out of range", std::to_string(a.rank));
  uint64_t count = 1;
  for (int32_t i = 0; i < a.rank; ++i) {
    if (a.shape[i] < 0) broken("negative dimension", std::to_string(i));
    if (a.shape[i] != 0 && count > UINT64_MAX / uint64_t(a.shape[i]))
      broken("element count overflows", "");
    count *= uint64_t(a.shape[i]);
  }
  if (uint64_t(a.count) != count || a.bytes != count * elem)
    broken("count or bytes disagree with the shape", "");
  if ((a.bytes == 0) != (a.data == nullptr))
    broken("data pointer and size disagree", "");
  if (a.bytes > size) broken("more data than the file holds", "");
  // Every byte is readable (ASan checks the range).
  volatile uint8_t sink = 0;
  for (uint64_t i = 0; i < a.bytes; ++i) sink ^= static_cast<uint8_t*>(a.data)[i];
  (void)sink;

  // Round trip: written (as 1.0 or 2.0) and read back, the same array.
  hmrt_clear_error();
  const hmrt_status w = hmrt_npy_write(out.c_str(), a.dtype, a.rank, a.shape,
                                       a.data);
  if (w != HMRT_OK) broken("cannot write back what was read", hmrt_last_error());
  hmrt_npy b;
  if (hmrt_npy_read(out.c_str(), &b) != HMRT_OK)
    broken("cannot read back what was written", hmrt_last_error());
  // BF16 is written as '<u2' and reads back as U16.
  const int32_t want = a.dtype == HMRT_DTYPE_BF16 ? HMRT_DTYPE_U16 : a.dtype;
  if (b.dtype != want || b.rank != a.rank || b.bytes != a.bytes ||
      std::memcmp(b.shape, a.shape, sizeof(int64_t) * a.rank) != 0 ||
      (a.bytes > 0 && std::memcmp(a.data, b.data, a.bytes) != 0))
    broken("the round trip changed the array", "");
  hmrt_npy_free(&a);
  hmrt_npy_free(&b);
  return 0;
}
