/* hmrt: the hmcc runtime.  Core C API: status codes, errors, threading, arenas.
 *
 * Conventions (see runtime/README.md):
 *  - Every fallible function returns an hmrt_status.  HMRT_OK is 0.
 *  - On failure the function also records a human-readable message for the
 *    calling thread, readable with hmrt_last_error().  Successful calls do not
 *    clear it (like errno), so read it only right after a failing call.
 *  - Output parameters are written only on success unless documented otherwise.
 *  - Handles are opaque; destroy functions accept NULL.
 *
 * This header is plain C (C99) and usable from C++.
 */
#ifndef HMRT_HMRT_H
#define HMRT_HMRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hmrt_status {
  HMRT_OK = 0,
  HMRT_INVALID_ARGUMENT = 1, /* bad shape, NULL pointer, bad flag, ... */
  HMRT_OUT_OF_MEMORY = 2,    /* an allocation failed */
  HMRT_IO_ERROR = 3,         /* a file or device operation failed */
  HMRT_OUT_OF_RANGE = 4,     /* an index or byte range outside its bounds */
  HMRT_UNIMPLEMENTED = 5,    /* valid request this build cannot serve */
  HMRT_INTERNAL = 6          /* a bug in the runtime */
} hmrt_status;

/* Name of a status code ("HMRT_OK", ...); "HMRT_UNKNOWN_STATUS" otherwise. */
const char* hmrt_status_string(hmrt_status status);

/* Message of the most recent failing hmrt call on this thread, or "" if none
 * failed yet.  The pointer stays valid until the next hmrt call on this
 * thread. */
const char* hmrt_last_error(void);

/* Forget this thread's last error message. */
void hmrt_clear_error(void);

/* Threads used by the CPU kernels of every calling thread.  n > 0 sets the
 * count, n == 0 restores the default (the hardware concurrency, or
 * OMP_NUM_THREADS when set); n < 0 is HMRT_INVALID_ARGUMENT. */
hmrt_status hmrt_set_num_threads(int n);
int hmrt_get_num_threads(void);

/* ---- arena ----------------------------------------------------------------
 * One contiguous block of exactly the planned size.  The base is 64-byte
 * aligned; the contents are uninitialised.  The compiler places every tensor
 * at a static offset inside it. */
typedef struct hmrt_arena hmrt_arena;

/* Creates an arena of `bytes` bytes (0 is allowed). */
hmrt_status hmrt_arena_create(size_t bytes, hmrt_arena** out);
void hmrt_arena_destroy(hmrt_arena* arena);
/* Size given at creation. 0 for NULL. */
size_t hmrt_arena_size(const hmrt_arena* arena);
/* *out = base + offset after checking offset + bytes <= size (overflow-safe);
 * otherwise HMRT_OUT_OF_RANGE and *out is untouched. */
hmrt_status hmrt_arena_ptr(const hmrt_arena* arena, size_t offset,
                           size_t bytes, void** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_HMRT_H */
