// The train driver (hmrt_train_main) run in-process on hand-written programs
// (driver_test_programs.h): training, metrics, --save/--resume, --feed,
// --eval/--dump-outputs, the learning-rate schedule and the error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "driver_test_programs.h"
#include "hmrt/driver.h"
#include "hmrt/io.h"
#include "io/json_util.h"
#include "io_test_util.h"
#include "test_util.h"

#include <fcntl.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace progs = hmrt_test_programs;
using hmrt_test::contains;
using hmrt_test::FileSizeLimit;
using hmrt_test::le;
using hmrt_test::read_bytes;
using hmrt_test::TempDir;
using hmrt_test::write_bytes;

struct Result {
  int rc;
  std::string out, err;
};

Result run_train(const hmrt_program* program, std::vector<std::string> args) {
  args.insert(args.begin(), "train");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Result r;
  r.rc = hmrt_train_main(static_cast<int>(args.size()), argv.data(), program);
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

// Resets the failure injection of the test programs around each test.
class Driver : public ::testing::Test {
 protected:
  void SetUp() override {
    progs::g_fail_at_step = 0;
    progs::g_nan_at_step = 0;
  }
  void TearDown() override {
    progs::g_fail_at_step = 0;
    progs::g_nan_at_step = 0;
    hmrt_set_num_threads(0);
  }

  // The bigram model's initial state (as hmcc writes it): zero logits and
  // zero momentum, so the first loss is ln 8.
  std::string bigram_state() {
    const std::string dir = dir_ / "state";
    static const float zeros[64] = {0};
    const hmrt_checkpoint_tensor list[] = {
        {"wte", HMRT_KIND_PARAM, HMRT_DTYPE_F32, 2, progs::bigram::kWShape,
         zeros},
        {"wte.momentum_buffer", HMRT_KIND_STATE, HMRT_DTYPE_F32, 2,
         progs::bigram::kWShape, zeros},
    };
    hmrt_checkpoint_meta m;
    std::memset(&m, 0, sizeof(m));
    std::strcpy(m.model, "bigram");
    EXPECT_EQ(hmrt_checkpoint_write(dir.c_str(), &m, 2, list), HMRT_OK)
        << hmrt_last_error();
    return dir;
  }

  // Raw uint16 tokens: mostly t -> (3t + 1) % 8, with 10% random tokens.
  std::string bigram_data(int64_t n = 4000, int64_t bad_at = -1) {
    const std::string path = dir_ / "data.bin";
    std::mt19937 rng(5);
    std::string bytes;
    int64_t t = 0;
    for (int64_t i = 0; i < n; ++i) {
      bytes += le(i == bad_at ? 9 : t, 2);
      t = rng() % 10 == 0 ? rng() % 8 : (3 * t + 1) % 8;
    }
    write_bytes(path, bytes);
    return path;
  }

  TempDir dir_;
};

// Every line of a --metrics file, parsed; checks the keys and step numbers.
std::vector<hmrt::json::Json> read_metrics(const std::string& path,
                                           int64_t first_step,
                                           const char* rate_key) {
  std::vector<hmrt::json::Json> lines;
  std::istringstream in(read_bytes(path));
  std::string line;
  int64_t step = first_step;
  while (std::getline(in, line)) {
    hmrt::json::Json v;
    std::string err;
    EXPECT_TRUE(hmrt::json::parse(line, &v, &err)) << line << ": " << err;
    EXPECT_TRUE(v.is_object()) << line;
    for (const char* key :
         {"step", "loss", "lr", "grad_norm", rate_key, "elapsed_s"}) {
      const auto* f = hmrt::json::member(v, key);
      EXPECT_TRUE(f != nullptr && f->is_number()) << key << " in " << line;
    }
    EXPECT_EQ(v.size(), 6u) << line;
    int64_t got = -1;
    const auto* s = hmrt::json::member(v, "step");
    EXPECT_TRUE(s && hmrt::json::get_int64(*s, &got)) << line;
    EXPECT_EQ(got, step++) << line;
    lines.push_back(v);
  }
  return lines;
}

double num(const hmrt::json::Json& v, const char* key) {
  const auto* f = hmrt::json::member(v, key);
  return f && f->is_number() ? f->get<double>() : NAN;
}

TEST_F(Driver, HelpDocumentsEveryFlag) {
  Result r = run_train(progs::bigram::program(), {"--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  for (const char* flag :
       {"--state DIR", "--data FILE", "--data-dtype u16|u32", "--steps N",
        "--seed S", "--log-every K", "--save DIR", "--save-every K",
        "--resume DIR", "--threads T", "--metrics FILE",
        "--feed NAME=FILE.npy", "--eval", "--dump-outputs DIR", "--force",
        "--quiet",
        "--help"})
    EXPECT_TRUE(contains(r.out, flag)) << flag;
  EXPECT_TRUE(contains(r.out, "model 'bigram', vocabulary 8")) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("idx +int64\\[4, 16\\] +from --data \\(tokens\\)")))
      << r.out;
  r = run_train(progs::linreg::program(), {"-h"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("x +float32\\[8, 2\\] +--feed NAME=FILE.npy")))
      << r.out;
}

TEST_F(Driver, TokenModelLossFalls) {
  const std::string state = bigram_state(), data = bigram_data();
  const std::string metrics = dir_ / "m.jsonl";
  Result r = run_train(progs::bigram::program(),
                       {"--state", state, "--data", data, "--steps", "60",
                        "--log-every", "20", "--metrics", metrics,
                        "--threads", "2"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Plain lines (stdout is not a terminal here), one per 20 steps.
  const std::regex line(
      "step (20|40|60)/60 \\| loss [0-9]\\.[0-9]{6,} \\| lr [0-9]\\.[0-9]{3}e-0[0-9] "
      "\\| grad norm [0-9]+\\.[0-9]{4} \\| [0-9]+ tok/s\n");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), line),
                          std::sregex_iterator()),
            3)
      << r.out;
  EXPECT_FALSE(contains(r.out, "\r")) << r.out;
  EXPECT_TRUE(contains(r.out, "batch 4 x 16 tokens")) << r.out;
  EXPECT_TRUE(contains(r.out, "done: 60 steps")) << r.out;

  const auto m = read_metrics(metrics, 1, "tokens_per_s");
  ASSERT_EQ(m.size(), 60u);
  EXPECT_NEAR(num(m[0], "loss"), std::log(8.0), 1e-5);
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) {
    first += num(m[i], "loss") / 10;
    last += num(m[50 + i], "loss") / 10;
  }
  EXPECT_LT(last, first - 0.5) << first << " -> " << last;
  EXPECT_LT(num(m[59], "loss"), 1.3);
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(static_cast<float>(num(m[i], "lr")),
              hmrt_lr_at(&progs::bigram::program()->hyper, i + 1, 60));
    EXPECT_GT(num(m[i], "tokens_per_s"), 0);
    EXPECT_GE(num(m[i], "elapsed_s"), 0);
  }
  EXPECT_EQ(num(m[4], "lr"), 1.0);  // the end of the 5-step warm-up

  r = run_train(progs::bigram::program(),
                {"--state", state, "--data", data, "--steps", "3", "--quiet"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(Driver, SaveAndResumeReproduceTheUninterruptedRun) {
  const std::string state = bigram_state(), data = bigram_data();
  const hmrt_program* p = progs::bigram::program();
  const std::string full = dir_ / "full.jsonl", full_ck = dir_ / "full_ck";
  Result r = run_train(p, {"--state", state, "--data", data, "--steps", "40",
                           "--seed", "7", "--metrics", full, "--save", full_ck});
  ASSERT_EQ(r.rc, 0) << r.err;

  // The same run stops at step 26 (as if it crashed) after saving every 10.
  const std::string ck = dir_ / "ck";
  progs::g_fail_at_step = 26;
  r = run_train(p, {"--state", state, "--data", data, "--steps", "40", "--seed",
                    "7", "--save", ck, "--save-every", "10"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "train: error: step 26 failed: HMRT_INTERNAL"))
      << r.err;
  EXPECT_TRUE(contains(r.out, "saved checkpoint " + ck + " (step 20)")) << r.out;
  hmrt_checkpoint_meta meta;
  HMRT_ASSERT_OK(hmrt_checkpoint_read_meta(ck.c_str(), &meta));
  EXPECT_EQ(meta.step, 20);
  EXPECT_EQ(meta.data_position, 20);
  EXPECT_EQ(meta.seed, 7u);
  EXPECT_STREQ(meta.model, "bigram");
  progs::g_fail_at_step = 0;

  // Resuming (no --seed: it comes from the checkpoint) gives the same
  // losses, learning rates and gradient norms, bit for bit.
  const std::string part = dir_ / "part.jsonl";
  r = run_train(p, {"--resume", ck, "--data", data, "--steps", "40",
                    "--metrics", part, "--save", ck});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "resumed from " + ck + " at step 20")) << r.out;
  const auto a = read_metrics(full, 1, "tokens_per_s");
  const auto b = read_metrics(part, 21, "tokens_per_s");
  ASSERT_EQ(a.size(), 40u);
  ASSERT_EQ(b.size(), 20u);
  for (size_t i = 0; i < b.size(); ++i)
    for (const char* key : {"loss", "lr", "grad_norm"})
      EXPECT_EQ(num(b[i], key), num(a[20 + i], key)) << key << " step " << 21 + i;
  // And the final parameters and states.
  for (const char* name : {"wte", "wte.momentum_buffer"}) {
    hmrt_npy x, y;
    HMRT_ASSERT_OK(hmrt_checkpoint_read_tensor(full_ck.c_str(), name, &x));
    HMRT_ASSERT_OK(hmrt_checkpoint_read_tensor(ck.c_str(), name, &y));
    ASSERT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(std::memcmp(x.data, y.data, x.bytes), 0) << name;
    hmrt_npy_free(&x);
    hmrt_npy_free(&y);
  }

  // A different --seed on resume is refused; a finished run has nothing to do.
  r = run_train(p, {"--resume", ck, "--data", data, "--steps", "50", "--seed",
                    "8"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "--seed 8 differs from the seed 7 of the "
                              "checkpoint"))
      << r.err;
  r = run_train(p, {"--resume", ck, "--data", data, "--steps", "40"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "nothing to do")) << r.out;
}

TEST_F(Driver, FeedTrainsAndEvalDumpsOutputs) {
  // y = 2 x0 - 3 x1 + 0.5
  std::vector<float> x(16), y(8);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int i = 0; i < 8; ++i) {
    x[2 * i] = d(rng);
    x[2 * i + 1] = d(rng);
    y[i] = 2 * x[2 * i] - 3 * x[2 * i + 1] + 0.5f;
  }
  const std::string xf = dir_ / "x.npy", yf = dir_ / "y.npy";
  const int64_t xs[] = {8, 2}, ys[] = {8};
  HMRT_ASSERT_OK(hmrt_npy_write(xf.c_str(), HMRT_DTYPE_F32, 2, xs, x.data()));
  HMRT_ASSERT_OK(hmrt_npy_write(yf.c_str(), HMRT_DTYPE_F32, 1, ys, y.data()));
  const std::string state = dir_ / "state";
  const float zeros[2] = {0, 0};
  const hmrt_checkpoint_tensor list[] = {
      {"w", HMRT_KIND_PARAM, HMRT_DTYPE_F32, 1, progs::linreg::kWShape, zeros},
      {"b", HMRT_KIND_PARAM, HMRT_DTYPE_F32, 0, nullptr, zeros},
  };
  hmrt_checkpoint_meta m;
  std::memset(&m, 0, sizeof(m));
  std::strcpy(m.model, "linreg");
  HMRT_ASSERT_OK(hmrt_checkpoint_write(state.c_str(), &m, 2, list));

  const hmrt_program* p = progs::linreg::program();
  const std::string ck = dir_ / "ck", metrics = dir_ / "m.jsonl";
  Result r = run_train(p, {"--state", state, "--feed", "x=" + xf, "--feed",
                           "y=" + yf, "--steps", "300", "--log-every", "100",
                           "--save", ck, "--metrics", metrics});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "step 300/300 | loss ")) << r.out;
  EXPECT_TRUE(contains(r.out, " examples/s\n")) << r.out;
  const auto lines = read_metrics(metrics, 1, "examples_per_s");
  ASSERT_EQ(lines.size(), 300u);
  EXPECT_LT(num(lines[299], "loss"), 1e-3 * num(lines[0], "loss"));

  // --eval on the checkpoint prints and dumps the outputs.
  const std::string out = dir_ / "out";
  r = run_train(p, {"--eval", "--resume", ck, "--feed", "x=" + xf, "--feed",
                    "y=" + yf, "--dump-outputs", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "output loss float32[] = [")) << r.out;
  EXPECT_TRUE(contains(r.out, "output pred float32[8] = [")) << r.out;
  hmrt_npy w, b, pred, loss;
  HMRT_ASSERT_OK(hmrt_checkpoint_read_tensor(ck.c_str(), "w", &w));
  HMRT_ASSERT_OK(hmrt_checkpoint_read_tensor(ck.c_str(), "b", &b));
  HMRT_ASSERT_OK(hmrt_npy_read((out + "/pred.npy").c_str(), &pred));
  HMRT_ASSERT_OK(hmrt_npy_read((out + "/loss.npy").c_str(), &loss));
  ASSERT_EQ(pred.rank, 1);
  ASSERT_EQ(pred.shape[0], 8);
  EXPECT_EQ(loss.rank, 0);
  const float* wv = static_cast<float*>(w.data);
  const float bv = *static_cast<float*>(b.data);
  EXPECT_NEAR(wv[0], 2.0f, 1e-2);
  EXPECT_NEAR(wv[1], -3.0f, 1e-2);
  EXPECT_NEAR(bv, 0.5f, 1e-2);
  std::string printed = "output pred float32[8] = [";
  for (int i = 0; i < 8; ++i) {
    const float want = bv + x[2 * i] * wv[0] + x[2 * i + 1] * wv[1];
    EXPECT_EQ(static_cast<float*>(pred.data)[i], want) << i;
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%s%.9g", i ? ", " : "", double(want));
    printed += buf;
  }
  EXPECT_TRUE(contains(r.out, printed + "]\n")) << r.out << "\n" << printed;
  for (hmrt_npy* a : {&w, &b, &pred, &loss}) hmrt_npy_free(a);
}

// A forward-only program over the 16-bit and unsigned types: inputs x
// bfloat16[4] and h float16[3], parameter p float16[2]; outputs y = x, g =
// (h[0], h[1], p[1]) and constant integer outputs of each new type.
namespace dtypes_prog {

constexpr uint64_t kX = 0, kH = 64, kP = 128, kY = 192, kG = 256, kI16 = 320,
                   kU16 = 384, kU32 = 448, kU64 = 512, kArena = 576;
const int64_t k4[] = {4}, k3[] = {3}, k2[] = {2};
constexpr int32_t kDev = HMRT_TIER_DEVICE;
const hmrt_tensor_desc kInputs[] = {
    {"x", HMRT_DTYPE_BF16, 1, k4, kX, 8, HMRT_ROLE_OTHER, kDev},
    {"h", HMRT_DTYPE_F16, 1, k3, kH, 6, HMRT_ROLE_OTHER, kDev},
};
const hmrt_tensor_desc kOutputs[] = {
    {"y", HMRT_DTYPE_BF16, 1, k4, kY, 8, 0, kDev},
    {"g", HMRT_DTYPE_F16, 1, k3, kG, 6, 0, kDev},
    {"i16", HMRT_DTYPE_I16, 1, k2, kI16, 4, 0, kDev},
    {"u16", HMRT_DTYPE_U16, 1, k2, kU16, 4, 0, kDev},
    {"u32", HMRT_DTYPE_U32, 1, k2, kU32, 8, 0, kDev},
    {"u64", HMRT_DTYPE_U64, 1, k2, kU64, 16, 0, kDev},
};
const hmrt_tensor_desc kParams[] = {
    {"p", HMRT_DTYPE_F16, 1, k2, kP, 4, 0, kDev},
};

hmrt_status forward(hmrt_exec* x) {
  uint8_t* a = hmrt_exec_base(x, HMRT_TIER_DEVICE);
  if (a == nullptr) return HMRT_INVALID_ARGUMENT;
  std::memcpy(a + kY, a + kX, 8);
  std::memcpy(a + kG, a + kH, 4);
  std::memcpy(a + kG + 4, a + kP + 2, 2);
  const int16_t i16[] = {-32768, 7};
  const uint16_t u16[] = {65535, 7};
  const uint32_t u32[] = {4294967295u, 7};
  const uint64_t u64[] = {UINT64_MAX, 7};
  std::memcpy(a + kI16, i16, 4);
  std::memcpy(a + kU16, u16, 4);
  std::memcpy(a + kU32, u32, 8);
  std::memcpy(a + kU64, u64, 16);
  return HMRT_OK;
}
hmrt_status step(hmrt_exec* a, int64_t, float, float* loss, float* grad_norm) {
  *loss = 0.0f;
  *grad_norm = 0.0f;
  return forward(a);
}

const hmrt_program kProgram = {
    HMRT_PROGRAM_ABI_VERSION, "dtypes", "cpu", kArena, 0, 0, 2, kInputs, 6,
    kOutputs, 1, kParams, 0, nullptr, 0,
    {HMRT_OPT_NONE, 0.0f, 0.9f, 0.999f, 1e-8f, 0.0f, 0.0f, 0.0f,
     HMRT_LR_CONSTANT, 0, 0, 0.0f},
    step, forward, 0, nullptr, 0, nullptr,
};

}  // namespace dtypes_prog

TEST_F(Driver, SixteenBitAndUnsignedTypes) {
  const std::string state = dir_ / "state";
  const uint16_t p[] = {0x3C00, 0x4200};  // float16 1, 3
  const hmrt_checkpoint_tensor list[] = {
      {"p", HMRT_KIND_PARAM, HMRT_DTYPE_F16, 1, dtypes_prog::k2, p}};
  hmrt_checkpoint_meta m;
  std::memset(&m, 0, sizeof(m));
  std::strcpy(m.model, "dtypes");
  HMRT_ASSERT_OK(hmrt_checkpoint_write(state.c_str(), &m, 1, list));
  // NumPy has no bfloat16: x comes as uint16 bits ('<u2'): 1, -2, NaN,
  // 0.333984375.
  const uint16_t xb[] = {0x3F80, 0xC000, 0x7FC0, 0x3EAB};
  const uint16_t hb[] = {0x3800, 0xBC00, 0x7BFF};  // float16 0.5, -1, 65504
  const std::string xf = dir_ / "x.npy", hf = dir_ / "h.npy";
  HMRT_ASSERT_OK(hmrt_npy_write(xf.c_str(), HMRT_DTYPE_U16, 1, dtypes_prog::k4, xb));
  HMRT_ASSERT_OK(hmrt_npy_write(hf.c_str(), HMRT_DTYPE_F16, 1, dtypes_prog::k3, hb));
  const std::string out = dir_ / "out";
  Result r = run_train(&dtypes_prog::kProgram,
                       {"--eval", "--state", state, "--feed", "x=" + xf,
                        "--feed", "h=" + hf, "--dump-outputs", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "output y bfloat16[4] = [1, -2, nan, 0.333984375]\n"
            "output g float16[3] = [0.5, -1, 3]\n"
            "output i16 int16[2] = [-32768, 7]\n"
            "output u16 uint16[2] = [65535, 7]\n"
            "output u32 uint32[2] = [4294967295, 7]\n"
            "output u64 uint64[2] = [18446744073709551615, 7]\n");
  // A bfloat16 output is dumped as '<u2' bits, float16 as '<f2'.
  EXPECT_TRUE(contains(read_bytes(out + "/y.npy"), "'descr': '<u2'"));
  EXPECT_TRUE(contains(read_bytes(out + "/g.npy"), "'descr': '<f2'"));
  EXPECT_TRUE(contains(read_bytes(out + "/u64.npy"), "'descr': '<u8'"));
  hmrt_npy y, g;
  HMRT_ASSERT_OK(hmrt_npy_read((out + "/y.npy").c_str(), &y));
  HMRT_ASSERT_OK(hmrt_npy_read((out + "/g.npy").c_str(), &g));
  EXPECT_EQ(y.dtype, HMRT_DTYPE_U16);
  ASSERT_EQ(y.bytes, 8u);
  EXPECT_EQ(std::memcmp(y.data, xb, 8), 0);
  EXPECT_EQ(g.dtype, HMRT_DTYPE_F16);
  const uint16_t gb[] = {0x3800, 0xBC00, 0x4200};
  ASSERT_EQ(g.bytes, 6u);
  EXPECT_EQ(std::memcmp(g.data, gb, 6), 0);
  hmrt_npy_free(&y);
  hmrt_npy_free(&g);
  // The dump feeds back in.
  r = run_train(&dtypes_prog::kProgram,
                {"--eval", "--state", state, "--feed", "x=" + out + "/y.npy",
                 "--feed", "h=" + hf, "--quiet"});
  EXPECT_EQ(r.rc, 0) << r.err;

  // Everything else stays strict: float16 bits for bfloat16, uint16 for
  // float16, int16 for bfloat16, and a wrong shape are all refused.
  const std::string f16x = dir_ / "f16x.npy", u16h = dir_ / "u16h.npy",
                    i16x = dir_ / "i16x.npy", u16x3 = dir_ / "u16x3.npy";
  HMRT_ASSERT_OK(hmrt_npy_write(f16x.c_str(), HMRT_DTYPE_F16, 1, dtypes_prog::k4, xb));
  HMRT_ASSERT_OK(hmrt_npy_write(u16h.c_str(), HMRT_DTYPE_U16, 1, dtypes_prog::k3, hb));
  HMRT_ASSERT_OK(hmrt_npy_write(i16x.c_str(), HMRT_DTYPE_I16, 1, dtypes_prog::k4, xb));
  HMRT_ASSERT_OK(hmrt_npy_write(u16x3.c_str(), HMRT_DTYPE_U16, 1, dtypes_prog::k3, xb));
  struct Bad {
    std::string x, h, message;
  } bad[] = {
      {f16x, hf, "--feed x=" + f16x + ": the file holds float16[4] but input "
                 "'x' is bfloat16[4] (a bfloat16 input takes a uint16 .npy of "
                 "its raw bits)"},
      {i16x, hf, "the file holds int16[4] but input 'x' is bfloat16[4]"},
      {u16x3, hf, "the file holds uint16[3] but input 'x' is bfloat16[4]"},
      {xf, u16h, "--feed h=" + u16h + ": the file holds uint16[3] but input "
                 "'h' is float16[3]\n"},
  };
  for (const Bad& b : bad) {
    r = run_train(&dtypes_prog::kProgram, {"--eval", "--state", state, "--feed",
                                           "x=" + b.x, "--feed", "h=" + b.h});
    EXPECT_EQ(r.rc, 1);
    EXPECT_TRUE(contains(r.err, b.message)) << r.err;
  }
}

TEST_F(Driver, EvalDrawsTokenInputsFromData) {
  const std::string state = bigram_state(), data = bigram_data();
  Result r = run_train(progs::bigram::program(),
                       {"--eval", "--state", state, "--data", data});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "output loss float32[] = [2.07944155]\n");  // ln 8
}

TEST_F(Driver, ErrorsAreOneClearLine) {
  const std::string state = bigram_state(), data = bigram_data();
  const std::string short_data = dir_ / "short.bin";
  write_bytes(short_data, std::string(2 * 16, '\0'));  // 16 tokens < T + 1
  const std::string bad_vocab = dir_ / "bad_vocab.bin";
  {
    // Every window of a 17-token file is [0, 17): token 9 at position 5.
    std::string bytes;
    for (int i = 0; i < 17; ++i) bytes += le(i == 5 ? 9 : 1, 2);
    write_bytes(bad_vocab, bytes);
  }
  const std::string wrong_state = dir_ / "wrong_state";
  {
    static const float zeros[64] = {0};
    const int64_t shape[] = {8, 4};
    const hmrt_checkpoint_tensor list[] = {
        {"wte", HMRT_KIND_PARAM, HMRT_DTYPE_F32, 2, shape, zeros},
        {"wte.momentum_buffer", HMRT_KIND_STATE, HMRT_DTYPE_F32, 2,
         progs::bigram::kWShape, zeros},
    };
    hmrt_checkpoint_meta m;
    std::memset(&m, 0, sizeof(m));
    std::strcpy(m.model, "bigram");
    HMRT_ASSERT_OK(hmrt_checkpoint_write(wrong_state.c_str(), &m, 2, list));
  }
  const std::string xf = dir_ / "x.npy";
  const std::string x64 = dir_ / "x64.npy";
  {
    const int64_t shape[] = {3, 2};
    const double v[6] = {0};
    HMRT_ASSERT_OK(hmrt_npy_write(xf.c_str(), HMRT_DTYPE_F32, 2, shape, v));
    const int64_t good[] = {8, 2};
    const double w[16] = {0};
    HMRT_ASSERT_OK(hmrt_npy_write(x64.c_str(), HMRT_DTYPE_F64, 2, good, w));
  }

  const std::vector<std::string> ok = {"--state", state, "--data", data};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = ok;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  struct Case {
    const hmrt_program* program;
    std::vector<std::string> args;
    std::string message;
  };
  const hmrt_program* bigram = progs::bigram::program();
  const hmrt_program* linreg = progs::linreg::program();
  const Case cases[] = {
      {bigram, with({"--steps", "5", "--bogus"}), "unknown flag '--bogus'"},
      {bigram, with({"--steps"}), "--steps needs a value"},
      {bigram, with({"--steps", "abc"}), "--steps: expected an integer >= 1, got 'abc'"},
      {bigram, with({"--steps", "0"}), "--steps: expected an integer >= 1, got '0'"},
      {bigram, with({"--steps", "5", "--steps", "6"}), "--steps is given twice"},
      {bigram, with({}), "--steps is required (or --eval)"},
      {bigram, with({"--steps", "5", "extra"}), "unexpected argument 'extra'"},
      {bigram, with({"--steps", "5", "--eval"}), "--steps cannot be used with --eval"},
      {bigram, with({"--steps", "5", "--save-every", "2"}), "--save-every needs --save"},
      {bigram, with({"--steps", "5", "--dump-outputs", "d"}), "--dump-outputs needs --eval"},
      {bigram, with({"--steps", "5", "--data-dtype", "u8"}),
       "--data-dtype: expected u16 or u32, got 'u8'"},
      {bigram, with({"--steps", "5", "--seed", "-1"}), "--seed: expected an integer"},
      {bigram, with({"--steps", "5", "--threads", "0"}), "--threads: expected an integer >= 1"},
      {bigram, with({"--steps", "5", "--quiet=1"}), "--quiet takes no value"},
      {bigram, with({"--steps", "5", "--feed", "idx"}), "--feed: expected NAME=FILE.npy, got 'idx'"},
      {bigram, {"--state", state, "--steps", "5"},
       "--data is required: input 'targets' is fed from token data"},
      {bigram, {"--state", state, "--steps", "5", "--data", dir_ / "none.bin"},
       "--data " + (dir_ / "none.bin") + ": cannot open the token data"},
      {bigram, {"--state", state, "--steps", "5", "--data", short_data},
       "--data " + short_data + ": the file has 16 tokens, fewer than one batch "
       "row needs (sequence length 16 + 1)"},
      {bigram, {"--state", state, "--steps", "5", "--data", bad_vocab},
       "--data " + bad_vocab + ": token at position 5 is 9, not below the "
       "vocabulary size 8"},
      {bigram, {"--state", dir_ / "nostate", "--data", data, "--steps", "5"},
       "--state " + (dir_ / "nostate") + ": no such checkpoint directory"},
      {bigram, {"--state", wrong_state, "--data", data, "--steps", "5"},
       "parameter 'wte' is float32[8, 4] in the checkpoint but float32[8, 8] "
       "in the program"},
      {bigram, {"--resume", dir_ / "nock", "--data", data, "--steps", "5"},
       "--resume " + (dir_ / "nock") + ": "},
      {bigram, with({"--steps", "5", "--feed", "nope=" + xf}),
       "--feed nope=" + xf + ": the program has no input 'nope' (its inputs: "
       "idx, targets)"},
      {linreg, {"--steps", "5", "--feed", "x=" + xf},
       "--feed x=" + xf + ": the file holds float32[3, 2] but input 'x' is "
       "float32[8, 2]"},
      {linreg, {"--steps", "5", "--feed", "x=" + x64},
       "the file holds float64[8, 2] but input 'x' is float32[8, 2]"},
      {linreg, {"--steps", "5", "--feed", "x=" + dir_ / "missing.npy"},
       "--feed x: " + (dir_ / "missing.npy") + ": cannot open"},
      {linreg, {"--steps", "5"},
       "input 'x' (float32[8, 2]) has no data: pass --feed x=FILE.npy"},
      {bigram, with({"--steps", "5", "--metrics", dir_ / "no/dir/m.jsonl"}),
       "--metrics " + (dir_ / "no/dir/m.jsonl") + ": cannot create"},
      {bigram, with({"--steps", "5", "--save", data}),
       "--save " + data + ": refusing to replace it with a checkpoint: it "
       "exists and is not a directory"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    Result r = run_train(c.program, c.args);
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err.rfind("train: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << r.err;
  }
  EXPECT_EQ(read_bytes(data).size(), 8000u);  // --save did not touch the file
}

// --save into a directory that only looks like a checkpoint (a file called
// manifest.json among others) is refused before any step, naming the
// reason, and every file there survives; also when it is a symbolic link.
TEST_F(Driver, SaveNeverDeletesForeignFiles) {
  const std::string state = bigram_state(), data = bigram_data();
  const std::string site = dir_ / "site";
  fs::create_directories(site);
  write_bytes(site + "/manifest.json", "{\"short_name\": \"app\"}");
  write_bytes(site + "/app.js", "main();");
  Result r = run_train(progs::bigram::program(),
                       {"--state", state, "--data", data, "--steps", "3",
                        "--save", site});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --save " + site +
                       ": refusing to replace it with a checkpoint: its "
                       "manifest.json is not an hmrt checkpoint manifest (no "
                       "\"format\": \"hmrt-checkpoint\")\n");
  EXPECT_FALSE(contains(r.out, "step 1/3")) << r.out;  // refused before work
  EXPECT_EQ(read_bytes(site + "/manifest.json"), "{\"short_name\": \"app\"}");
  EXPECT_EQ(read_bytes(site + "/app.js"), "main();");
  EXPECT_FALSE(fs::exists(site + ".tmp"));

  const std::string link = dir_ / "link";
  fs::create_directory_symlink(dir_ / "elsewhere", link);
  r = run_train(progs::bigram::program(),
                {"--state", state, "--data", data, "--steps", "3", "--save",
                 link});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "--save " + link + ": refusing to replace it "
                              "with a checkpoint: it is a symbolic link"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere"));
}

// A checkpoint whose manifest was edited (step 3 -> 7), or that another
// optimizer's program saved, is refused by --resume with one line saying
// what is wrong.
TEST_F(Driver, ResumeRefusesEditedOrForeignCheckpoints) {
  const std::string state = bigram_state(), data = bigram_data();
  const std::string ck = dir_ / "ck";
  Result r = run_train(progs::bigram::program(),
                       {"--state", state, "--data", data, "--steps", "3",
                        "--save", ck, "--quiet"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string manifest = read_bytes(ck + "/manifest.json");
  std::string edited = manifest;
  const size_t at = edited.find("\"step\": 3,");
  ASSERT_NE(at, std::string::npos) << manifest;
  edited.replace(at, 10, "\"step\": 7,");
  write_bytes(ck + "/manifest.json", edited);
  r = run_train(progs::bigram::program(),
                {"--resume", ck, "--data", data, "--steps", "10"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(std::regex_match(
      r.err, std::regex("train: error: --resume .*/ck/manifest.json: checksum "
                        "mismatch: \"manifest_crc32\" is [0-9]+ but the text "
                        "before it has CRC-32 [0-9]+; the manifest was edited "
                        "or is corrupt, and an edited manifest is refused\n")))
      << r.err;
  EXPECT_EQ(r.out, "");

  write_bytes(ck + "/manifest.json", manifest);
  hmrt_program adamw = *progs::bigram::program();
  adamw.hyper.optimizer = HMRT_OPT_ADAMW;
  r = run_train(&adamw, {"--resume", ck, "--data", data, "--steps", "10"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --resume " + ck +
                       ": the checkpoint was saved by optimizer sgd, this "
                       "program uses adamw\n");
  hmrt_program other_model = *progs::bigram::program();
  other_model.model_name = "bigram2";
  r = run_train(&other_model, {"--resume", ck, "--data", data, "--steps", "10"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --resume " + ck +
                       ": the checkpoint is for model 'bigram', this program "
                       "is 'bigram2'\n");
  r = run_train(progs::bigram::program(),
                {"--resume", ck, "--data", data, "--steps", "4", "--quiet"});
  EXPECT_EQ(r.rc, 0) << r.err;
  // Another learning rate is allowed, and reported.
  hmrt_program lr = *progs::bigram::program();
  lr.hyper.lr = 0.5f;
  r = run_train(&lr, {"--resume", ck, "--data", data, "--steps", "5"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "note: this program's hyper-parameters differ "
                              "from the checkpoint's (lr 1 -> 0.5); continuing "
                              "with this program's\n"))
      << r.out;
}

// The files in `dir` whose names contain ".tmp." (temporaries of outputs).
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (contains(e.path().filename().string(), ".tmp."))
      found.push_back(e.path().string());
  return found;
}

// An existing output file is replaced only with --force, else refused before
// any work with one line naming the flag; a symbolic link is never written
// through, not even with --force; nothing is left beside the outputs.
// No output may name another output or an input, even with --force: the
// data, the state and the resumed checkpoint survive.
TEST_F(Driver, OutputsNeverNameInputsOrEachOther) {
  const std::string state = bigram_state(), data = bigram_data();
  const std::string data_bytes = read_bytes(data);
  const std::vector<std::string> base = {"--state", state, "--data", data,
                                         "--steps", "4", "--force"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const hmrt_program* bigram = progs::bigram::program();
  const std::string same = dir_ / "same.json";
  Result r = run_train(bigram, with({"--metrics", same, "--trace", same}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --metrics " + same + " and --trace " + same +
                       " name the same place\n");
  r = run_train(bigram, with({"--metrics", data}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --metrics " + data +
                       ": it is, holds or lies inside the input --data " + data +
                       "; train never writes over its inputs\n");
  EXPECT_EQ(read_bytes(data), data_bytes);
  r = run_train(bigram, with({"--save", state}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "lies inside the input --state")) << r.err;
  EXPECT_EQ(r.out, "");  // refused before any work
}

TEST_F(Driver, OutputsNeedForceAndNeverFollowLinks) {
  const std::string state = bigram_state(), data = bigram_data();
  const std::vector<std::string> base = {"--state", state, "--data", data,
                                         "--steps", "4"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const hmrt_program* bigram = progs::bigram::program();
  const std::string metrics = dir_ / "m.jsonl", trace = dir_ / "t.json";
  write_bytes(metrics, "previous metrics\n");
  write_bytes(trace, "previous trace\n");
  Result r = run_train(bigram, with({"--metrics", metrics}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --metrics " + metrics +
                       ": the file exists; pass --force to replace it\n");
  EXPECT_EQ(r.out, "");  // refused before any work
  EXPECT_EQ(read_bytes(metrics), "previous metrics\n");
  r = run_train(bigram, with({"--trace", trace}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --trace " + trace +
                       ": the file exists; pass --force to replace it\n");
  EXPECT_EQ(read_bytes(trace), "previous trace\n");
  r = run_train(bigram, with({"--metrics", metrics, "--trace", trace,
                              "--force", "--quiet"}));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_metrics(metrics, 1, "tokens_per_s").size(), 4u);
  EXPECT_TRUE(contains(read_bytes(trace), "\"traceEvents\"")) << read_bytes(trace);
  EXPECT_EQ(temporaries(dir_.str()), std::vector<std::string>());

  // Symbolic links: refused with or without --force; the target is intact.
  const std::string victim = dir_ / "victim.txt", link = dir_ / "link.jsonl";
  write_bytes(victim, "precious\n");
  fs::create_symlink(victim, link);
  for (const char* flag : {"--metrics", "--trace"}) {
    r = run_train(bigram, with({flag, link, "--force"}));
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "train: error: " + std::string(flag) + " " + link +
                         ": it is a symbolic link; train never writes through "
                         "one (remove it or name another file)\n");
  }
  EXPECT_EQ(read_bytes(victim), "precious\n");
  EXPECT_TRUE(fs::is_symlink(link));
  r = run_train(bigram, with({"--metrics", dir_.str(), "--force"}));
  EXPECT_EQ(r.err, "train: error: --metrics " + dir_.str() + ": it is a directory\n");

  // --save into an existing checkpoint needs --force, except the one the
  // run resumes from.
  const std::string ck = dir_ / "ck";
  r = run_train(bigram, with({"--save", ck, "--quiet"}));
  ASSERT_EQ(r.rc, 0) << r.err;
  r = run_train(bigram, with({"--save", ck}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --save " + ck +
                       ": it holds a checkpoint already; pass --force to "
                       "replace it\n");
  r = run_train(bigram, {"--resume", ck, "--data", data, "--steps", "6",
                         "--save", ck + "/", "--quiet"});
  EXPECT_EQ(r.rc, 0) << r.err;
  r = run_train(bigram, with({"--save", ck, "--force", "--quiet"}));
  EXPECT_EQ(r.rc, 0) << r.err;
  hmrt_checkpoint_meta meta;
  HMRT_ASSERT_OK(hmrt_checkpoint_read_meta(ck.c_str(), &meta));
  EXPECT_EQ(meta.step, 4);
  fs::create_directories(dir_ / "empty");
  r = run_train(bigram, with({"--save", dir_ / "empty", "--quiet"}));
  EXPECT_EQ(r.rc, 0) << r.err;  // an empty directory holds nothing to lose
}

TEST_F(Driver, DumpOutputsNeedForceAndNeverFollowLinks) {
  const std::string state = bigram_state(), data = bigram_data();
  const hmrt_program* bigram = progs::bigram::program();
  const std::string out = dir_ / "out";
  fs::create_directories(out);
  write_bytes(out + "/loss.npy", "previous");
  write_bytes(out + "/other.txt", "mine");
  const std::vector<std::string> eval = {"--state", state, "--data", data,
                                         "--eval", "--quiet", "--dump-outputs"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = eval;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Result r = run_train(bigram, with({out}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --dump-outputs " + out +
                       "/loss.npy: the file exists; pass --force to replace "
                       "it\n");
  EXPECT_EQ(read_bytes(out + "/loss.npy"), "previous");
  r = run_train(bigram, with({out, "--force"}));
  ASSERT_EQ(r.rc, 0) << r.err;
  hmrt_npy npy;
  HMRT_ASSERT_OK(hmrt_npy_read((out + "/loss.npy").c_str(), &npy));
  EXPECT_NEAR(*static_cast<float*>(npy.data), std::log(8.0), 1e-5);
  hmrt_npy_free(&npy);
  EXPECT_EQ(read_bytes(out + "/other.txt"), "mine");
  EXPECT_EQ(temporaries(dir_.str()), std::vector<std::string>());

  // A link as the directory, or as a file in it.
  const std::string elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, dir_ / "outlink");
  r = run_train(bigram, with({dir_ / "outlink", "--force"}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: --dump-outputs " + (dir_ / "outlink") +
                       ": it is a symbolic link; train never writes through "
                       "one (remove it or name another directory)\n");
  fs::remove(out + "/loss.npy");
  write_bytes(elsewhere + "/target", "precious");
  fs::create_symlink(elsewhere + "/target", out + "/loss.npy");
  r = run_train(bigram, with({out, "--force"}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "/loss.npy: it is a symbolic link")) << r.err;
  EXPECT_EQ(read_bytes(elsewhere + "/target"), "precious");
}

// A write that fails midway is an error (exit status 1, one line) and leaves
// the previous file whole and no temporary behind.
TEST_F(Driver, FailedWritesLeaveThePreviousFileWhole) {
  const std::string state = bigram_state(), data = bigram_data();
  const hmrt_program* bigram = progs::bigram::program();
  const std::string metrics = dir_ / "m.jsonl", trace = dir_ / "t.json";
  const std::string previous(3000, 'p');
  write_bytes(metrics, previous);
  write_bytes(trace, previous);
  Result r;
  {
    FileSizeLimit limit(4096);  // about 25 metrics lines
    r = run_train(bigram, {"--state", state, "--data", data, "--steps", "200",
                           "--metrics", metrics, "--force", "--quiet"});
  }
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(std::regex_match(
      r.err, std::regex("train: error: --metrics .*m.jsonl: write failed: File "
                        "too large\n")))
      << r.err;
  EXPECT_EQ(read_bytes(metrics), previous);
  {
    FileSizeLimit limit(4096);
    r = run_train(bigram, {"--state", state, "--data", data, "--steps", "200",
                           "--trace", trace, "--trace-steps", "200", "--force",
                           "--quiet"});
  }
  // The bigram program reports no ops: each step is two small events, and
  // 200 steps are more than 4096 bytes.
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(std::regex_match(
      r.err, std::regex("train: error: --trace .*t.json: write failed: .*\n")))
      << r.err;
  EXPECT_EQ(read_bytes(trace), previous);
  EXPECT_EQ(temporaries(dir_.str()), std::vector<std::string>());
}

// Output that cannot be written to stdout (train > /dev/full) is an error:
// one line on stderr and exit status 1, also for --help.
TEST_F(Driver, UnwritableStdoutIsAnError) {
  const std::string state = bigram_state(), data = bigram_data();
  auto run_to_full = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "train");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    const int saved = ::dup(1);
    const int full = ::open("/dev/full", O_WRONLY);
    EXPECT_GE(full, 0);
    ::dup2(full, 1);
    ::close(full);
    ::testing::internal::CaptureStderr();
    Result r;
    r.rc = hmrt_train_main(static_cast<int>(args.size()), argv.data(),
                           progs::bigram::program());
    r.err = ::testing::internal::GetCapturedStderr();
    std::fflush(stdout);
    std::clearerr(stdout);
    ::dup2(saved, 1);
    ::close(saved);
    return r;
  };
  Result r = run_to_full({"--state", state, "--data", data, "--steps", "3"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: cannot write to standard output: No space "
                   "left on device\n");
  r = run_to_full({"--help"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: cannot write to standard output: No space "
                   "left on device\n");
  r = run_to_full({"--state", state, "--data", data, "--steps", "3", "--quiet"});
  EXPECT_EQ(r.rc, 0) << r.err;  // nothing to write, nothing lost
}

TEST_F(Driver, NonFiniteLossStops) {
  const std::string state = bigram_state(), data = bigram_data();
  const std::string metrics = dir_ / "m.jsonl";
  progs::g_nan_at_step = 3;
  Result r = run_train(progs::bigram::program(),
                       {"--state", state, "--data", data, "--steps", "10",
                        "--metrics", metrics});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "train: error: step 3: the loss is nan; stopping"))
      << r.err;
  EXPECT_EQ(read_metrics(metrics, 1, "tokens_per_s").size(), 2u);
}

TEST_F(Driver, ProgramChecks) {
  hmrt_program p = *progs::bigram::program();
  p.abi_version = 99;
  Result r = run_train(&p, {"--steps", "1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "the program was generated for driver ABI "
                              "version 99, this driver implements version 4"))
      << r.err;
  r = run_train(nullptr, {"--steps", "1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "hmcc_program() returned NULL")) << r.err;

  p = *progs::bigram::program();
  hmrt_tensor_desc params[1] = {progs::bigram::kParams[0]};
  params[0].bytes = 100;
  p.params = params;
  r = run_train(&p, {"--steps", "1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(contains(r.err, "the program's parameter 'wte' is float32[8, 8] "
                              "(256 bytes) but its descriptor says 100 bytes"))
      << r.err;
  params[0] = progs::bigram::kParams[0];
  params[0].offset = 1900;
  r = run_train(&p, {"--steps", "1"});
  EXPECT_TRUE(contains(r.err, "lies outside the device arena of 1920 bytes")) << r.err;
  params[0] = progs::bigram::kParams[0];
  params[0].tier = 5;
  r = run_train(&p, {"--steps", "1"});
  EXPECT_TRUE(contains(r.err, "the program's parameter 'wte' has unknown tier 5"))
      << r.err;
  params[0].tier = HMRT_TIER_HOST;  // the program has no host arena
  r = run_train(&p, {"--steps", "1"});
  EXPECT_TRUE(contains(r.err, "the program's parameter 'wte' (bytes [1024, "
                              "1280)) lies outside the host arena of 0 bytes"))
      << r.err;
  // Pieces: only parameters and states lie in pieces, and those cover
  // their tensor.
  params[0] = progs::bigram::kParams[0];
  const hmrt_tensor_piece short_pieces[1] = {{0, 128, HMRT_TIER_DEVICE, 1024}};
  params[0].num_pieces = 1;
  params[0].pieces = short_pieces;
  r = run_train(&p, {"--steps", "1"});
  EXPECT_TRUE(contains(r.err, "the program's parameter 'wte': its pieces hold 128 of "
                              "its 256 bytes"))
      << r.err;
  params[0] = progs::bigram::kParams[0];
  hmrt_tensor_desc inputs[2] = {progs::bigram::kInputs[0], progs::bigram::kInputs[1]};
  inputs[0].num_pieces = 1;
  inputs[0].pieces = short_pieces;
  p.inputs = inputs;
  r = run_train(&p, {"--steps", "1"});
  EXPECT_TRUE(contains(r.err, "the program's input 'idx' lies in pieces, which only "
                              "parameters and states may"))
      << r.err;

  p = *progs::bigram::program();
  p.backend = "tpu";
  r = run_train(&p, {"--steps", "1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "train: error: cannot open the program's device: "
            "hmrt_device_open: unknown device backend 'tpu' (this runtime "
            "has: cpu)\n");

  p = *progs::bigram::program();
  p.hyper.optimizer = HMRT_OPT_NONE;
  r = run_train(&p, {"--steps", "1", "--state", bigram_state(), "--data",
                     bigram_data()});
  EXPECT_TRUE(contains(r.err, "the program is forward-only")) << r.err;
}

// A program whose parameters live in the host tier's arena (as a planner may
// place them) trains, saves, resumes and evaluates exactly as the same model
// with everything in the device tier: the driver and the checkpoint code
// reach every tensor through its tier.
TEST_F(Driver, TensorsInTheHostTier) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(16), y(8);
  for (int i = 0; i < 8; ++i) {
    x[2 * i] = d(rng);
    x[2 * i + 1] = d(rng);
    y[i] = x[2 * i] + x[2 * i + 1] - 1.0f;
  }
  const std::string xf = dir_ / "x.npy", yf = dir_ / "y.npy";
  const int64_t xs[] = {8, 2}, ys[] = {8};
  HMRT_ASSERT_OK(hmrt_npy_write(xf.c_str(), HMRT_DTYPE_F32, 2, xs, x.data()));
  HMRT_ASSERT_OK(hmrt_npy_write(yf.c_str(), HMRT_DTYPE_F32, 1, ys, y.data()));
  const std::string state = dir_ / "state";
  const float w0[2] = {0.25f, -0.5f}, b0 = 0.125f;
  const hmrt_checkpoint_tensor list[] = {
      {"w", HMRT_KIND_PARAM, HMRT_DTYPE_F32, 1, progs::linreg::kWShape, w0},
      {"b", HMRT_KIND_PARAM, HMRT_DTYPE_F32, 0, nullptr, &b0},
  };
  hmrt_checkpoint_meta m;
  std::memset(&m, 0, sizeof(m));
  std::strcpy(m.model, "linreg");
  HMRT_ASSERT_OK(hmrt_checkpoint_write(state.c_str(), &m, 2, list));

  const std::vector<std::string> feeds = {"--feed", "x=" + xf, "--feed",
                                          "y=" + yf};
  auto train = [&](const hmrt_program* p, const std::string& tag,
                   const std::string& steps, std::vector<std::string> extra) {
    std::vector<std::string> args = {"--steps", steps, "--log-every", "5",
                                     "--metrics", dir_ / (tag + ".jsonl")};
    args.insert(args.end(), feeds.begin(), feeds.end());
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = run_train(p, args);
    EXPECT_EQ(r.rc, 0) << r.err;
    return read_metrics(dir_ / (tag + ".jsonl"), 1, "examples_per_s");
  };
  const auto dev = train(progs::linreg::program(), "dev", "20",
                         {"--state", state, "--save", dir_ / "dev_ck"});
  const auto host = train(progs::linreg::host_program(), "host", "20",
                          {"--state", state, "--save", dir_ / "host_ck"});
  ASSERT_EQ(dev.size(), 20u);
  ASSERT_EQ(host.size(), 20u);
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(num(dev[i], "loss"), num(host[i], "loss")) << i;
    EXPECT_EQ(num(dev[i], "grad_norm"), num(host[i], "grad_norm")) << i;
  }
  EXPECT_LT(num(host[19], "loss"), num(host[0], "loss"));
  // The same checkpoint, byte for byte.
  EXPECT_EQ(read_bytes(dir_ / "dev_ck/tensors.bin"),
            read_bytes(dir_ / "host_ck/tensors.bin"));
  EXPECT_EQ(read_bytes(dir_ / "dev_ck/manifest.json"),
            read_bytes(dir_ / "host_ck/manifest.json"));

  // Resuming the host-tier program from a checkpoint halfway reproduces the
  // rest of the run; --eval reads its outputs the same way.
  train(progs::linreg::host_program(), "half", "10",
        {"--state", state, "--save", dir_ / "half_ck"});
  std::vector<std::string> args = {"--steps", "20", "--resume",
                                   dir_ / "half_ck", "--metrics",
                                   dir_ / "rest.jsonl"};
  args.insert(args.end(), feeds.begin(), feeds.end());
  Result r = run_train(progs::linreg::host_program(), args);
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto rest = read_metrics(dir_ / "rest.jsonl", 11, "examples_per_s");
  ASSERT_EQ(rest.size(), 10u);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_EQ(num(rest[i], "loss"), num(dev[10 + i], "loss")) << i;
  std::vector<std::string> eval = {"--eval", "--resume", dir_ / "dev_ck"};
  eval.insert(eval.end(), feeds.begin(), feeds.end());
  const Result a = run_train(progs::linreg::program(), eval);
  const Result b = run_train(progs::linreg::host_program(), eval);
  ASSERT_EQ(a.rc, 0) << a.err;
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_TRUE(contains(a.out, "output pred float32[8] = [")) << a.out;
  EXPECT_EQ(a.out, b.out);
}

TEST(DriverLr, LrSchedules) {
  hmrt_hyperparams h;
  std::memset(&h, 0, sizeof(h));
  h.lr = 1e-3f;
  h.min_lr = 1e-4f;
  h.lr_schedule = HMRT_LR_CONSTANT;
  h.warmup_steps = 10;
  EXPECT_EQ(hmrt_lr_at(&h, 1, 100), 1e-3f);
  EXPECT_EQ(hmrt_lr_at(&h, 1000, 100), 1e-3f);

  h.lr_schedule = HMRT_LR_COSINE;
  h.decay_steps = 0;  // = the run's steps
  EXPECT_EQ(hmrt_lr_at(&h, 1, 110), static_cast<float>(1e-3f * 0.1));
  EXPECT_EQ(hmrt_lr_at(&h, 5, 110), static_cast<float>(double(1e-3f) * 0.5));
  EXPECT_EQ(hmrt_lr_at(&h, 10, 110), 1e-3f);
  // Halfway through the decay: the mean of lr and min_lr.
  EXPECT_NEAR(hmrt_lr_at(&h, 60, 110), (1e-3 + 1e-4) / 2, 1e-9);
  EXPECT_NEAR(hmrt_lr_at(&h, 110, 110), 1e-4, 1e-10);
  EXPECT_EQ(hmrt_lr_at(&h, 111, 110), 1e-4f);
  for (int64_t s = 11; s < 110; ++s)  // monotone decay
    EXPECT_LE(hmrt_lr_at(&h, s + 1, 110), hmrt_lr_at(&h, s, 110));
  h.decay_steps = 20;  // explicit: independent of the run's length
  EXPECT_EQ(hmrt_lr_at(&h, 15, 110), hmrt_lr_at(&h, 15, 20));
  EXPECT_EQ(hmrt_lr_at(&h, 21, 110), 1e-4f);
  h.warmup_steps = 0;
  EXPECT_EQ(hmrt_lr_at(&h, 0, 20), 1e-3f);
  EXPECT_TRUE(std::isnan(hmrt_lr_at(nullptr, 1, 1)));
  h.lr_schedule = 7;
  EXPECT_TRUE(std::isnan(hmrt_lr_at(&h, 1, 1)));
}

}  // namespace
