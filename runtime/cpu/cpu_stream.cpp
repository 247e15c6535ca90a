// Streams and events of the CPU backend: see cpu_stream.h.
#include "cpu/cpu_stream.h"

#include <new>

#include "core/internal.h"

namespace hmrt {

uint64_t CpuEvent::mark() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++marked_;
}

uint64_t CpuEvent::last_mark() {
  std::lock_guard<std::mutex> lock(mutex_);
  return marked_;
}

void CpuEvent::complete(uint64_t mark) {
  // Notified under the lock: whoever sees the mark complete may destroy the
  // event, and must not find this thread still inside it.
  std::lock_guard<std::mutex> lock(mutex_);
  if (mark > completed_) completed_ = mark;
  changed_.notify_all();
}

void CpuEvent::wait(uint64_t mark) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return completed_ >= mark; });
}

bool CpuEvent::done(uint64_t mark) {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ >= mark;
}

CpuStream::CpuStream(bool is_inline, int kernel_threads)
    : inline_(is_inline), kernel_threads_(kernel_threads) {
  if (!inline_) worker_ = std::thread([this] { run(); });
}

CpuStream::~CpuStream() {
  if (inline_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_one();
  worker_.join();
}

hmrt_status CpuStream::enqueue(Task task, bool sync) {
  if (inline_) return task();
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(Entry{std::move(task), sync});
  } catch (const std::bad_alloc&) {
    return fail(HMRT_OUT_OF_MEMORY, "cannot queue work on a stream");
  }
  work_.notify_one();
  return HMRT_OK;
}

void CpuStream::run() {
  cap_kernel_threads_of_this_thread(kernel_threads_);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything has run
    Entry entry = std::move(queue_.front());
    queue_.pop_front();
    const bool skip = !entry.sync && error_ != HMRT_OK;
    busy_ = true;
    lock.unlock();
    hmrt_status st = HMRT_OK;
    if (!skip) {
      hmrt_clear_error();
      st = entry.task();
    }
    entry.task = nullptr;  // release what the task holds outside the lock
    lock.lock();
    busy_ = false;
    if (st != HMRT_OK && error_ == HMRT_OK) {
      error_ = st;
      const char* text = hmrt_last_error();
      message_ = text[0] != '\0'
                     ? text
                     : std::string("work queued on a stream failed with ") +
                           hmrt_status_string(st);
    }
    if (queue_.empty()) drained_.notify_all();
  }
}

hmrt_status CpuStream::synchronize() {
  if (inline_) return HMRT_OK;
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [&] { return queue_.empty() && !busy_; });
  const hmrt_status st = error_;
  if (st == HMRT_OK) return HMRT_OK;
  const std::string message = std::move(message_);
  error_ = HMRT_OK;
  message_.clear();
  lock.unlock();
  return fail(st, "%s", message.c_str());
}

bool CpuStream::idle() {
  if (inline_) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.empty() && !busy_;
}

hmrt_status WorkerStreamBackend::event_create(void** impl) {
  *impl = new (std::nothrow) CpuEvent;
  if (*impl == nullptr)
    return fail(HMRT_OUT_OF_MEMORY, "hmrt_event_create: cannot allocate the event");
  return HMRT_OK;
}

hmrt_status WorkerStreamBackend::event_record(void* event, void* impl) {
  auto* e = static_cast<CpuEvent*>(event);
  const uint64_t mark = e->mark();
  return stream(impl)->submit_sync([e, mark] {
    e->complete(mark);
    return HMRT_OK;
  });
}

hmrt_status WorkerStreamBackend::stream_wait_event(void* impl, void* event) {
  auto* e = static_cast<CpuEvent*>(event);
  const uint64_t mark = e->last_mark();
  if (mark == 0) return HMRT_OK;  // never recorded: complete
  return stream(impl)->submit_sync([e, mark] {
    e->wait(mark);
    return HMRT_OK;
  });
}

hmrt_status WorkerStreamBackend::event_synchronize(void* event) {
  auto* e = static_cast<CpuEvent*>(event);
  e->wait(e->last_mark());
  return HMRT_OK;
}

hmrt_status WorkerStreamBackend::event_query(void* event, bool* done) {
  auto* e = static_cast<CpuEvent*>(event);
  *done = e->done(e->last_mark());
  return HMRT_OK;
}

}  // namespace hmrt
