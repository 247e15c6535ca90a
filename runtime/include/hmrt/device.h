/* hmrt/device.h: the device interface.  Everything the driver, checkpoint
 * I/O and generated programs do with memory goes through it: a device
 * (backend) opened by name, buffers in three memory tiers, copies and memset
 * between them, streams and events, and the kernels the backend provides.
 *
 * Backends.  A backend is opened by name from one registry
 * (runtime/core/registry.cpp, the only place a backend is added):
 * hmrt_backend_count() / hmrt_backend_name(i) list them: "cpu"
 * (runtime/cpu/device_cpu.cpp), and "cuda" (runtime/cuda/device_cuda.cpp)
 * in programs that link the hmrt_cuda library, where the CUDA toolkit was
 * found at build time.  Opening "cuda" on a machine without a usable GPU is
 * HMRT_IO_ERROR with the CUDA runtime's reason.
 *
 * Tiers.
 *  - HMRT_TIER_DEVICE: the device arena, the memory the backend's kernels
 *    compute on.  CPU: 64-byte aligned host memory.
 *  - HMRT_TIER_HOST: the pinned host pool, host memory the device copies to
 *    and from at full speed (staging for files, offloaded tensors).  CPU:
 *    64-byte aligned host memory.
 *  - HMRT_TIER_STORAGE: files (NVMe), large and slow, not addressable: only
 *    copies and memset reach it.  CPU: one unlinked temporary file per
 *    buffer in hmrt_storage_dir(), opened with O_DIRECT as well: page-aligned
 *    transfers go through io_uring, the rest through pread/pwrite (one line
 *    on stderr where O_DIRECT or io_uring is refused).
 * A new buffer's contents are unspecified (a storage buffer reads as zeros).
 *
 * Copies.  hmrt_copy* move bytes between any two buffers of one device, or
 * between a buffer and ordinary host memory (hmrt_copy_from_host,
 * hmrt_copy_to_host), at byte offsets.  Each range is checked against its
 * buffer (offset + bytes <= size, overflow-safe): otherwise
 * HMRT_OUT_OF_RANGE with a message such as "hmrt_copy: destination bytes
 * [1000, 1000 + 25) are outside the device buffer of 1024 bytes".  Two
 * ranges of the same buffer must not overlap.  The blocking forms return
 * when the bytes have arrived; the _async forms are queued on a stream and
 * the memory they name must stay valid (and unchanged, for sources) until
 * the stream has reached them.
 *
 * Streams and events, as CUDA's: work on one stream runs in submission
 * order; hmrt_event_record marks the point a stream has reached;
 * hmrt_stream_wait_event makes later work on a stream wait for an event; an
 * event never recorded counts as complete.  The CPU backend runs each
 * stream's work on a thread of its own, so streams overlap one another and
 * the submitting thread; an inline stream (hmrt_stream_create_inline) runs
 * its work on the submitting thread at submission instead.  The errors of
 * queued work are reported by hmrt_stream_synchronize: the first failure
 * since the last synchronize, with its message, after which the stream
 * skips queued copies and host functions (not event records and waits)
 * until that synchronize.
 *
 * Threads: handles may be used from several threads as long as no two
 * calls write the same bytes at once; destroying a handle in use is
 * undefined.  Conventions of hmrt.h: status codes, hmrt_last_error(),
 * outputs written only on success, destroy functions accept NULL.
 *
 * Plain C (C99), usable from C++.
 */
#ifndef HMRT_DEVICE_H
#define HMRT_DEVICE_H

#include "hmrt/hmrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tiers -------------------------------------------------------------- */

/* Device memory the CUDA backend holds beside the arenas programs plan,
 * allocated when the first "cuda" device opens: the kernels' scratch (index
 * tables, partial sums, kernel descriptors) and cuBLAS's workspace.  hmcc
 * --target cuda plans the device arena within --vram less their sum.  The
 * CUDA context itself (the driver's state and the loaded kernels) is not
 * counted. */
#define HMRT_CUDA_SCRATCH_BYTES (64ull << 20)
#define HMRT_CUDA_BLAS_WORKSPACE_BYTES (32ull << 20)

typedef enum hmrt_tier {
  HMRT_TIER_DEVICE = 0,  /* the device arena */
  HMRT_TIER_HOST = 1,    /* the pinned host pool */
  HMRT_TIER_STORAGE = 2  /* files */
} hmrt_tier;
#define HMRT_TIER_COUNT 3

/* "device", "host", "storage"; "unknown" for other values. */
const char* hmrt_tier_name(int32_t tier);

/* The folder new storage buffers' files go in: $HMRT_STORAGE_DIR, else
 * $TMPDIR, else /tmp, as the environment says at the call (the pointer is
 * valid until the environment changes). */
const char* hmrt_storage_dir(void);

/* ---- backends and devices ----------------------------------------------- */

typedef struct hmrt_device hmrt_device;
typedef struct hmrt_kernels hmrt_kernels;

/* Backends this build has, in registry order; index 0 is the default. */
int32_t hmrt_backend_count(void);
/* Name of backend `index` ("cpu"); NULL when index is out of range. */
const char* hmrt_backend_name(int32_t index);

/* Opens a device of backend `name`.  An unknown name is
 * HMRT_INVALID_ARGUMENT: "hmrt_device_open: unknown device backend 'cuda'
 * (this runtime has: cpu)". */
hmrt_status hmrt_device_open(const char* name, hmrt_device** out);
/* Closes the device.  Free its buffers, streams, events and execution
 * contexts first. */
void hmrt_device_close(hmrt_device* device);
/* The backend's name; "" for NULL. */
const char* hmrt_device_backend(const hmrt_device* device);
/* The backend's kernel table (below); NULL for NULL. */
const hmrt_kernels* hmrt_device_kernels(const hmrt_device* device);

/* ---- buffers ------------------------------------------------------------ */

typedef struct hmrt_buffer hmrt_buffer;

/* Allocates `bytes` (0 is allowed) in `tier`.  HMRT_INVALID_ARGUMENT for an
 * unknown tier, HMRT_OUT_OF_MEMORY (or HMRT_IO_ERROR for a storage file)
 * when it cannot. */
hmrt_status hmrt_buffer_alloc(hmrt_device* device, int32_t tier,
                              uint64_t bytes, hmrt_buffer** out);
void hmrt_buffer_free(hmrt_buffer* buffer);
/* Size given at allocation; 0 for NULL. */
uint64_t hmrt_buffer_size(const hmrt_buffer* buffer);
/* Its tier; -1 for NULL. */
int32_t hmrt_buffer_tier(const hmrt_buffer* buffer);
/* Its device; NULL for NULL. */
hmrt_device* hmrt_buffer_device(const hmrt_buffer* buffer);
/* *out = the host-visible address of bytes [offset, offset + bytes) after
 * checking the range like the copies (HMRT_OUT_OF_RANGE).  Only tiers with
 * host-visible memory have one: on the CPU backend the device and host
 * tiers; a storage buffer is HMRT_INVALID_ARGUMENT ("... has no host-visible
 * pointer: copy it to a device or host buffer").  Never NULL on success,
 * also for an empty buffer. */
hmrt_status hmrt_buffer_host_ptr(hmrt_buffer* buffer, uint64_t offset,
                                 uint64_t bytes, void** out);
/* *out = the address of bytes [offset, offset + bytes) as the backend's
 * kernels (hmrt_device_kernels) take it, range checked like the copies.  On
 * the CPU backend the host pointer of the device and host tiers; on the
 * CUDA backend the device address of the device tier and the (mapped)
 * address of the pinned host tier.  A storage buffer has none
 * (HMRT_INVALID_ARGUMENT). */
hmrt_status hmrt_buffer_device_ptr(hmrt_buffer* buffer, uint64_t offset,
                                   uint64_t bytes, void** out);

/* ---- copies and memset ---------------------------------------------------- */

typedef struct hmrt_stream hmrt_stream;
typedef struct hmrt_event hmrt_event;

/* dst[dst_offset ..] = src[src_offset ..], `bytes` bytes, between buffers
 * of the same device in any tiers. */
hmrt_status hmrt_copy(hmrt_buffer* dst, uint64_t dst_offset,
                      const hmrt_buffer* src, uint64_t src_offset,
                      uint64_t bytes);
/* From ordinary host memory `src` (NULL only when bytes == 0). */
hmrt_status hmrt_copy_from_host(hmrt_buffer* dst, uint64_t dst_offset,
                                const void* src, uint64_t bytes);
/* To ordinary host memory `dst` (NULL only when bytes == 0). */
hmrt_status hmrt_copy_to_host(void* dst, const hmrt_buffer* src,
                              uint64_t src_offset, uint64_t bytes);
/* Sets `bytes` bytes at `offset` to (unsigned char)value. */
hmrt_status hmrt_memset(hmrt_buffer* dst, uint64_t offset, int value,
                        uint64_t bytes);

/* The same, queued on `stream` (of the buffers' device). */
hmrt_status hmrt_copy_async(hmrt_buffer* dst, uint64_t dst_offset,
                            const hmrt_buffer* src, uint64_t src_offset,
                            uint64_t bytes, hmrt_stream* stream);
hmrt_status hmrt_copy_from_host_async(hmrt_buffer* dst, uint64_t dst_offset,
                                      const void* src, uint64_t bytes,
                                      hmrt_stream* stream);
hmrt_status hmrt_copy_to_host_async(void* dst, const hmrt_buffer* src,
                                    uint64_t src_offset, uint64_t bytes,
                                    hmrt_stream* stream);
hmrt_status hmrt_memset_async(hmrt_buffer* dst, uint64_t offset, int value,
                              uint64_t bytes, hmrt_stream* stream);

/* ---- streams and events --------------------------------------------------- */

hmrt_status hmrt_stream_create(hmrt_device* device, hmrt_stream** out);
/* A stream whose work runs on the submitting thread when it is submitted:
 * an _async call has finished when it returns and returns the work's own
 * status, events recorded on it complete at once, a wait on it blocks the
 * caller.  The CPU backend's generated programs compute on the thread that
 * calls them, which is such a stream.  HMRT_UNIMPLEMENTED on a backend
 * without them. */
hmrt_status hmrt_stream_create_inline(hmrt_device* device, hmrt_stream** out);
/* Queues fn(arg) on `stream`: a host thread runs it in stream order (the
 * CPU backend: the stream's thread).  A status other than HMRT_OK fails the
 * stream as a failing copy does; fn's hmrt_last_error() message goes with
 * it. */
hmrt_status hmrt_launch_host_func(hmrt_stream* stream,
                                  hmrt_status (*fn)(void* arg), void* arg);
void hmrt_stream_destroy(hmrt_stream* stream);
/* Waits until everything queued on the stream has finished. */
hmrt_status hmrt_stream_synchronize(hmrt_stream* stream);
/* *done = 1 when everything queued has finished, else 0. */
hmrt_status hmrt_stream_query(hmrt_stream* stream, int* done);

hmrt_status hmrt_event_create(hmrt_device* device, hmrt_event** out);
void hmrt_event_destroy(hmrt_event* event);
/* Marks the current end of `stream`'s work; the event completes when the
 * stream gets there.  Re-recording replaces the previous mark. */
hmrt_status hmrt_event_record(hmrt_event* event, hmrt_stream* stream);
/* Work queued on `stream` after this call waits for `event`. */
hmrt_status hmrt_stream_wait_event(hmrt_stream* stream, hmrt_event* event);
/* Waits until the event has completed. */
hmrt_status hmrt_event_synchronize(hmrt_event* event);
/* *done = 1 when the event has completed (or was never recorded), else 0. */
hmrt_status hmrt_event_query(hmrt_event* event, int* done);

/* The backend's kernel table, struct hmrt_kernels: hmrt/kernel_table.h. */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_DEVICE_H */
