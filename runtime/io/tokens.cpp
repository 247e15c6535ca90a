// Token data files and the seeded batch rule (see hmrt/io.h).
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "io/io_internal.h"

struct hmrt_tokens {
  std::string path;
  std::FILE* file = nullptr;
  int64_t data_at = 0;  // byte offset of token 0
  int64_t count = 0;
  int width = 2;        // bytes per token
  std::vector<unsigned char> buf;
  ~hmrt_tokens() {
    if (file) std::fclose(file);
  }
};

namespace {

using hmrt::fail;

constexpr int32_t kLlmcMagicGpt2 = 20240520;   // version 1, uint16 tokens
constexpr int32_t kLlmcMagicLlama3 = 20240801;  // version 7, uint32 tokens
constexpr int64_t kLlmcHeaderBytes = 256 * 4;

int32_t le32(const unsigned char* p) {
  return static_cast<int32_t>(uint32_t(p[0]) | (uint32_t(p[1]) << 8) |
                              (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24));
}

}  // namespace

extern "C" {

hmrt_status hmrt_tokens_open(const char* path, int dtype_hint,
                             hmrt_tokens** out) {
  HMRT_CHECK_ARG(path != nullptr, "hmrt_tokens_open: path is NULL");
  HMRT_CHECK_ARG(out != nullptr, "hmrt_tokens_open: out is NULL");
  HMRT_CHECK_ARG(dtype_hint == 0 || dtype_hint == 2 || dtype_hint == 4,
                 "hmrt_tokens_open: %s: dtype_hint must be 0, 2 or 4, got %d",
                 path, dtype_hint);
  auto* t = new (std::nothrow) hmrt_tokens;
  if (t == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "hmrt_tokens_open: out of memory");
  std::unique_ptr<hmrt_tokens> guard(t);
  t->path = path;
  t->file = std::fopen(path, "rb");
  if (t->file == nullptr)
    return fail(HMRT_IO_ERROR, "%s: cannot open the token data: %s", path,
                hmrt::io::errno_text().c_str());
  const int64_t size = hmrt::io::file_size(t->file);
  if (size < 0)
    return fail(HMRT_IO_ERROR, "%s: cannot determine the file size", path);

  unsigned char head[12];
  bool llmc = false;
  int32_t magic = 0, version = 0;
  int64_t header_count = 0;
  if (size >= kLlmcHeaderBytes) {
    if (std::fread(head, 1, 12, t->file) != 12)
      return fail(HMRT_IO_ERROR, "%s: cannot read the file", path);
    magic = le32(head);
    version = le32(head + 4);
    header_count = le32(head + 8);
    llmc = magic == kLlmcMagicGpt2 || magic == kLlmcMagicLlama3;
  }
  if (llmc) {
    int width;
    if (magic == kLlmcMagicGpt2 && version == 1) {
      width = 2;
    } else if (magic == kLlmcMagicLlama3 && version == 7) {
      width = 4;
    } else {
      return fail(HMRT_UNIMPLEMENTED,
                  "%s: llm.c token file with magic %d has unsupported version "
                  "%d (supported: magic 20240520 version 1 = uint16, magic "
                  "20240801 version 7 = uint32)",
                  path, magic, version);
    }
    if (dtype_hint != 0 && dtype_hint != width)
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: the llm.c header says uint%d tokens, but uint%d was "
                  "requested",
                  path, width * 8, dtype_hint * 8);
    if (header_count < 0 ||
        size != kLlmcHeaderBytes + header_count * width)
      return fail(HMRT_IO_ERROR,
                  "%s: the llm.c header promises %lld tokens (%lld bytes of "
                  "data) but the file has %lld bytes after the header",
                  path, (long long)header_count,
                  (long long)(header_count * width),
                  (long long)(size - kLlmcHeaderBytes));
    t->width = width;
    t->data_at = kLlmcHeaderBytes;
    t->count = header_count;
  } else {
    const int width = dtype_hint == 0 ? 2 : dtype_hint;
    if (size % width != 0)
      return fail(HMRT_INVALID_ARGUMENT,
                  "%s: %lld bytes is not a whole number of uint%d tokens", path,
                  (long long)size, width * 8);
    t->width = width;
    t->data_at = 0;
    t->count = size / width;
  }
  *out = guard.release();
  return HMRT_OK;
}

void hmrt_tokens_close(hmrt_tokens* tokens) { delete tokens; }

int64_t hmrt_tokens_count(const hmrt_tokens* tokens) {
  return tokens == nullptr ? 0 : tokens->count;
}

int hmrt_tokens_width(const hmrt_tokens* tokens) {
  return tokens == nullptr ? 0 : tokens->width;
}

hmrt_status hmrt_tokens_read(hmrt_tokens* t, int64_t pos, int64_t len,
                             int64_t* out) {
  HMRT_CHECK_ARG(t != nullptr, "hmrt_tokens_read: tokens is NULL");
  HMRT_CHECK_ARG(out != nullptr || len == 0, "hmrt_tokens_read: out is NULL");
  if (pos < 0 || len < 0 || pos > t->count || len > t->count - pos)
    return fail(HMRT_OUT_OF_RANGE,
                "%s: tokens [%lld, %lld + %lld) are outside the file's %lld "
                "tokens",
                t->path.c_str(), (long long)pos, (long long)pos, (long long)len,
                (long long)t->count);
  if (len == 0) return HMRT_OK;
  const size_t bytes = static_cast<size_t>(len) * t->width;
  if (t->buf.size() < bytes) t->buf.resize(bytes);
  if (!hmrt::io::seek(t->file, t->data_at + pos * t->width) ||
      std::fread(t->buf.data(), 1, bytes, t->file) != bytes)
    return fail(HMRT_IO_ERROR, "%s: cannot read tokens [%lld, %lld)",
                t->path.c_str(), (long long)pos, (long long)(pos + len));
  const unsigned char* p = t->buf.data();
  if (t->width == 2) {
    for (int64_t i = 0; i < len; ++i)
      out[i] = int64_t(p[2 * i]) | (int64_t(p[2 * i + 1]) << 8);
  } else {
    for (int64_t i = 0; i < len; ++i)
      out[i] = int64_t(p[4 * i]) | (int64_t(p[4 * i + 1]) << 8) |
               (int64_t(p[4 * i + 2]) << 16) | (int64_t(p[4 * i + 3]) << 24);
  }
  return HMRT_OK;
}

uint64_t hmrt_splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t hmrt_batch_start(uint64_t seed, int64_t step, int64_t batch,
                         int64_t row, int64_t n_tokens, int64_t seq_len) {
  if (step < 1 || batch < 1 || row < 0 || row >= batch || seq_len < 1 ||
      n_tokens - 1 < seq_len)
    return -1;
  const uint64_t key = static_cast<uint64_t>(step) * static_cast<uint64_t>(batch) +
                       static_cast<uint64_t>(row);
  const uint64_t h = hmrt_splitmix64(seed ^ hmrt_splitmix64(key));
  return static_cast<int64_t>(h % static_cast<uint64_t>(n_tokens - seq_len));
}

hmrt_status hmrt_tokens_batch(hmrt_tokens* t, uint64_t seed, int64_t step,
                              int64_t batch, int64_t seq_len,
                              int64_t vocab_size, int64_t* tokens_out,
                              int64_t* targets_out) {
  HMRT_CHECK_ARG(t != nullptr, "hmrt_tokens_batch: tokens is NULL");
  HMRT_CHECK_ARG(step >= 1, "hmrt_tokens_batch: step must be >= 1, got %lld",
                 (long long)step);
  HMRT_CHECK_ARG(batch >= 1 && seq_len >= 1,
                 "hmrt_tokens_batch: batch and seq_len must be >= 1, got %lld "
                 "and %lld",
                 (long long)batch, (long long)seq_len);
  HMRT_CHECK_ARG(batch <= INT64_MAX / seq_len,
                 "hmrt_tokens_batch: batch %lld x seq_len %lld overflows",
                 (long long)batch, (long long)seq_len);
  if (t->count <= seq_len)  // fewer than seq_len + 1, without overflow
    return fail(HMRT_INVALID_ARGUMENT,
                "%s: the file has %lld tokens, fewer than one batch row needs "
                "(sequence length %lld + 1 = %lld)",
                t->path.c_str(), (long long)t->count, (long long)seq_len,
                (long long)(seq_len == INT64_MAX ? seq_len : seq_len + 1));
  std::vector<int64_t> window(static_cast<size_t>(seq_len) + 1);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start =
        hmrt_batch_start(seed, step, batch, b, t->count, seq_len);
    if (start < 0)
      return fail(HMRT_INTERNAL, "hmrt_tokens_batch: no window for row %lld",
                  (long long)b);
    hmrt_status st = hmrt_tokens_read(t, start, seq_len + 1, window.data());
    if (st != HMRT_OK) return st;
    if (vocab_size > 0) {
      for (int64_t i = 0; i <= seq_len; ++i) {
        if (window[i] >= vocab_size)
          return fail(HMRT_OUT_OF_RANGE,
                      "%s: token at position %lld is %lld, not below the "
                      "vocabulary size %lld",
                      t->path.c_str(), (long long)(start + i),
                      (long long)window[i], (long long)vocab_size);
      }
    }
    if (tokens_out)
      std::memcpy(tokens_out + b * seq_len, window.data(),
                  sizeof(int64_t) * seq_len);
    if (targets_out)
      std::memcpy(targets_out + b * seq_len, window.data() + 1,
                  sizeof(int64_t) * seq_len);
  }
  return HMRT_OK;
}

}  // extern "C"
