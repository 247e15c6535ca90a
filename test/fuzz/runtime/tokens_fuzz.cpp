// libFuzzer target: token data files (hmrt_tokens_open / _read / _batch).
// The first byte chooses the width hint (0 auto, 2 or 4), the batch shape,
// the seed and the vocabulary size; the rest is the file.  A file that opens
// must report a consistent count and width; every read and batch inside it
// must succeed or fail with one line naming it, and the ids it returns must
// be below the vocabulary.  Files live in a private temporary directory.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "hmrt/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hmrt_fuzz;
  if (size < 1) return 0;
  const uint8_t knobs = data[0];
  const int hint = (knobs & 3) == 1 ? 2 : (knobs & 3) == 2 ? 4 : 0;
  const int64_t batch = 1 + ((knobs >> 2) & 3);     // 1..4
  const int64_t seq_len = 1 + ((knobs >> 4) & 7);   // 1..8
  const int64_t vocab = (knobs & 0x80) ? 50257 : 0;
  const std::string path = dir() / "tokens.bin";
  write_file(path, data + 1, size - 1);

  hmrt_clear_error();
  hmrt_tokens* t = nullptr;
  const hmrt_status st = hmrt_tokens_open(path.c_str(), hint, &t);
  check_failure(st, path);
  if (st != HMRT_OK) {
    if (t != nullptr) broken("a failed open returned a handle", "");
    return 0;
  }
  const int64_t count = hmrt_tokens_count(t);
  const int width = hmrt_tokens_width(t);
  if (width != 2 && width != 4) broken("width", std::to_string(width));
  if (hint != 0 && width != hint) broken("the hint was not honoured", "");
  const int64_t header = int64_t(size - 1) - count * width;
  if (count < 0 || (header != 0 && header != 1024))
    broken("count disagrees with the file size", std::to_string(count));

  // Whole-file and out-of-range reads.
  std::vector<int64_t> all(static_cast<size_t>(count < 4096 ? count : 4096));
  const hmrt_status r = hmrt_tokens_read(t, 0, int64_t(all.size()), all.data());
  if (r != HMRT_OK) broken("reading tokens inside the file failed", hmrt_last_error());
  const int64_t limit = width == 2 ? 65535 : 4294967295LL;
  for (int64_t id : all)
    if (id < 0 || id > limit) broken("an id outside the width's range", "");
  int64_t one = 0;
  hmrt_clear_error();
  const hmrt_status past_end = hmrt_tokens_read(t, count, 1, &one);
  check_failure(past_end, path);
  if (past_end != HMRT_OUT_OF_RANGE) broken("a read past the end did not fail", "");

  // A few batches.
  std::vector<int64_t> tok(batch * seq_len), tgt(batch * seq_len);
  for (int64_t step = 1; step <= 3; ++step) {
    hmrt_clear_error();
    const hmrt_status b = hmrt_tokens_batch(t, knobs, step, batch, seq_len,
                                            vocab, tok.data(), tgt.data());
    check_failure(b, path);
    if (b != HMRT_OK) break;
    if (count < seq_len + 1) broken("a batch from too short a file", "");
    for (size_t i = 0; i < tok.size(); ++i)
      if (vocab > 0 && (tok[i] >= vocab || tgt[i] >= vocab))
        broken("an id at or above the vocabulary size", "");
  }
  hmrt_tokens_close(t);
  return 0;
}
