// Streams and events of the CPU backend (hmrt/device.h).
//
// A CpuStream is either
//  - asynchronous: one worker thread runs its tasks in submission order, so
//    a copy or a host function queued on it overlaps the submitting thread
//    and the other streams; or
//  - inline: the submitting thread runs each task at once (the thread that
//    runs a generated program's compute is its compute stream).
// On the CPU backend a worker runs the kernels of its tasks on its own thread
// alone (no OpenMP team of its own to compete with the compute stream's for
// cores); the CUDA backend's workers, whose host has no compute to share
// its cores with, run them on the runtime's threads (a host optimizer
// update on every core).
// A task that fails makes the stream skip the work queued after it until
// the next synchronize, which reports the failure (status and message) on
// the synchronizing thread and clears it.  Event records and waits are never
// skipped, so no thread waits forever on an event behind a failure.
//
// A CpuEvent counts its marks: hmrt_event_record takes the next mark and the
// stream completes it when it gets there; a wait is for the latest mark at
// the time of the wait call.
#ifndef HMRT_CPU_CPU_STREAM_H
#define HMRT_CPU_CPU_STREAM_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/backend.h"
#include "hmrt/hmrt.h"

namespace hmrt {

class CpuEvent {
 public:
  // Takes the next mark (the event is pending until it completes).
  uint64_t mark();
  // The latest mark; 0 when never recorded.
  uint64_t last_mark();
  void complete(uint64_t mark);
  void wait(uint64_t mark);
  bool done(uint64_t mark);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t marked_ = 0, completed_ = 0;
};

class CpuStream {
 public:
  using Task = std::function<hmrt_status()>;

  // An asynchronous stream starts its worker here (may throw
  // std::system_error when no thread can be created); its tasks' kernels
  // run on `kernel_threads` threads, 0 for the runtime's count
  // (hmrt_set_num_threads).
  explicit CpuStream(bool is_inline, int kernel_threads = 1);
  // Waits for the queued tasks, then stops the worker.
  ~CpuStream();

  bool is_inline() const { return inline_; }
  // Queues work (skipped after a failure).  Inline: runs it and returns its
  // status.  Asynchronous: HMRT_OK, or HMRT_OUT_OF_MEMORY when it cannot be
  // queued.
  hmrt_status submit(Task task) { return enqueue(std::move(task), false); }
  // Queues an event record or wait: runs even after a failure.
  hmrt_status submit_sync(Task task) { return enqueue(std::move(task), true); }
  // Waits until every queued task has run; returns the first failure since
  // the last synchronize with its message for this thread, else HMRT_OK.
  hmrt_status synchronize();
  bool idle();

 private:
  struct Entry {
    Task task;
    bool sync;
  };
  hmrt_status enqueue(Task task, bool sync);
  void run();

  const bool inline_;
  const int kernel_threads_;
  std::mutex mutex_;
  std::condition_variable work_, drained_;
  std::deque<Entry> queue_;
  bool busy_ = false, stop_ = false;
  hmrt_status error_ = HMRT_OK;
  std::string message_;
  std::thread worker_;
};

// The streams and events of a backend whose streams are CpuStreams (the
// stream handle's impl is a CpuStream*): the CPU backend, and the CUDA
// backend, whose stream workers run blocking CUDA calls in order.  Events
// are CpuEvents: a stream's task has finished its work when it returns.
class WorkerStreamBackend : public Backend {
 public:
  static CpuStream* stream(void* impl) { return static_cast<CpuStream*>(impl); }

  hmrt_status stream_synchronize(void* impl) override {
    return stream(impl)->synchronize();
  }
  hmrt_status stream_query(void* impl, bool* done) override {
    *done = stream(impl)->idle();
    return HMRT_OK;
  }
  hmrt_status event_create(void** impl) override;
  void event_destroy(void* impl) override { delete static_cast<CpuEvent*>(impl); }
  hmrt_status event_record(void* event, void* stream) override;
  hmrt_status stream_wait_event(void* stream, void* event) override;
  hmrt_status event_synchronize(void* event) override;
  hmrt_status event_query(void* event, bool* done) override;
  hmrt_status launch_host_func(void* impl, hmrt_status (*fn)(void*),
                               void* arg) override {
    return stream(impl)->submit([fn, arg] { return fn(arg); });
  }
};

}  // namespace hmrt

#endif  // HMRT_CPU_CPU_STREAM_H
