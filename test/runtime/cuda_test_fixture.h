// The fixture of the CUDA backend's tests (cuda_backend_test.cpp,
// cuda_nn_test.cpp): a "cuda" device, or the test skipped with the CUDA
// runtime's reason, and device buffers filled from and read back to host
// vectors.
#ifndef HMRT_TEST_CUDA_TEST_FIXTURE_H
#define HMRT_TEST_CUDA_TEST_FIXTURE_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "hmrt/device.h"
#include "hmrt/kernel_table.h"

namespace hmrt_cuda_test {

inline std::string last_error() { return hmrt_last_error(); }

struct DeviceCloser {
  void operator()(hmrt_device* d) const { hmrt_device_close(d); }
};
struct BufferFreer {
  void operator()(hmrt_buffer* b) const { hmrt_buffer_free(b); }
};
using DevicePtr = std::unique_ptr<hmrt_device, DeviceCloser>;
using BufferPtr = std::unique_ptr<hmrt_buffer, BufferFreer>;

const int32_t kTiers[] = {HMRT_TIER_DEVICE, HMRT_TIER_HOST, HMRT_TIER_STORAGE};

// The bits of one element, for a failure's message.
template <class T>
inline std::string bits_of(const T& v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  static const char* hex = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = sizeof(T); i-- > 0;) {
    s += hex[b[i] >> 4];
    s += hex[b[i] & 15];
  }
  return s;
}

// a and b hold the same bits; where not, the first difference and how many
// elements differ.  With nan_payloads false, any NaN matches any NaN: the
// GPU's arithmetic returns its canonical NaN where x86 keeps the operand's
// sign and payload, which IEEE 754 leaves to the implementation.
template <class T>
inline ::testing::AssertionResult same_bits(const std::vector<T>& a, const std::vector<T>& b,
                                            bool nan_payloads = true) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
  size_t first = a.size(), count = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) == 0) continue;
    if constexpr (std::is_floating_point_v<T>) {
      if (!nan_payloads && std::isnan(a[i]) && std::isnan(b[i])) continue;
    }
    if (count++ == 0) first = i;
  }
  if (count == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << count << " of " << a.size() << " elements differ; the first at [" << first
         << "]: " << bits_of(a[first]) << " against " << bits_of(b[first]);
}

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    hmrt_device* d = nullptr;
    if (hmrt_device_open("cuda", &d) != HMRT_OK)
      GTEST_SKIP() << "no GPU here: " << last_error();
    dev_.reset(d);
    k_ = hmrt_device_kernels(d);
  }
  BufferPtr alloc(int32_t tier, uint64_t bytes) {
    hmrt_buffer* b = nullptr;
    EXPECT_EQ(hmrt_buffer_alloc(dev_.get(), tier, bytes, &b), HMRT_OK) << last_error();
    return BufferPtr(b);
  }
  std::vector<uint8_t> read_all(const hmrt_buffer* b) {
    std::vector<uint8_t> v(hmrt_buffer_size(b));
    EXPECT_EQ(hmrt_copy_to_host(v.data(), b, 0, v.size()), HMRT_OK) << last_error();
    return v;
  }
  // A device buffer holding `v`, and its kernel address.
  template <class T>
  BufferPtr upload(const std::vector<T>& v, T** ptr) {
    BufferPtr b = alloc(HMRT_TIER_DEVICE, v.size() * sizeof(T) + 4);
    if (!v.empty()) {
      EXPECT_EQ(hmrt_copy_from_host(b.get(), 0, v.data(), v.size() * sizeof(T)), HMRT_OK)
          << last_error();
    }
    void* p = nullptr;
    EXPECT_EQ(hmrt_buffer_device_ptr(b.get(), 0, v.size() * sizeof(T), &p), HMRT_OK)
        << last_error();
    *ptr = static_cast<T*>(p);
    return b;
  }
  template <class T>
  std::vector<T> download(const hmrt_buffer* b, size_t n) {
    std::vector<T> v(n);
    if (n != 0) {
      EXPECT_EQ(hmrt_copy_to_host(v.data(), b, 0, n * sizeof(T)), HMRT_OK) << last_error();
    }
    return v;
  }
  DevicePtr dev_;
  const hmrt_kernels* k_ = nullptr;
};

// Every got[i] within tol * max(1, max |want|) of want[i]: a bound for
// results whose sums the GPU takes in another order than the CPU.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                         double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1.0;
  for (float w : want)
    if (std::isfinite(w)) scale = std::max(scale, double(std::fabs(w)));
  size_t worst = 0;
  double err = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) || std::isinf(want[i])) {
      ASSERT_TRUE(std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i])
          << what << " [" << i << "]: " << got[i] << " vs " << want[i];
      continue;
    }
    const double e = std::fabs(double(got[i]) - double(want[i]));
    if (!(e <= err)) {
      err = e;
      worst = i;
    }
  }
  EXPECT_LE(err, tol * scale) << what << ": worst at [" << worst << "]: " << got[worst]
                              << " vs " << want[worst];
}

}  // namespace hmrt_cuda_test

#endif  // HMRT_TEST_CUDA_TEST_FIXTURE_H
