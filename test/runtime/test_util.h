// Shared helpers for the runtime unit tests: seeded random data, float <->
// double conversion, tolerance checks that report the worst element, and a
// guard that restores the thread count.
#ifndef HMRT_TEST_UTIL_H
#define HMRT_TEST_UTIL_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hmrt/kernels.h"

namespace hmrt_test {

// Unit roundoff of float32 (half an ulp of 1).
constexpr double kU = 1.0 / (1 << 24);

// Worst-case relative error of a float sum of n terms is gamma_n ~ n*u
// (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1).  Kernels
// here chain a few such sums (a mean, then a variance, then a dot product),
// so tolerances built on this allow 4 sums plus a few extra roundings.  A
// wrong formula shows up as an O(1) relative difference, far above it.
inline double reduction_tol(int64_t n) { return (4.0 * n + 16.0) * kU; }

// A deterministic byte pattern that differs for every salt and position
// (the device tests' copies).
inline std::vector<uint8_t> byte_pattern(size_t n, int salt) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>((i * 131 + salt * 29 + (i >> 8)) & 0xff);
  return v;
}

inline std::vector<float> random_vec(int64_t n, uint32_t seed,
                                     float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline std::vector<float> normal_vec(int64_t n, uint32_t seed,
                                     float stddev = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline std::vector<double> to_double(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Passes when |got[i] - want[i]| <= atol + rtol * |want[i]| for every i;
// otherwise reports the worst element.
inline ::testing::AssertionResult all_close(const std::vector<float>& got,
                                            const std::vector<double>& want,
                                            double atol, double rtol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " vs "
                                         << want.size();
  double worst = 0.0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    const double err = std::fabs(double(got[i]) - want[i]);
    const double allowed = atol + rtol * std::fabs(want[i]);
    const double ratio =
        err == 0.0 ? 0.0 : (std::isnan(err) ? INFINITY : err / allowed);
    if (ratio > worst) {
      worst = ratio;
      at = i;
    }
  }
  if (worst <= 1.0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "element " << at << ": got " << got[at] << ", want " << want[at]
         << " (error " << std::fabs(double(got[at]) - want[at])
         << ", allowed " << atol + rtol * std::fabs(want[at]) << ")";
}

// All-close with a per-element absolute tolerance.
inline ::testing::AssertionResult all_close(const std::vector<float>& got,
                                            const std::vector<double>& want,
                                            const std::vector<double>& atol) {
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - want[i]);
    if (!(err <= atol[i]))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i]
             << " (error " << err << ", allowed " << atol[i] << ")";
  }
  return ::testing::AssertionSuccess();
}

inline bool bitwise_equal(const std::vector<float>& a,
                          const std::vector<float>& b) {
  // Empty vectors may have null data(), which memcmp must not see.
  return a.size() == b.size() &&
         (a.empty() ||
          std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Sets the kernel thread count for one scope and restores the default.
class ThreadScope {
 public:
  explicit ThreadScope(int n) { hmrt_set_num_threads(n); }
  ~ThreadScope() { hmrt_set_num_threads(0); }
};

// Thread counts every kernel is run with: serial, this machine's default,
// and an odd count that splits work unevenly.
inline std::vector<int> thread_counts() { return {1, 2, 3}; }

}  // namespace hmrt_test

#define HMRT_ASSERT_OK(expr)                                          \
  do {                                                                \
    hmrt_status hmrt_test_st_ = (expr);                               \
    ASSERT_EQ(hmrt_test_st_, HMRT_OK)                                 \
        << #expr << ": " << hmrt_status_string(hmrt_test_st_) << ": " \
        << hmrt_last_error();                                         \
  } while (0)

// expr fails with `status` and a message containing `text`.
#define EXPECT_FAILS(expr, status, text)                                   \
  do {                                                                     \
    hmrt_clear_error();                                                    \
    EXPECT_EQ((expr), (status)) << #expr;                                  \
    EXPECT_NE(std::string(hmrt_last_error()).find(text), std::string::npos) \
        << "message: " << hmrt_last_error();                               \
  } while (0)

#endif  // HMRT_TEST_UTIL_H
