/* hmrt/io.h: files the train driver reads and writes.  Plain C (C99), usable
 * from C++.  Follows the conventions of hmrt.h: every fallible function
 * returns an hmrt_status and records a message (naming the file) readable
 * with hmrt_last_error(); outputs are written only on success.
 *
 *  - NumPy .npy arrays (--feed, --dump-outputs)
 *  - token data: raw uint16/uint32 files (nanoGPT) and llm.c .bin shards,
 *    with the seeded batch rule
 *  - checkpoints and initial-state directories (manifest.json + tensors.bin)
 *
 * The formats and the batch rule are described in runtime/README.md.
 * Handles are not thread-safe: use one from one thread at a time.
 */
#ifndef HMRT_IO_H
#define HMRT_IO_H

#include "hmrt/hmrt.h"
#include "hmrt/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- element types -------------------------------------------------------- */

/* Bytes per element of an hmrt_dtype; 0 for a value that is not one. */
size_t hmrt_dtype_size(int32_t dtype);
/* NumPy-style name ("float32", "int64", "uint8", "bool", ...; "bfloat16" for
 * BF16); "unknown" for a value that is not an hmrt_dtype. */
const char* hmrt_dtype_name(int32_t dtype);
/* The hmrt_dtype named `name` (as hmrt_dtype_name writes it); 0 if none. */
int32_t hmrt_dtype_from_name(const char* name);

/* ---- NumPy .npy ------------------------------------------------------------
 * Format versions 1.0, 2.0 and 3.0 are read (any other version, such as 1.1,
 * is HMRT_UNIMPLEMENTED naming it; a header over 1 MiB is
 * HMRT_INVALID_ARGUMENT); 1.0 is written (2.0 when the header would not fit
 * in 1.0's 65535 bytes).  Supported element types (the
 * header's 'descr'): '<f4' F32, '<f8' F64, '<f2' F16, '<i8' I64, '<i4' I32,
 * '<i2' I16, '|i1' I8, '<u8' U64, '<u4' U32, '<u2' U16, '|u1' U8, '|b1' BOOL
 * (one byte 0 or 1).  NumPy has no bfloat16: a BF16 array is written as '<u2'
 * holding its raw bits (the top 16 bits of each float32), and reading a '<u2'
 * file always gives U16 (the train driver's --feed accepts such a file for a
 * BF16 input).  Arrays must be C order ('fortran_order': False); big-endian,
 * structured, object and other types and Fortran order are
 * HMRT_UNIMPLEMENTED with a message naming the file. */
#define HMRT_NPY_MAX_RANK 16

typedef struct hmrt_npy {
  int32_t dtype; /* hmrt_dtype */
  int32_t rank;  /* 0 for a scalar */
  int64_t shape[HMRT_NPY_MAX_RANK];
  int64_t count; /* elements: the product of shape (1 for a scalar) */
  uint64_t bytes;
  void* data;    /* malloc'd, owned; NULL when bytes == 0 */
} hmrt_npy;

/* Reads the whole file.  HMRT_IO_ERROR: cannot open or read, truncated or
 * with bytes after the data; HMRT_INVALID_ARGUMENT: not an .npy file or a
 * malformed header; HMRT_UNIMPLEMENTED: a dtype or order listed above as
 * unsupported.  A '|b1' element other than 0 or 1 is HMRT_INVALID_ARGUMENT. */
hmrt_status hmrt_npy_read(const char* path, hmrt_npy* out);
/* Frees npy->data and zeroes *npy.  NULL is allowed. */
void hmrt_npy_free(hmrt_npy* npy);
/* Writes a C-order array of `rank` dimensions (0..HMRT_NPY_MAX_RANK).
 * `data` holds product(shape) elements of `dtype` and may be NULL when that
 * is 0.  The file is written to a temporary file beside `path` (created
 * exclusively, never through a symbolic link), flushed to disk and renamed
 * to `path`: an existing file is replaced only then, and a failure leaves it
 * whole; a symbolic link at `path` is replaced itself, not its target. */
hmrt_status hmrt_npy_write(const char* path, int32_t dtype, int32_t rank,
                           const int64_t* shape, const void* data);

/* ---- token data ------------------------------------------------------------
 * A token file is a flat array of little-endian token ids, either
 *  - raw: no header, uint16 (nanoGPT's train.bin) or uint32; or
 *  - llm.c: a header of 256 int32 (header[0] magic, header[1] version,
 *    header[2] token count) then the tokens.  Magic 20240520 with version 1
 *    holds uint16 tokens (GPT-2); magic 20240801 with version 7 holds uint32
 *    tokens (Llama 3), as llm.c's dev/data/data_common.py writes them.  The
 *    file size must be exactly 1024 + count * width.
 * dtype_hint: 0 detects (an llm.c header if the file starts with one of the
 * two magics, else raw uint16); 2 or 4 forces the token width: raw uint16 or
 * raw uint32, or, for a file with an llm.c header, a check that the header's
 * width matches. */
typedef struct hmrt_tokens hmrt_tokens;

hmrt_status hmrt_tokens_open(const char* path, int dtype_hint,
                             hmrt_tokens** out);
void hmrt_tokens_close(hmrt_tokens* tokens);
/* Number of tokens in the file; 0 for NULL. */
int64_t hmrt_tokens_count(const hmrt_tokens* tokens);
/* Bytes per token (2 or 4); 0 for NULL. */
int hmrt_tokens_width(const hmrt_tokens* tokens);
/* Reads tokens [pos, pos + len) into out[0..len) as int64.
 * HMRT_OUT_OF_RANGE when the window is not inside [0, count). */
hmrt_status hmrt_tokens_read(hmrt_tokens* tokens, int64_t pos, int64_t len,
                             int64_t* out);

/* The batch rule.  For draw number `step` (counting from 1) of a batch of
 * `batch` rows of `seq_len` tokens from a file of `n_tokens` tokens, row b
 * starts at
 *     start(step, b) = splitmix64(seed ^ splitmix64(step * batch + b))
 *                      % (n_tokens - seq_len)
 * (unsigned 64-bit arithmetic, wrapping), so every window
 * [start, start + seq_len + 1) lies inside the file.  Row b's tokens are
 * data[start .. start + seq_len) and its targets data[start + 1 .. start +
 * seq_len + 1).  A loader's position (saved in checkpoints) is the number of
 * draws made so far; the next draw is number position + 1. */
uint64_t hmrt_splitmix64(uint64_t x);
/* start(step, b) as above; -1 when step < 1, batch < 1, b outside [0, batch),
 * seq_len < 1 or n_tokens < seq_len + 1. */
int64_t hmrt_batch_start(uint64_t seed, int64_t step, int64_t batch,
                         int64_t row, int64_t n_tokens, int64_t seq_len);
/* Fills tokens_out and targets_out (each batch * seq_len int64, row-major;
 * either may be NULL) with draw number `step`.  With vocab_size > 0 every id
 * read must be < vocab_size: otherwise HMRT_OUT_OF_RANGE naming the file,
 * the token's position in it and its value.  HMRT_INVALID_ARGUMENT when the
 * file has fewer than seq_len + 1 tokens. */
hmrt_status hmrt_tokens_batch(hmrt_tokens* tokens, uint64_t seed,
                              int64_t step, int64_t batch, int64_t seq_len,
                              int64_t vocab_size, int64_t* tokens_out,
                              int64_t* targets_out);

/* ---- checkpoints -----------------------------------------------------------
 * A checkpoint is a directory holding manifest.json and tensors.bin (the raw
 * little-endian contents, each tensor at a 64-byte aligned offset).  The
 * manifest (format version 2) records the model name, the program that
 * wrote it (its identity: a hash over the model name and every parameter's
 * and state's kind, name, dtype and shape; its ABI version; its optimizer
 * and hyper-parameters), step, data position, seed, and for every tensor its
 * name, kind ("param" or "state"), dtype, shape, byte offset and size in
 * tensors.bin and CRC-32; its last member is the CRC-32 of all the text
 * before it, so an edited manifest is refused.  The compiler's initial state
 * directory is a checkpoint at step 0.  See runtime/README.md for the
 * manifest's fields. */
#define HMRT_CHECKPOINT_FORMAT_VERSION 2

typedef struct hmrt_checkpoint_meta {
  char model[256];       /* model name; truncated if longer */
  int64_t step;          /* steps completed */
  int64_t data_position; /* token loader draws made */
  uint64_t seed;         /* the run's data seed */
  /* The program that wrote the checkpoint.  hmrt_checkpoint_save takes both
   * from the program.  A caller of hmrt_checkpoint_write sets abi_version to
   * HMRT_PROGRAM_ABI_VERSION and hyper to the program's hyper-parameters, or
   * leaves abi_version 0 when it does not know the program: the manifest
   * then records neither (null), and a load checks only the identity.  A
   * read sets them from the manifest (abi_version 0: not recorded). */
  uint32_t abi_version;
  hmrt_hyperparams hyper;
  /* Read: the program identity, 16 lowercase hex digits and a NUL.  Writers
   * compute it from the tensors and the model name and ignore this field. */
  char identity[17];
} hmrt_checkpoint_meta;

typedef enum hmrt_tensor_kind {
  HMRT_KIND_PARAM = 0,
  HMRT_KIND_STATE = 1 /* optimizer state */
} hmrt_tensor_kind;

typedef struct hmrt_checkpoint_tensor {
  const char* name;
  int32_t kind;  /* hmrt_tensor_kind */
  int32_t dtype; /* hmrt_dtype */
  int32_t rank;
  const int64_t* shape;
  const void* data; /* product(shape) elements */
} hmrt_checkpoint_tensor;

/* CRC-32 as zlib's crc32() (reflected polynomial 0xEDB88320): pass crc = 0
 * for the first piece and the previous result for the next ones. */
uint32_t hmrt_crc32(uint32_t crc, const void* data, size_t bytes);

/* Writes a checkpoint of `count` tensors to `dir` atomically: everything is
 * written to "<dir>.tmp" first and renamed to `dir` only once complete; an
 * existing checkpoint at `dir` is replaced only then (it is renamed to
 * "<dir>.old" and removed after the rename).  `dir` may not exist yet.  A
 * save deletes or replaces `dir`, "<dir>.tmp" and "<dir>.old" only when each
 * is absent, an empty directory, or one of hmrt's own checkpoints: a
 * directory (not a symbolic link) holding only regular files named
 * manifest.json and the data file it names, whose manifest.json is JSON with
 * "format": "hmrt-checkpoint" ("<dir>.tmp" and "<dir>.old" may also hold
 * tensors.bin alone, as an interrupted save leaves them).  Anything else is
 * HMRT_INVALID_ARGUMENT, with a message saying what is in the way, and
 * nothing is touched.  Names must be unique within a kind. */
hmrt_status hmrt_checkpoint_write(const char* dir,
                                  const hmrt_checkpoint_meta* meta,
                                  int32_t count,
                                  const hmrt_checkpoint_tensor* tensors);

/* Supplies the bytes of a tensor being written by
 * hmrt_checkpoint_write_filled: writes bytes [offset, offset + bytes) of
 * tensor `index` to `dst` and returns HMRT_OK, or returns another status to
 * stop the write (nothing replaces `dir` then).  Calls come tensor by tensor
 * in list order, each tensor's pieces in increasing offsets, none larger
 * than 64 MiB. */
typedef hmrt_status (*hmrt_checkpoint_fill_fn)(void* user, int32_t index,
                                               uint64_t offset, uint64_t bytes,
                                               void* dst);

/* hmrt_checkpoint_write with the bytes from `fill` instead of the tensors'
 * `data` (ignored): a checkpoint larger than memory is written through one
 * buffer of at most 64 MiB.  A status other than HMRT_OK from `fill` is
 * returned as it is, with whatever message the caller set. */
hmrt_status hmrt_checkpoint_write_filled(const char* dir,
                                         const hmrt_checkpoint_meta* meta,
                                         int32_t count,
                                         const hmrt_checkpoint_tensor* tensors,
                                         hmrt_checkpoint_fill_fn fill,
                                         void* user);

/* Checks, without writing anything, that a save into `dir` would be allowed
 * by the rule of hmrt_checkpoint_write (the same status and message). */
hmrt_status hmrt_checkpoint_check_target(const char* dir);

/* Saves every parameter and optimizer state of `program` (their ranges in
 * the arenas of `exec`, in each descriptor's tier) as hmrt_checkpoint_write
 * does.  The bytes are read through the device interface (hmrt_copy into a
 * host-tier staging buffer of the context's device, in pieces). */
hmrt_status hmrt_checkpoint_save(const char* dir, const hmrt_program* program,
                                 const hmrt_exec* exec,
                                 const hmrt_checkpoint_meta* meta);

/* Loads `dir` into the arenas of `exec`, the execution context of `program`.
 * Refused, with a message saying what differs: a format version other than
 * HMRT_CHECKPOINT_FORMAT_VERSION; a manifest whose text does not match its
 * checksum (edited); another model name; when the manifest records them,
 * another program ABI version or optimizer; parameters and states that are
 * not exactly the program's (same kind, name, dtype and shape: a missing or
 * extra tensor is an error naming it); a tensor whose CRC-32 does not match.
 * The other hyper-parameters may differ (they are returned in meta->hyper).
 * Each tensor is written to its descriptor's tier through the device
 * interface.  Writes *meta (may be NULL).  Nothing is written to the arenas
 * before the manifest and the tensor list have been checked; a corrupt
 * tensor may leave them partly overwritten. */
hmrt_status hmrt_checkpoint_load(const char* dir, const hmrt_program* program,
                                 hmrt_exec* exec, hmrt_checkpoint_meta* meta);

/* Reads only the manifest's metadata. */
hmrt_status hmrt_checkpoint_read_meta(const char* dir,
                                      hmrt_checkpoint_meta* meta);

/* Reads the tensor called `name` (either kind; a parameter first when both
 * kinds use the name) into *out, checking its CRC-32.  Free with
 * hmrt_npy_free. */
hmrt_status hmrt_checkpoint_read_tensor(const char* dir, const char* name,
                                        hmrt_npy* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_IO_H */
