// The device interface (hmrt/device.h) on the CPU backend: the registry,
// buffers per tier, host pointers, blocking and asynchronous copies between
// every pair of tiers, memset, range errors, streams and events, the storage
// tier's files and the kernel table.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hmrt/device.h"
#include "hmrt/kernel_table.h"
#include "hmrt/kernels.h"
#include "hmrt/program.h"
#include "hmrt/tensor_ops.h"
#include "test_util.h"

namespace {

std::string last_error() { return hmrt_last_error(); }

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

const int32_t kTiers[] = {HMRT_TIER_DEVICE, HMRT_TIER_HOST, HMRT_TIER_STORAGE};

std::vector<uint8_t> read_all(const hmrt_buffer* b) {
  std::vector<uint8_t> v(hmrt_buffer_size(b));
  EXPECT_EQ(hmrt_copy_to_host(v.data(), b, 0, v.size()), HMRT_OK)
      << last_error();
  return v;
}

struct DeviceCloser {
  void operator()(hmrt_device* d) const { hmrt_device_close(d); }
};
struct BufferFreer {
  void operator()(hmrt_buffer* b) const { hmrt_buffer_free(b); }
};
using BufferPtr = std::unique_ptr<hmrt_buffer, BufferFreer>;

class Device : public ::testing::Test {
 protected:
  void SetUp() override {
    hmrt_device* d = nullptr;
    HMRT_ASSERT_OK(hmrt_device_open("cpu", &d));
    dev_.reset(d);
  }
  BufferPtr alloc(int32_t tier, uint64_t bytes) {
    hmrt_buffer* b = nullptr;
    EXPECT_EQ(hmrt_buffer_alloc(dev_.get(), tier, bytes, &b), HMRT_OK)
        << last_error();
    return BufferPtr(b);
  }
  std::unique_ptr<hmrt_device, DeviceCloser> dev_;
};

TEST(DeviceRegistry, OpensCpuAndNamesUnknownBackends) {
  ASSERT_GE(hmrt_backend_count(), 1);
  EXPECT_STREQ(hmrt_backend_name(0), "cpu");  // the default
  EXPECT_EQ(hmrt_backend_name(-1), nullptr);
  EXPECT_EQ(hmrt_backend_name(hmrt_backend_count()), nullptr);

  hmrt_device* d = nullptr;
  HMRT_ASSERT_OK(hmrt_device_open("cpu", &d));
  EXPECT_STREQ(hmrt_device_backend(d), "cpu");
  const hmrt_kernels* k = hmrt_device_kernels(d);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->backend, "cpu");
  hmrt_device_close(d);

  d = nullptr;
  EXPECT_EQ(hmrt_device_open("cuda", &d), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(d, nullptr);
  EXPECT_EQ(last_error(),
            "hmrt_device_open: unknown device backend 'cuda' (this runtime "
            "has: cpu)");
  EXPECT_EQ(hmrt_device_open(nullptr, &d), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_device_open("cpu", nullptr), HMRT_INVALID_ARGUMENT);
  hmrt_device_close(nullptr);  // allowed
  EXPECT_STREQ(hmrt_device_backend(nullptr), "");
  EXPECT_EQ(hmrt_device_kernels(nullptr), nullptr);
  EXPECT_STREQ(hmrt_tier_name(HMRT_TIER_DEVICE), "device");
  EXPECT_STREQ(hmrt_tier_name(HMRT_TIER_HOST), "host");
  EXPECT_STREQ(hmrt_tier_name(HMRT_TIER_STORAGE), "storage");
  EXPECT_STREQ(hmrt_tier_name(3), "unknown");
}

TEST_F(Device, AllocPerTierAndHostPointers) {
  for (int32_t tier : kTiers) {
    for (uint64_t bytes : {uint64_t{0}, uint64_t{1}, uint64_t{1000}}) {
      BufferPtr b = alloc(tier, bytes);
      ASSERT_NE(b, nullptr);
      EXPECT_EQ(hmrt_buffer_size(b.get()), bytes);
      EXPECT_EQ(hmrt_buffer_tier(b.get()), tier);
      EXPECT_EQ(hmrt_buffer_device(b.get()), dev_.get());
      void* p = nullptr;
      const hmrt_status st = hmrt_buffer_host_ptr(b.get(), 0, bytes, &p);
      if (tier == HMRT_TIER_STORAGE) {
        // Files are not addressable.
        EXPECT_EQ(st, HMRT_INVALID_ARGUMENT);
        EXPECT_EQ(p, nullptr);
        EXPECT_TRUE(contains(last_error(), "a storage buffer of the cpu "
                                           "backend has no host-visible "
                                           "pointer"))
            << last_error();
      } else {
        ASSERT_EQ(st, HMRT_OK) << last_error();
        ASSERT_NE(p, nullptr);  // also for 0 bytes
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
        if (bytes > 0) {
          std::memset(p, 0x5a, bytes);  // the memory is really there
          EXPECT_EQ(read_all(b.get()), std::vector<uint8_t>(bytes, 0x5a));
        }
        void* q = nullptr;
        if (bytes > 0) {
          HMRT_ASSERT_OK(hmrt_buffer_host_ptr(b.get(), bytes - 1, 1, &q));
          EXPECT_EQ(static_cast<uint8_t*>(q), static_cast<uint8_t*>(p) + bytes - 1);
        }
        EXPECT_EQ(hmrt_buffer_host_ptr(b.get(), bytes, 1, &q), HMRT_OUT_OF_RANGE);
        EXPECT_TRUE(contains(last_error(), "are outside the")) << last_error();
      }
    }
  }
  // A fresh storage buffer reads as zeros.
  BufferPtr s = alloc(HMRT_TIER_STORAGE, 5000);
  EXPECT_EQ(read_all(s.get()), std::vector<uint8_t>(5000, 0));

  hmrt_buffer* b = nullptr;
  EXPECT_EQ(hmrt_buffer_alloc(dev_.get(), 3, 8, &b), HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "hmrt_buffer_alloc: unknown tier 3"))
      << last_error();
  EXPECT_EQ(hmrt_buffer_alloc(dev_.get(), -1, 8, &b), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_buffer_alloc(nullptr, HMRT_TIER_DEVICE, 8, &b),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_buffer_alloc(dev_.get(), HMRT_TIER_DEVICE, 8, nullptr),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_buffer_alloc(dev_.get(), HMRT_TIER_HOST, UINT64_MAX, &b),
            HMRT_OUT_OF_MEMORY);
  EXPECT_EQ(b, nullptr);
  hmrt_buffer_free(nullptr);  // allowed
  EXPECT_EQ(hmrt_buffer_size(nullptr), 0u);
  EXPECT_EQ(hmrt_buffer_tier(nullptr), -1);
  EXPECT_EQ(hmrt_buffer_device(nullptr), nullptr);
}

// Blocking and asynchronous copies between every pair of tiers, at offsets,
// with the bytes checked at both ends and around the copied range.
TEST_F(Device, CopiesBetweenEveryPairOfTiers) {
  constexpr uint64_t kSize = 3 * 4096 + 77;
  hmrt_stream* stream = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &stream));
  int salt = 0;
  for (int32_t from : kTiers) {
    for (int32_t to : kTiers) {
      for (bool async : {false, true}) {
        SCOPED_TRACE(std::string(hmrt_tier_name(from)) + " -> " +
                     hmrt_tier_name(to) + (async ? " async" : ""));
        ++salt;
        BufferPtr src = alloc(from, kSize);
        BufferPtr dst = alloc(to, kSize);
        const std::vector<uint8_t> a = hmrt_test::byte_pattern(kSize, salt);
        const std::vector<uint8_t> b = hmrt_test::byte_pattern(kSize, salt + 1000);
        HMRT_ASSERT_OK(hmrt_copy_from_host(src.get(), 0, a.data(), kSize));
        HMRT_ASSERT_OK(hmrt_copy_from_host(dst.get(), 0, b.data(), kSize));
        const uint64_t so = 13, doff = 4099, n = 2 * 4096 + 5;
        if (async) {
          HMRT_ASSERT_OK(
              hmrt_copy_async(dst.get(), doff, src.get(), so, n, stream));
          HMRT_ASSERT_OK(hmrt_stream_synchronize(stream));
        } else {
          HMRT_ASSERT_OK(hmrt_copy(dst.get(), doff, src.get(), so, n));
        }
        std::vector<uint8_t> want = b;
        std::memcpy(want.data() + doff, a.data() + so, n);
        EXPECT_EQ(read_all(dst.get()), want);
        EXPECT_EQ(read_all(src.get()), a);  // the source is unchanged

        // Host memory in and out at offsets, blocking and async.
        std::vector<uint8_t> out(100, 0xcc);
        if (async) {
          HMRT_ASSERT_OK(hmrt_copy_to_host_async(out.data() + 10, dst.get(),
                                                 doff, 50, stream));
          HMRT_ASSERT_OK(hmrt_copy_from_host_async(dst.get(), 1, a.data(), 3,
                                                   stream));
          HMRT_ASSERT_OK(hmrt_stream_synchronize(stream));
        } else {
          HMRT_ASSERT_OK(hmrt_copy_to_host(out.data() + 10, dst.get(), doff, 50));
          HMRT_ASSERT_OK(hmrt_copy_from_host(dst.get(), 1, a.data(), 3));
        }
        EXPECT_EQ(std::memcmp(out.data() + 10, a.data() + so, 50), 0);
        EXPECT_EQ(out[9], 0xcc);
        EXPECT_EQ(out[60], 0xcc);
        std::memcpy(want.data() + 1, a.data(), 3);
        EXPECT_EQ(read_all(dst.get()), want);
      }
    }
  }
  hmrt_stream_destroy(stream);
}

// Copies inside one buffer: disjoint ranges work, overlapping ones are
// refused (as cudaMemcpy leaves them undefined).
TEST_F(Device, CopyWithinOneBuffer) {
  for (int32_t tier : kTiers) {
    BufferPtr b = alloc(tier, 4096);
    const std::vector<uint8_t> a = hmrt_test::byte_pattern(4096, 7);
    HMRT_ASSERT_OK(hmrt_copy_from_host(b.get(), 0, a.data(), 4096));
    HMRT_ASSERT_OK(hmrt_copy(b.get(), 2048, b.get(), 0, 2048));
    std::vector<uint8_t> want = a;
    std::memcpy(want.data() + 2048, a.data(), 2048);
    EXPECT_EQ(read_all(b.get()), want);
    EXPECT_EQ(hmrt_copy(b.get(), 100, b.get(), 0, 101), HMRT_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(last_error(), "hmrt_copy: source bytes [0, 0 + 101) "
                                       "and destination bytes [100, 100 + "
                                       "101) of the same buffer overlap"))
        << last_error();
    EXPECT_EQ(read_all(b.get()), want);
  }
}

TEST_F(Device, MemsetEveryTier) {
  hmrt_stream* stream = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &stream));
  for (int32_t tier : kTiers) {
    // Larger than the CPU backend's 1 MiB bounce buffer for files.
    const uint64_t size = (uint64_t{1} << 20) * 2 + 333;
    BufferPtr b = alloc(tier, size);
    const std::vector<uint8_t> a = hmrt_test::byte_pattern(size, 3);
    HMRT_ASSERT_OK(hmrt_copy_from_host(b.get(), 0, a.data(), size));
    HMRT_ASSERT_OK(hmrt_memset(b.get(), 10, 0x1ab, size - 20));  // byte 0xab
    HMRT_ASSERT_OK(hmrt_memset_async(b.get(), 0, 0, 5, stream));
    HMRT_ASSERT_OK(hmrt_stream_synchronize(stream));
    std::vector<uint8_t> want = a;
    std::memset(want.data() + 10, 0xab, size - 20);
    std::memset(want.data(), 0, 5);
    EXPECT_EQ(read_all(b.get()), want) << hmrt_tier_name(tier);
    HMRT_ASSERT_OK(hmrt_memset(b.get(), size, 0, 0));  // empty, at the end
  }
  hmrt_stream_destroy(stream);
}

TEST_F(Device, OutOfRangeAndArgumentErrors) {
  BufferPtr d = alloc(HMRT_TIER_DEVICE, 1024);
  BufferPtr h = alloc(HMRT_TIER_HOST, 512);
  BufferPtr s = alloc(HMRT_TIER_STORAGE, 256);
  hmrt_stream* stream = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &stream));
  std::vector<uint8_t> host(2048, 1);

  EXPECT_EQ(hmrt_copy(d.get(), 1000, h.get(), 0, 25), HMRT_OUT_OF_RANGE);
  EXPECT_EQ(last_error(),
            "hmrt_copy: destination bytes [1000, 1000 + 25) are outside the "
            "device buffer of 1024 bytes");
  EXPECT_EQ(hmrt_copy(d.get(), 0, h.get(), 500, 13), HMRT_OUT_OF_RANGE);
  EXPECT_EQ(last_error(),
            "hmrt_copy: source bytes [500, 500 + 13) are outside the host "
            "buffer of 512 bytes");
  EXPECT_EQ(hmrt_copy_async(s.get(), 0, d.get(), 0, 257, stream),
            HMRT_OUT_OF_RANGE);
  EXPECT_EQ(last_error(),
            "hmrt_copy_async: destination bytes [0, 0 + 257) are outside the "
            "storage buffer of 256 bytes");
  // offset + bytes would overflow: still out of range, not a wrap-around.
  EXPECT_EQ(hmrt_copy_to_host(host.data(), d.get(), 8, UINT64_MAX - 4),
            HMRT_OUT_OF_RANGE);
  EXPECT_EQ(hmrt_copy_from_host(s.get(), UINT64_MAX, host.data(), 2),
            HMRT_OUT_OF_RANGE);
  EXPECT_EQ(hmrt_memset(h.get(), 100, 0, 413), HMRT_OUT_OF_RANGE);
  EXPECT_EQ(last_error(),
            "hmrt_memset: bytes [100, 100 + 413) are outside the host buffer "
            "of 512 bytes");
  EXPECT_EQ(hmrt_memset_async(s.get(), 257, 0, 0, stream), HMRT_OUT_OF_RANGE);
  // Nothing was written by the failing calls.
  EXPECT_EQ(read_all(s.get()), std::vector<uint8_t>(256, 0));

  EXPECT_EQ(hmrt_copy(nullptr, 0, h.get(), 0, 1), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_copy(d.get(), 0, nullptr, 0, 1), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_copy_from_host(d.get(), 0, nullptr, 1), HMRT_INVALID_ARGUMENT);
  HMRT_ASSERT_OK(hmrt_copy_from_host(d.get(), 0, nullptr, 0));
  EXPECT_EQ(hmrt_copy_to_host(nullptr, d.get(), 0, 1), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_copy_async(d.get(), 0, h.get(), 0, 1, nullptr),
            HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "hmrt_copy_async: stream is NULL"))
      << last_error();

  // Handles of another device.
  hmrt_device* other = nullptr;
  HMRT_ASSERT_OK(hmrt_device_open("cpu", &other));
  hmrt_buffer* ob = nullptr;
  HMRT_ASSERT_OK(hmrt_buffer_alloc(other, HMRT_TIER_DEVICE, 64, &ob));
  hmrt_stream* os = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(other, &os));
  EXPECT_EQ(hmrt_copy(d.get(), 0, ob, 0, 8), HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "belong to different devices"))
      << last_error();
  EXPECT_EQ(hmrt_memset_async(d.get(), 0, 0, 8, os), HMRT_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "the stream belongs to another device"))
      << last_error();
  hmrt_stream_destroy(os);
  hmrt_buffer_free(ob);
  hmrt_device_close(other);
  hmrt_stream_destroy(stream);
}

// Work on one stream runs in order; an event recorded on stream A orders
// work on stream B after it (wait) and on the host (synchronize, query).
TEST_F(Device, StreamsAndEventsOrderWork) {
  hmrt_stream* a = nullptr;
  hmrt_stream* b = nullptr;
  hmrt_event* e = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &a));
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &b));
  HMRT_ASSERT_OK(hmrt_event_create(dev_.get(), &e));
  int done = -1;
  HMRT_ASSERT_OK(hmrt_event_query(e, &done));  // never recorded: complete
  EXPECT_EQ(done, 1);
  HMRT_ASSERT_OK(hmrt_event_synchronize(e));

  BufferPtr host = alloc(HMRT_TIER_HOST, 4096);
  BufferPtr dev = alloc(HMRT_TIER_DEVICE, 4096);
  BufferPtr file = alloc(HMRT_TIER_STORAGE, 4096);
  const std::vector<uint8_t> x = hmrt_test::byte_pattern(4096, 11);
  const std::vector<uint8_t> y = hmrt_test::byte_pattern(4096, 12);
  // Stream a: upload x, then overwrite its first half with y's; in order.
  HMRT_ASSERT_OK(hmrt_copy_from_host_async(host.get(), 0, x.data(), 4096, a));
  HMRT_ASSERT_OK(hmrt_copy_from_host_async(host.get(), 0, y.data(), 2048, a));
  HMRT_ASSERT_OK(hmrt_copy_async(dev.get(), 0, host.get(), 0, 4096, a));
  HMRT_ASSERT_OK(hmrt_event_record(e, a));
  // Stream b: after the event, spill the device copy to storage and back.
  HMRT_ASSERT_OK(hmrt_stream_wait_event(b, e));
  HMRT_ASSERT_OK(hmrt_copy_async(file.get(), 0, dev.get(), 0, 4096, b));
  HMRT_ASSERT_OK(hmrt_memset_async(dev.get(), 0, 0, 4096, b));
  HMRT_ASSERT_OK(hmrt_copy_async(dev.get(), 0, file.get(), 0, 4096, b));
  std::vector<uint8_t> out(4096);
  HMRT_ASSERT_OK(hmrt_copy_to_host_async(out.data(), dev.get(), 0, 4096, b));
  HMRT_ASSERT_OK(hmrt_event_record(e, b));
  HMRT_ASSERT_OK(hmrt_event_synchronize(e));
  HMRT_ASSERT_OK(hmrt_event_query(e, &done));
  EXPECT_EQ(done, 1);
  std::vector<uint8_t> want = x;
  std::memcpy(want.data(), y.data(), 2048);
  EXPECT_EQ(out, want);
  for (hmrt_stream* s : {a, b}) {
    HMRT_ASSERT_OK(hmrt_stream_synchronize(s));
    done = -1;
    HMRT_ASSERT_OK(hmrt_stream_query(s, &done));
    EXPECT_EQ(done, 1);
  }

  EXPECT_EQ(hmrt_event_record(e, nullptr), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_event_record(nullptr, a), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_stream_wait_event(a, nullptr), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_stream_query(a, nullptr), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_event_query(nullptr, &done), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_stream_synchronize(nullptr), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_event_synchronize(nullptr), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_stream_create(nullptr, &a), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_event_create(dev_.get(), nullptr), HMRT_INVALID_ARGUMENT);
  hmrt_event_destroy(e);
  hmrt_stream_destroy(b);
  hmrt_stream_destroy(a);
  hmrt_event_destroy(nullptr);  // allowed
  hmrt_stream_destroy(nullptr);
}

// What a host function does in these tests: appends its tag to a log, after
// waiting (when gated) until the test opens the gate.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
  std::vector<int> log;
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      open = true;
    }
    opened.notify_all();
  }
};
struct Step {
  Gate* gate;
  int tag;
  bool gated;
  hmrt_status status;
};
hmrt_status run_step(void* arg) {
  auto* s = static_cast<Step*>(arg);
  std::unique_lock<std::mutex> lock(s->gate->mutex);
  if (s->gated) s->gate->opened.wait(lock, [&] { return s->gate->open; });
  s->gate->log.push_back(s->tag);
  if (s->status != HMRT_OK) {
    // A failing call leaves its message, as a failing kernel would.
    hmrt_buffer_host_ptr(nullptr, 0, 0, nullptr);
  }
  return s->status;
}

// Streams run on threads of their own: work queued behind a blocked host
// function waits, the submitting thread does not, and an event orders a
// second stream's work after the first's.
TEST_F(Device, StreamsRunAsynchronouslyInOrder) {
  hmrt_stream* a = nullptr;
  hmrt_stream* b = nullptr;
  hmrt_event* e = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &a));
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &b));
  HMRT_ASSERT_OK(hmrt_event_create(dev_.get(), &e));
  Gate gate;
  Step first{&gate, 1, true, HMRT_OK}, second{&gate, 2, false, HMRT_OK},
      third{&gate, 3, false, HMRT_OK};
  HMRT_ASSERT_OK(hmrt_launch_host_func(a, run_step, &first));  // blocks on a
  HMRT_ASSERT_OK(hmrt_launch_host_func(a, run_step, &second));
  HMRT_ASSERT_OK(hmrt_event_record(e, a));
  HMRT_ASSERT_OK(hmrt_stream_wait_event(b, e));
  HMRT_ASSERT_OK(hmrt_launch_host_func(b, run_step, &third));
  // Still blocked: nothing ran, and the event and both streams are pending.
  int done = -1;
  HMRT_ASSERT_OK(hmrt_event_query(e, &done));
  EXPECT_EQ(done, 0);
  HMRT_ASSERT_OK(hmrt_stream_query(b, &done));
  EXPECT_EQ(done, 0);
  {
    std::lock_guard<std::mutex> lock(gate.mutex);
    EXPECT_TRUE(gate.log.empty());
  }
  gate.release();
  HMRT_ASSERT_OK(hmrt_stream_synchronize(b));
  EXPECT_EQ(gate.log, (std::vector<int>{1, 2, 3}));
  HMRT_ASSERT_OK(hmrt_event_query(e, &done));
  EXPECT_EQ(done, 1);
  EXPECT_EQ(hmrt_launch_host_func(a, nullptr, nullptr), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_launch_host_func(nullptr, run_step, &first),
            HMRT_INVALID_ARGUMENT);
  hmrt_event_destroy(e);
  hmrt_stream_destroy(b);
  hmrt_stream_destroy(a);
}

// A failure on a stream: later work there is skipped (event records are
// not), the next synchronize reports it with its message on the calling
// thread, and the stream works again afterwards.  An inline stream runs
// work at submission and returns its status.
TEST_F(Device, StreamFailuresAreReportedBySynchronize) {
  hmrt_stream* a = nullptr;
  hmrt_stream* b = nullptr;
  hmrt_event* e = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &a));
  HMRT_ASSERT_OK(hmrt_stream_create(dev_.get(), &b));
  HMRT_ASSERT_OK(hmrt_event_create(dev_.get(), &e));
  Gate gate;
  Step fails{&gate, 1, false, HMRT_IO_ERROR}, skipped{&gate, 2, false, HMRT_OK},
      after{&gate, 3, false, HMRT_OK}, later{&gate, 4, false, HMRT_OK};
  HMRT_ASSERT_OK(hmrt_launch_host_func(a, run_step, &fails));
  HMRT_ASSERT_OK(hmrt_launch_host_func(a, run_step, &skipped));
  HMRT_ASSERT_OK(hmrt_event_record(e, a));
  HMRT_ASSERT_OK(hmrt_stream_wait_event(b, e));
  HMRT_ASSERT_OK(hmrt_launch_host_func(b, run_step, &after));
  HMRT_ASSERT_OK(hmrt_stream_synchronize(b));  // the event completed
  hmrt_clear_error();
  EXPECT_EQ(hmrt_stream_synchronize(a), HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "hmrt_buffer_host_ptr")) << last_error();
  HMRT_ASSERT_OK(hmrt_stream_synchronize(a));  // reported once
  HMRT_ASSERT_OK(hmrt_launch_host_func(a, run_step, &later));
  HMRT_ASSERT_OK(hmrt_stream_synchronize(a));
  EXPECT_EQ(gate.log, (std::vector<int>{1, 3, 4}));

  hmrt_stream* now = nullptr;
  HMRT_ASSERT_OK(hmrt_stream_create_inline(dev_.get(), &now));
  Step inline_fail{&gate, 5, false, HMRT_IO_ERROR};
  EXPECT_EQ(hmrt_launch_host_func(now, run_step, &inline_fail), HMRT_IO_ERROR);
  EXPECT_EQ(gate.log.back(), 5);
  HMRT_ASSERT_OK(hmrt_event_record(e, now));
  int done = -1;
  HMRT_ASSERT_OK(hmrt_event_query(e, &done));
  EXPECT_EQ(done, 1);
  HMRT_ASSERT_OK(hmrt_stream_synchronize(now));
  hmrt_stream_destroy(now);
  hmrt_event_destroy(e);
  hmrt_stream_destroy(b);
  hmrt_stream_destroy(a);
}

// Page-aligned transfers between host memory and storage (the O_DIRECT
// path, through io_uring, and again with io_uring off in a thread of its
// own) keep every byte, and unaligned reads (the page-cache path) of the
// same file see them.
TEST_F(Device, StorageDirectTransfers) {
  const uint64_t size = (uint64_t{9} << 20) + 3 * 4096;  // not whole requests
  BufferPtr host = alloc(HMRT_TIER_HOST, size);
  BufferPtr back = alloc(HMRT_TIER_HOST, size);
  BufferPtr file = alloc(HMRT_TIER_STORAGE, size + 8192);
  void* p = nullptr;
  HMRT_ASSERT_OK(hmrt_buffer_host_ptr(host.get(), 0, size, &p));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  auto round_trip = [&](int salt) {
    const std::vector<uint8_t> a = hmrt_test::byte_pattern(size, salt);
    HMRT_ASSERT_OK(hmrt_copy_from_host(host.get(), 0, a.data(), size));
    HMRT_ASSERT_OK(hmrt_copy(file.get(), 4096, host.get(), 0, size));
    HMRT_ASSERT_OK(hmrt_copy(back.get(), 0, file.get(), 4096, size));
    EXPECT_EQ(read_all(back.get()), a);
    std::vector<uint8_t> part(1000);
    HMRT_ASSERT_OK(hmrt_copy_to_host(part.data(), file.get(), 4096 + 777777, 1000));
    EXPECT_EQ(std::memcmp(part.data(), a.data() + 777777, 1000), 0);
    // An aligned start with a partial last block (a tensor's tail): the
    // whole blocks directly, the tail through the page cache, both ways.
    const uint64_t odd = size - 100;
    const std::vector<uint8_t> b = hmrt_test::byte_pattern(odd, salt + 100);
    HMRT_ASSERT_OK(hmrt_copy_from_host(host.get(), 0, b.data(), odd));
    HMRT_ASSERT_OK(hmrt_copy(file.get(), 8192, host.get(), 0, odd));
    HMRT_ASSERT_OK(hmrt_memset(back.get(), 0, 0, size));
    HMRT_ASSERT_OK(hmrt_copy(back.get(), 0, file.get(), 8192, odd));
    std::vector<uint8_t> got = read_all(back.get());
    EXPECT_TRUE(std::equal(b.begin(), b.end(), got.begin()));
    EXPECT_TRUE(std::all_of(got.begin() + odd, got.end(), [](uint8_t x) { return x == 0; }));
  };
  round_trip(31);
  std::thread plain([&] {
    ::setenv("HMRT_NO_IO_URING", "1", 1);
    round_trip(32);
    ::unsetenv("HMRT_NO_IO_URING");
  });
  plain.join();
}

// The storage tier keeps bytes in a file of HMRT_STORAGE_DIR (or TMPDIR):
// a round trip of a few MiB through it, and a clear error for a folder that
// does not exist.
TEST_F(Device, StorageTierRoundTrip) {
  const uint64_t size = (uint64_t{3} << 20) + 12345;
  BufferPtr s = alloc(HMRT_TIER_STORAGE, size);
  BufferPtr s2 = alloc(HMRT_TIER_STORAGE, size);
  const std::vector<uint8_t> a = hmrt_test::byte_pattern(size, 21);
  HMRT_ASSERT_OK(hmrt_copy_from_host(s.get(), 0, a.data(), size));
  HMRT_ASSERT_OK(hmrt_copy(s2.get(), 0, s.get(), 0, size));  // file to file
  s.reset();  // the first file is gone; the copy keeps the bytes
  EXPECT_EQ(read_all(s2.get()), a);

  const char* old = std::getenv("HMRT_STORAGE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("HMRT_STORAGE_DIR", "/nonexistent/hmrt-storage", 1);
  EXPECT_STREQ(hmrt_storage_dir(), "/nonexistent/hmrt-storage");
  hmrt_buffer* b = nullptr;
  EXPECT_EQ(hmrt_buffer_alloc(dev_.get(), HMRT_TIER_STORAGE, 10, &b),
            HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "hmrt_buffer_alloc: cannot create a "
                                     "storage file in /nonexistent/hmrt-storage "
                                     "(set HMRT_STORAGE_DIR or train --nvme)"))
      << last_error();
  // An empty storage buffer needs no file.
  HMRT_ASSERT_OK(hmrt_buffer_alloc(dev_.get(), HMRT_TIER_STORAGE, 0, &b));
  hmrt_buffer_free(b);
  if (old)
    ::setenv("HMRT_STORAGE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("HMRT_STORAGE_DIR");
}

// The CPU backend's kernel table is the CPU kernels; a GEMM, a cast and an
// optimizer step through it on device-tier memory.
TEST_F(Device, CpuKernelTable) {
  const hmrt_kernels* k = hmrt_device_kernels(dev_.get());
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->size, sizeof(hmrt_kernels));
  EXPECT_EQ(k->sgemm, &hmrt_sgemm);
  EXPECT_EQ(k->sgemm_strided_batched, &hmrt_sgemm_strided_batched);
  EXPECT_EQ(k->cast, &hmrt_cast);
  EXPECT_EQ(k->fill, &hmrt_fill);
  EXPECT_EQ(k->global_norm, &hmrt_global_norm);
  EXPECT_EQ(k->scale, &hmrt_scale);
  EXPECT_EQ(k->adamw_step, &hmrt_adamw_step);
  EXPECT_EQ(k->sgd_step, &hmrt_sgd_step);
  EXPECT_EQ(k->matmul_f32, &hmrt_matmul_f32);
  EXPECT_EQ(k->fused_f32, &hmrt_fused_f32);
  EXPECT_EQ(k->attention_backward, &hmrt_attention_backward);
  EXPECT_EQ(k->where, &hmrt_where);
  EXPECT_EQ(k->matmul_f32_bf16, &hmrt_matmul_f32_bf16);
  EXPECT_EQ(k->gemm_bf16, &hmrt_gemm_bf16);
  EXPECT_EQ(k->round_bf16, &hmrt_round_bf16);
  EXPECT_EQ(k->fused_f32_to_bf16, &hmrt_fused_f32_to_bf16);
  EXPECT_EQ(k->layer_norm_f32_to_bf16, &hmrt_layer_norm_f32_to_bf16);
  EXPECT_EQ(k->sce_loss_backward_f32_to_bf16, &hmrt_sce_loss_backward_f32_to_bf16);
  EXPECT_EQ(k->matmul_mixed_bf16, &hmrt_matmul_mixed_bf16);
  EXPECT_EQ(k->gemm_mixed_bf16, &hmrt_gemm_mixed_bf16);  // the last entry
  // Every entry is there: the table is function pointers after the header.
  const size_t header = offsetof(hmrt_kernels, sgemm);
  const size_t entries = (sizeof(hmrt_kernels) - header) / sizeof(void (*)(void));
  EXPECT_EQ(entries, 56u);
  for (size_t i = 0; i < entries; ++i) {
    void (*entry)(void) = nullptr;
    std::memcpy(&entry, reinterpret_cast<const char*>(k) + header + i * sizeof entry,
                sizeof entry);
    EXPECT_NE(entry, nullptr) << "entry " << i;
  }
  // What a program returns for an entry a backend leaves NULL.
  EXPECT_EQ(hmrt_kernel_missing(k, "fused_f32"), HMRT_UNIMPLEMENTED);
  EXPECT_EQ(last_error(),
            "the cpu backend has no fused_f32 kernel yet, which this program calls: run it "
            "on another backend (train --device cpu)");

  BufferPtr b = alloc(HMRT_TIER_DEVICE, 256);
  void* p = nullptr;
  HMRT_ASSERT_OK(hmrt_buffer_host_ptr(b.get(), 0, 256, &p));
  float* f = static_cast<float*>(p);
  const float a[4] = {1, 2, 3, 4}, eye[4] = {1, 0, 0, 1};
  HMRT_ASSERT_OK(hmrt_copy_from_host(b.get(), 0, a, sizeof a));
  HMRT_ASSERT_OK(hmrt_copy_from_host(b.get(), 16, eye, sizeof eye));
  HMRT_ASSERT_OK(k->sgemm(0, 0, 2, 2, 2, 1.0f, f, 2, f + 4, 2, 0.0f, f + 8, 2));
  float c[4];
  HMRT_ASSERT_OK(hmrt_copy_to_host(c, b.get(), 32, sizeof c));
  EXPECT_EQ(std::vector<float>(c, c + 4), std::vector<float>(a, a + 4));
  uint16_t half[4];
  HMRT_ASSERT_OK(k->cast(HMRT_DTYPE_F32, f, HMRT_DTYPE_F16, f + 12, 4));
  HMRT_ASSERT_OK(hmrt_copy_to_host(half, b.get(), 48, sizeof half));
  EXPECT_EQ(half[0], 0x3c00);  // 1.0 in binary16
  EXPECT_EQ(half[3], 0x4400);  // 4.0
  // SGD without momentum: p -= lr * g.
  HMRT_ASSERT_OK(k->sgd_step(f, f + 4, nullptr, 4, 0.5, 0, 0, 0, 0, 1));
  HMRT_ASSERT_OK(hmrt_copy_to_host(c, b.get(), 0, sizeof c));
  EXPECT_EQ(c[0], 0.5f);
  EXPECT_EQ(c[1], 2.0f);
  EXPECT_EQ(c[3], 3.5f);
}

// The execution context of generated programs (hmrt/program.h): one arena
// per tier of the requested size, the streams, and the base pointers the
// generated code reads once at entry.
TEST_F(Device, ExecContextAccessors) {
  const uint64_t bytes[HMRT_TIER_COUNT] = {1000, 200, 3000};
  hmrt_exec* x = nullptr;
  HMRT_ASSERT_OK(hmrt_exec_create(dev_.get(), bytes, &x));
  EXPECT_EQ(hmrt_exec_device(x), dev_.get());
  for (int32_t t : kTiers) {
    hmrt_buffer* a = hmrt_exec_arena(x, t);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(hmrt_buffer_tier(a), t);
    EXPECT_EQ(hmrt_buffer_size(a), bytes[t]);
    EXPECT_EQ(hmrt_buffer_device(a), dev_.get());
    uint8_t* base = hmrt_exec_base(x, t);
    if (t == HMRT_TIER_STORAGE) {
      EXPECT_EQ(base, nullptr);
      EXPECT_EQ(last_error(),
                "hmrt_exec_base: the kernels of the cpu backend cannot "
                "address its storage arena");
      continue;
    }
    void* p = nullptr;
    HMRT_ASSERT_OK(hmrt_buffer_host_ptr(a, 0, bytes[t], &p));
    EXPECT_EQ(base, p);
    // What generated code writes at base + offset the interface reads back.
    const float v = 1.5f + t;
    std::memcpy(base + 64, &v, sizeof v);
    float got = 0;
    HMRT_ASSERT_OK(hmrt_copy_to_host(&got, a, 64, sizeof got));
    EXPECT_EQ(got, v);
  }
  hmrt_stream* compute = hmrt_exec_stream(x, HMRT_EXEC_STREAM_COMPUTE);
  hmrt_stream* copy = hmrt_exec_stream(x, HMRT_EXEC_STREAM_STORAGE_WRITE);
  ASSERT_NE(compute, nullptr);
  ASSERT_NE(copy, nullptr);
  EXPECT_NE(compute, copy);
  // A spill of the device arena to storage on the storage-write stream.
  HMRT_ASSERT_OK(hmrt_copy_async(hmrt_exec_arena(x, HMRT_TIER_STORAGE), 0,
                                 hmrt_exec_arena(x, HMRT_TIER_DEVICE), 0, 1000,
                                 copy));
  HMRT_ASSERT_OK(hmrt_stream_synchronize(copy));
  float spilled = 0;
  HMRT_ASSERT_OK(hmrt_copy_to_host(&spilled, hmrt_exec_arena(x, HMRT_TIER_STORAGE),
                                   64, sizeof spilled));
  EXPECT_EQ(spilled, 1.5f);

  EXPECT_EQ(hmrt_exec_arena(x, 3), nullptr);
  EXPECT_EQ(hmrt_exec_arena(x, -1), nullptr);
  EXPECT_EQ(hmrt_exec_stream(x, HMRT_EXEC_STREAM_COUNT), nullptr);
  EXPECT_EQ(hmrt_exec_base(x, 3), nullptr);
  EXPECT_EQ(last_error(), "hmrt_exec_base: unknown tier 3");
  EXPECT_EQ(hmrt_exec_base(nullptr, HMRT_TIER_DEVICE), nullptr);
  EXPECT_EQ(last_error(), "hmrt_exec_base: exec is NULL");
  EXPECT_EQ(hmrt_exec_device(nullptr), nullptr);
  EXPECT_EQ(hmrt_exec_arena(nullptr, 0), nullptr);
  EXPECT_EQ(hmrt_exec_stream(nullptr, 0), nullptr);
  hmrt_exec_destroy(x);
  hmrt_exec_destroy(nullptr);  // allowed

  // From a program's descriptor; empty arenas still have a base.
  hmrt_program p;
  std::memset(&p, 0, sizeof p);
  p.abi_version = HMRT_PROGRAM_ABI_VERSION;
  p.arena_bytes = 0;
  p.host_arena_bytes = 128;
  HMRT_ASSERT_OK(hmrt_exec_create_for_program(dev_.get(), &p, &x));
  EXPECT_EQ(hmrt_buffer_size(hmrt_exec_arena(x, HMRT_TIER_DEVICE)), 0u);
  EXPECT_EQ(hmrt_buffer_size(hmrt_exec_arena(x, HMRT_TIER_HOST)), 128u);
  EXPECT_EQ(hmrt_buffer_size(hmrt_exec_arena(x, HMRT_TIER_STORAGE)), 0u);
  EXPECT_NE(hmrt_exec_base(x, HMRT_TIER_DEVICE), nullptr);
  hmrt_exec_destroy(x);

  x = nullptr;
  EXPECT_EQ(hmrt_exec_create(nullptr, bytes, &x), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_exec_create(dev_.get(), nullptr, &x), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_exec_create_for_program(dev_.get(), nullptr, &x),
            HMRT_INVALID_ARGUMENT);
  const uint64_t huge[HMRT_TIER_COUNT] = {64, UINT64_MAX, 0};
  EXPECT_EQ(hmrt_exec_create(dev_.get(), huge, &x), HMRT_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(last_error(), "host tier")) << last_error();
  EXPECT_EQ(x, nullptr);
}

// The copies generated code makes on addresses it computed from the
// bases: between the arenas, from static data, and scalars read back.
TEST_F(Device, ExecCopyAndRead) {
  const uint64_t bytes[HMRT_TIER_COUNT] = {256, 128, 0};
  hmrt_exec* x = nullptr;
  HMRT_ASSERT_OK(hmrt_exec_create(dev_.get(), bytes, &x));
  uint8_t* dev = hmrt_exec_base(x, HMRT_TIER_DEVICE);
  uint8_t* host = hmrt_exec_base(x, HMRT_TIER_HOST);
  static const float kStatic[4] = {1.5f, -2.0f, 3.25f, 8.0f};
  HMRT_ASSERT_OK(hmrt_exec_copy(x, dev + 16, kStatic, sizeof kStatic));  // static data
  HMRT_ASSERT_OK(hmrt_exec_copy(x, host + 64, dev + 16, sizeof kStatic));  // device -> host
  HMRT_ASSERT_OK(hmrt_exec_copy(x, dev + 240, host + 64, 16));             // host -> device, at the end
  float got[4] = {0, 0, 0, 0};
  HMRT_ASSERT_OK(hmrt_exec_read(x, got, dev + 240, sizeof got));
  EXPECT_EQ(std::memcmp(got, kStatic, sizeof got), 0);
  float one = 0;
  HMRT_ASSERT_OK(hmrt_exec_read(x, &one, host + 68, sizeof one));
  EXPECT_EQ(one, -2.0f);
  HMRT_ASSERT_OK(hmrt_exec_read(x, &one, kStatic + 2, sizeof one));  // static data
  EXPECT_EQ(one, 3.25f);
  // A destination past the end of the arena, or outside both.
  EXPECT_EQ(hmrt_exec_copy(x, dev + 250, kStatic, 8), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(),
            "hmrt_exec_copy: the destination, 8 bytes, is not inside the device or the host "
            "arena");
  float outside[2];
  EXPECT_EQ(hmrt_exec_copy(x, outside, kStatic, 8), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_exec_copy(nullptr, dev, kStatic, 8), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_exec_read(x, nullptr, dev, 4), HMRT_INVALID_ARGUMENT);
  hmrt_exec_destroy(x);
}

// What generated code does with a context's streams: work launched on a
// copy stream runs beside the caller (compute), events numbered by the
// program order it, the caller's wait blocks until the event, and join
// returns the first failure of any stream.
TEST_F(Device, ExecStreamsLaunchRecordWaitJoin) {
  const uint64_t bytes[HMRT_TIER_COUNT] = {0, 0, 0};
  hmrt_exec* x = nullptr;
  HMRT_ASSERT_OK(hmrt_exec_create(dev_.get(), bytes, &x));
  Gate gate;
  Step fetch{&gate, 1, true, HMRT_OK}, update{&gate, 2, false, HMRT_OK},
      compute{&gate, 3, false, HMRT_OK};
  HMRT_ASSERT_OK(hmrt_exec_launch(x, HMRT_EXEC_STREAM_HOST_TO_DEVICE, run_step, &fetch));
  HMRT_ASSERT_OK(hmrt_exec_record(x, 7, HMRT_EXEC_STREAM_HOST_TO_DEVICE));
  HMRT_ASSERT_OK(hmrt_exec_wait(x, HMRT_EXEC_STREAM_HOST_OPTIMIZER, 7));
  HMRT_ASSERT_OK(hmrt_exec_launch(x, HMRT_EXEC_STREAM_HOST_OPTIMIZER, run_step, &update));
  {
    std::lock_guard<std::mutex> lock(gate.mutex);
    EXPECT_TRUE(gate.log.empty());  // the caller was not held up
  }
  gate.release();
  HMRT_ASSERT_OK(hmrt_exec_wait(x, HMRT_EXEC_STREAM_COMPUTE, 7));
  {
    std::lock_guard<std::mutex> lock(gate.mutex);
    EXPECT_EQ(gate.log.front(), 1);  // the fetch is done
  }
  HMRT_ASSERT_OK(hmrt_exec_launch(x, HMRT_EXEC_STREAM_COMPUTE, run_step, &compute));
  HMRT_ASSERT_OK(hmrt_exec_join(x));
  ASSERT_EQ(gate.log.size(), 3u);
  EXPECT_EQ(gate.log[0], 1);

  Step fails{&gate, 4, false, HMRT_IO_ERROR};
  HMRT_ASSERT_OK(hmrt_exec_launch(x, HMRT_EXEC_STREAM_DEVICE_TO_HOST, run_step, &fails));
  hmrt_clear_error();
  EXPECT_EQ(hmrt_exec_join(x), HMRT_IO_ERROR);
  EXPECT_TRUE(contains(last_error(), "hmrt_buffer_host_ptr")) << last_error();
  HMRT_ASSERT_OK(hmrt_exec_join(x));

  EXPECT_EQ(hmrt_exec_launch(x, HMRT_EXEC_STREAM_COUNT, run_step, &update),
            HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(last_error(), "hmrt_exec_launch: unknown stream 6");
  EXPECT_EQ(hmrt_exec_record(x, -1, 0), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_exec_wait(nullptr, 0, 0), HMRT_INVALID_ARGUMENT);
  EXPECT_EQ(hmrt_exec_join(nullptr), HMRT_INVALID_ARGUMENT);
  hmrt_exec_destroy(x);
}

}  // namespace
