/* hmrt/program.h: the interface between a training program that hmcc
 * generates and the runtime's driver (the `train` executable).
 *
 * hmcc emits one C++ file per model that defines hmcc_program(). Everything
 * the program touches lives at static offsets in one arena per memory tier
 * (hmrt/device.h): data inputs, parameters, optimizer states, gradients and
 * activations; today every tensor is in the device tier. The driver opens
 * the program's device backend, creates an execution context (hmrt_exec:
 * the device, one arena buffer per tier of the planned size, its streams),
 * loads parameters and states from the state directory (or a checkpoint),
 * writes each step's inputs at their offsets, calls step(), and saves
 * checkpoints by copying the parameter and state ranges out of the arenas,
 * all through the device interface.
 *
 * ABI 3: step() and forward() take the execution context instead of the
 * device arena's base pointer; the program names its backend; arena sizes
 * per tier; a tier per tensor.  ABI 4 (this header): a parameter or state
 * may lie in pieces in several tiers (hmrt_tensor_piece).
 *
 * Plain C (C99), usable from C++.
 */
#ifndef HMRT_PROGRAM_H
#define HMRT_PROGRAM_H

#include "hmrt/device.h"
#include "hmrt/hmrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HMRT_PROGRAM_ABI_VERSION 4u

/* Element types, numbered as ONNX's TensorProto.DataType.  Storage is
 * little-endian; F16 is IEEE 754 binary16 and BF16 is bfloat16 (the top 16
 * bits of an IEEE binary32), each two bytes (uint16_t bits). */
typedef enum hmrt_dtype {
  HMRT_DTYPE_F32 = 1,
  HMRT_DTYPE_U8 = 2,
  HMRT_DTYPE_I8 = 3,
  HMRT_DTYPE_I32 = 6,
  HMRT_DTYPE_I64 = 7,
  HMRT_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  HMRT_DTYPE_F64 = 11,
  HMRT_DTYPE_U16 = 4,
  HMRT_DTYPE_I16 = 5,
  HMRT_DTYPE_F16 = 10,
  HMRT_DTYPE_U32 = 12,
  HMRT_DTYPE_U64 = 13,
  HMRT_DTYPE_BF16 = 16
} hmrt_dtype;

/* What a data input is fed with by the token loader. */
typedef enum hmrt_input_role {
  HMRT_ROLE_OTHER = 0,   /* only --feed NAME=FILE.npy can fill it */
  HMRT_ROLE_TOKENS = 1,  /* [B, T] token ids: window t..t+T of the data */
  HMRT_ROLE_TARGETS = 2  /* [B, T] next tokens: window t+1..t+T+1 */
} hmrt_input_role;

/* A piece of a parameter or optimizer state that lies in several places
 * (hmcc splits a parameter by rows where its chunks have different homes):
 * bytes [at, at + bytes) of the tensor, at `offset` of the arena of `tier`. */
typedef struct hmrt_tensor_piece {
  uint64_t at;
  uint64_t bytes;
  int32_t tier;    /* hmrt_tier */
  uint64_t offset; /* in its tier's arena, 64-byte aligned */
} hmrt_tensor_piece;

typedef struct hmrt_tensor_desc {
  const char* name;     /* the ONNX name (parameters: the initializer's) */
  int32_t dtype;        /* hmrt_dtype */
  int32_t rank;
  const int64_t* shape; /* rank entries */
  uint64_t offset;      /* byte offset in its tier's arena, 64-byte aligned */
  uint64_t bytes;       /* element count times element size */
  int32_t role;         /* hmrt_input_role, for data inputs; 0 otherwise */
  int32_t tier;         /* hmrt_tier of the arena holding it */
  /* 0: the tensor lies whole at (tier, offset).  Otherwise (parameters and
   * states only) its pieces, in order, each starting where the one before
   * ends, the first at 0 and the last ending at `bytes`; tier and offset
   * are the first's.  hmrt_exec_copy_tensor and hmrt_exec_write_tensor
   * follow them. */
  int32_t num_pieces;
  const hmrt_tensor_piece* pieces;
} hmrt_tensor_desc;

typedef enum hmrt_optimizer {
  HMRT_OPT_NONE = 0, /* forward-only program */
  HMRT_OPT_SGD = 1,  /* SGD with momentum (PyTorch semantics) */
  HMRT_OPT_ADAMW = 2,
  HMRT_OPT_ADAMW8BIT = 3,
  HMRT_OPT_ONNX = 4 /* the model's own algorithm (ONNX training_info); lr is 0
                       when the algorithm takes no learning-rate input */
} hmrt_optimizer;

typedef enum hmrt_lr_schedule {
  HMRT_LR_CONSTANT = 0,
  HMRT_LR_COSINE = 1 /* linear warm-up, then cosine decay to min_lr */
} hmrt_lr_schedule;

/* Hyper-parameters fixed at compile time (hmcc --optimizer, --lr, ...). */
typedef struct hmrt_hyperparams {
  int32_t optimizer;     /* hmrt_optimizer */
  float lr;
  float beta1, beta2, eps;
  float weight_decay;
  float momentum;
  float clip_norm;       /* 0: no clipping */
  int32_t lr_schedule;   /* hmrt_lr_schedule */
  int64_t warmup_steps;
  int64_t decay_steps;   /* cosine: steps until min_lr; 0 = the run's --steps */
  float min_lr;
} hmrt_hyperparams;

/* The execution context a generated program runs in: the device, one
 * arena buffer per tier (hmrt_exec_arena) and its streams.  The driver
 * creates it; generated code only reads it. */
typedef struct hmrt_exec hmrt_exec;

typedef struct hmrt_program {
  uint32_t abi_version; /* HMRT_PROGRAM_ABI_VERSION */
  const char* model_name;
  /* The device backend the code was generated for ("cpu"), opened with
   * hmrt_device_open; NULL or "" means the default, hmrt_backend_name(0). */
  const char* backend;
  /* Bytes of the arena of each tier.  arena_bytes is the device tier's. */
  uint64_t arena_bytes;
  uint64_t host_arena_bytes;    /* HMRT_TIER_HOST; 0 today */
  uint64_t storage_arena_bytes; /* HMRT_TIER_STORAGE; 0 today */
  int32_t num_inputs;
  const hmrt_tensor_desc* inputs;
  int32_t num_outputs; /* outputs[0] is the loss in a training program */
  const hmrt_tensor_desc* outputs;
  int32_t num_params;
  const hmrt_tensor_desc* params;
  int32_t num_states; /* optimizer states, saved with checkpoints */
  const hmrt_tensor_desc* states;
  int64_t vocab_size; /* rows of the token embedding; 0 when not a token model */
  hmrt_hyperparams hyper;

  /* One training step in `exec`: forward, backward, optimizer update.
   * `step` counts from 1 (bias correction); `lr` is this step's learning
   * rate (the driver applies the learning-rate schedule). Writes the loss computed before
   * the update and the global L2 norm of the gradients before clipping.
   * Generated code starts with
   *   uint8_t* arena = hmrt_exec_base(exec, HMRT_TIER_DEVICE);
   *   if (arena == NULL) return HMRT_INVALID_ARGUMENT;
   * addresses tensors as (T*)(arena + offset) and passes them to the
   * device's kernels (hmrt/kernel_table.h). */
  hmrt_status (*step)(hmrt_exec* exec, int64_t step, float lr, float* loss,
                      float* grad_norm);
  /* Forward only: computes every output; parameters are unchanged. */
  hmrt_status (*forward)(hmrt_exec* exec);

  /* The ops of step() and forward() in the order they run, by name ("tg.gemm
   * /fc1/Gemm": the op and the ONNX node it comes from): names for the
   * indices the functions pass to hmrt_trace_op (hmrt/trace.h).  An op of
   * another stream than compute ends with it: "tg.identity /fc1/Gemm
   * [stream host_to_device]" (also device_to_host, host_optimizer). */
  int32_t num_step_ops;
  const char* const* step_ops;
  int32_t num_forward_ops;
  const char* const* forward_ops;
} hmrt_program;

/* Where a parameter's initial value lies in the ONNX model it was compiled
 * from: `length` bytes of little-endian float32 at `offset` of the external
 * data file `location` (relative to the model's directory), or location
 * NULL when it is not raw float32 external data. */
typedef struct hmrt_weight_source {
  const char* location;
  uint64_t offset;
  uint64_t length;
} hmrt_weight_source;

/* Defined by the generated code. */
const hmrt_program* hmcc_program(void);
/* The source of each parameter, in hmcc_program()->params' order (*count
 * entries): what train --weights reads.  Generated code defines it; the
 * driver reaches it through a weak reference (programs built without it
 * have no --weights). */
const hmrt_weight_source* hmcc_weight_sources(int32_t* count);

/* ---- the execution context --------------------------------------------------
 * Streams of an execution context, one per kind of work of the planned
 * timeline (hmcc's --dump-schedule names them): compute (the program's
 * kernels; on the CPU backend the calling thread, an inline stream), copies
 * host to device and device to host, the host optimizer, and reads and
 * writes of the storage tier. */
#define HMRT_EXEC_STREAM_COMPUTE 0
#define HMRT_EXEC_STREAM_HOST_TO_DEVICE 1
#define HMRT_EXEC_STREAM_DEVICE_TO_HOST 2
#define HMRT_EXEC_STREAM_HOST_OPTIMIZER 3
#define HMRT_EXEC_STREAM_STORAGE_READ 4
#define HMRT_EXEC_STREAM_STORAGE_WRITE 5
#define HMRT_EXEC_STREAM_COUNT 6

/* Allocates one arena buffer per tier on `device`, of tier_bytes[tier] bytes
 * (0 allowed; contents unspecified), and the streams.  The device must
 * outlive the context. */
hmrt_status hmrt_exec_create(hmrt_device* device,
                             const uint64_t tier_bytes[HMRT_TIER_COUNT],
                             hmrt_exec** out);
/* hmrt_exec_create with the program's arena_bytes, host_arena_bytes and
 * storage_arena_bytes. */
hmrt_status hmrt_exec_create_for_program(hmrt_device* device,
                                         const hmrt_program* program,
                                         hmrt_exec** out);
void hmrt_exec_destroy(hmrt_exec* exec);
/* The device; NULL for NULL. */
hmrt_device* hmrt_exec_device(const hmrt_exec* exec);
/* The arena buffer of `tier`; NULL for NULL or an unknown tier. */
hmrt_buffer* hmrt_exec_arena(const hmrt_exec* exec, int32_t tier);
/* Stream `which` (HMRT_EXEC_STREAM_*); NULL for NULL or an unknown index. */
hmrt_stream* hmrt_exec_stream(const hmrt_exec* exec, int32_t which);
/* The base address of the arena of `tier` as the device's kernels address
 * it (hmrt_buffer_device_ptr), for generated code to call once at entry
 * (cheap: no allocation, no system call): on the CPU backend the host
 * pointer of the device and host arenas; on the CUDA backend the device
 * address of the device arena and the mapped address of the pinned host
 * arena.  NULL, with a message for hmrt_last_error, when exec is NULL, the
 * tier is unknown or the kernels cannot address it (the storage tier).
 * Never NULL for the device and host tiers, also for an empty arena. */
uint8_t* hmrt_exec_base(hmrt_exec* exec, int32_t tier);
/* For generated code, on addresses it computed from hmrt_exec_base:
 * hmrt_exec_copy copies `bytes` from `src` to `dst` (ranges that do not
 * overlap; `dst` inside the device or the host arena, `src` too or else the
 * program's static data in ordinary host memory), hmrt_exec_read copies
 * them from `src` (likewise) into ordinary host memory `dst` (a scalar the
 * program passes by value).  Blocking, on the calling thread, through the device
 * interface: memory the host cannot address (a GPU's) works too.
 * HMRT_INVALID_ARGUMENT for a destination outside both arenas. */
hmrt_status hmrt_exec_copy(hmrt_exec* exec, void* dst, const void* src,
                           uint64_t bytes);
hmrt_status hmrt_exec_read(hmrt_exec* exec, void* dst, const void* src,
                           uint64_t bytes);

/* Checks that the tensor `desc` describes lies inside arenas of
 * tier_bytes[tier] bytes, whole or in pieces that cover it in order.
 * HMRT_OUT_OF_RANGE or HMRT_INVALID_ARGUMENT, with a message naming the
 * tensor (and the piece) for hmrt_last_error, when not. */
hmrt_status hmrt_tensor_check_placed(const hmrt_tensor_desc* desc,
                                     const uint64_t tier_bytes[HMRT_TIER_COUNT]);
/* Copies bytes [at, at + n) of the tensor `desc` describes (a parameter or
 * state of the program `exec` runs, whole or in pieces) from or into
 * `buffer` at `buffer_offset`: into the tensor when `into_tensor` is
 * non-zero.  hmrt_exec_write_tensor writes them from ordinary host memory.
 * Blocking; the ranges are checked. */
hmrt_status hmrt_exec_copy_tensor(const hmrt_exec* exec, const hmrt_tensor_desc* desc,
                                  uint64_t at, hmrt_buffer* buffer,
                                  uint64_t buffer_offset, uint64_t n,
                                  int32_t into_tensor);
hmrt_status hmrt_exec_write_tensor(const hmrt_exec* exec, const hmrt_tensor_desc* desc,
                                   uint64_t at, const void* src, uint64_t n);

/* What generated code calls to run its ops on the context's streams, in
 * program order from the thread that calls step() or forward():
 *  - hmrt_exec_launch queues fn(arg) on stream `stream` (compute: runs it
 *    now);
 *  - hmrt_exec_record records the context's event `event` (numbered by the
 *    program from 0; created at first use) on stream `stream`;
 *  - hmrt_exec_wait makes later work on `stream` wait for it (compute: the
 *    caller waits);
 *  - hmrt_exec_join waits until every stream has run all its work and
 *    returns the first failure of any (with its message), else HMRT_OK.
 * A program joins before it returns, also when it fails. */
hmrt_status hmrt_exec_launch(hmrt_exec* exec, int32_t stream,
                             hmrt_status (*fn)(void* arg), void* arg);
hmrt_status hmrt_exec_record(hmrt_exec* exec, int32_t event, int32_t stream);
hmrt_status hmrt_exec_wait(hmrt_exec* exec, int32_t stream, int32_t event);
hmrt_status hmrt_exec_join(hmrt_exec* exec);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_PROGRAM_H */
