/* hmrt/trace.h: timing of every op of a generated program.
 *
 * A program hmcc generates calls hmrt_trace_op(k, 0) before its op k and
 * hmrt_trace_op(k, 1) after it.  While tracing is off (the default) the call
 * only tests a flag.  Between hmrt_trace_start() and hmrt_trace_stop() each
 * call records an event with a steady-clock time; the driver (train --trace)
 * turns them into a Chrome trace.  Events are recorded by the thread that
 * runs each op (a stream's thread for ops on other streams than compute);
 * start, stop and reading happen between steps.
 *
 * Plain C (C99), usable from C++.
 */
#ifndef HMRT_TRACE_H
#define HMRT_TRACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hmrt_trace_event {
  int32_t op;   /* the op's index in its function */
  int32_t end;  /* 0: the op starts; 1: it has finished */
  int64_t ns;   /* nanoseconds since hmrt_trace_start() */
} hmrt_trace_event;

/* Clears the recorded events and starts recording. */
void hmrt_trace_start(void);
/* Stops recording; the events stay readable. */
void hmrt_trace_stop(void);
/* Nanoseconds since hmrt_trace_start(), on the events' clock. */
int64_t hmrt_trace_now(void);
/* Called by generated programs around each op. */
void hmrt_trace_op(int32_t op, int32_t end);
/* The events recorded since the last start or clear, oldest first; the
 * pointer stays valid until the next start, clear or recording call. */
const hmrt_trace_event* hmrt_trace_events(int64_t* count);
/* Forgets the recorded events and keeps recording if it was. */
void hmrt_trace_clear(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HMRT_TRACE_H */
