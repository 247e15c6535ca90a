// The `train` driver: command line, state loading, the step loop, logging,
// metrics and checkpoints.  See hmrt/driver.h and runtime/README.md.
#include "hmrt/driver.h"

#include <chrono>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hmrt/device.h"
#include "hmrt/hmrt.h"
#include "hmrt/io.h"
#include "hmrt/program.h"
#include "hmrt/tensor_ops.h"
#include "hmrt/trace.h"
#include "core/internal.h"
#include "cpu/dropout_mask.h"
#include "io/io_internal.h"
#include "io/json_util.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace fs = std::filesystem;

// The generated program's weight sources (hmrt/program.h), where it has them.
extern "C" const hmrt_weight_source* hmcc_weight_sources(int32_t* count) __attribute__((weak));

namespace {

constexpr double kPi = 3.14159265358979323846;

// ---- messages -----------------------------------------------------------------

// Thrown to stop with one error line; caught in hmrt_train_main.
struct Error {
  std::string message;
};

[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char* fmt,
                                                            ...) {
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  // One line: control characters quoted from arguments or files (a path
  // holding a newline) are escaped.
  throw Error{hmrt::escape_controls(buf)};
}

std::string shape_str(int32_t rank, const int64_t* shape) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(static_cast<long long>(shape[i]));
  }
  return s + "]";
}

// "float32[4, 3]"
std::string type_str(int32_t dtype, int32_t rank, const int64_t* shape) {
  return std::string(hmrt_dtype_name(dtype)) + shape_str(rank, shape);
}

std::string type_str(const hmrt_tensor_desc& d) {
  return type_str(d.dtype, d.rank, d.shape);
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

std::string human_seconds(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%.0fs", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%dm%02ds", int(s / 60), int(s) % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%dh%02dm", int(s / 3600),
                  int(s / 60) % 60);
  }
  return buf;
}

// ---- the command line -----------------------------------------------------------

const char* const kHelp =
    "usage: train [options] --data FILE --steps N\n"
    "       train [options] --eval [--feed NAME=FILE.npy ...] [--dump-outputs DIR]\n"
    "\n"
    "Trains the model compiled into this program.\n"
    "\n"
    "options:\n"
    "  --state DIR           initial parameters and optimizer states: a checkpoint\n"
    "                        directory (manifest.json + tensors.bin) as hmcc writes\n"
    "                        it; default: the folder 'state' beside this executable\n"
    "  --init S              start from parameters drawn with seed S instead of a\n"
    "                        state directory (for benchmarks and programs hmcc\n"
    "                        compiled with --no-initial-state): matrices and\n"
    "                        embeddings (rank >= 2) normal with std 0.02, vectors\n"
    "                        named *weight, *scale or *gamma 1 (norm gains), other\n"
    "                        vectors and scalars 0; the same values every run\n"
    "  --weights MODEL       start from the parameters' values in the ONNX model\n"
    "                        this program was compiled from (the .onnx file or\n"
    "                        its folder): the raw float32 external data files\n"
    "                        beside it, read where hmcc recorded each parameter\n"
    "                        (for programs compiled with --no-initial-state)\n"
    "  --data FILE           token data for the inputs fed by the loader: raw uint16\n"
    "                        (nanoGPT .bin), raw uint32, or an llm.c .bin shard\n"
    "                        (recognised by its header); required when the program\n"
    "                        has token inputs that are not --feed\n"
    "  --data-dtype u16|u32  token width of a raw file (default u16); for an llm.c\n"
    "                        file it must agree with the header\n"
    "  --steps N             train until step N (N >= 1); a resumed run continues\n"
    "                        after its checkpoint's step; required unless --eval\n"
    "  --seed S              data seed choosing each batch's windows (default 1)\n"
    "  --log-every K         print a progress line every K steps and at the last\n"
    "                        step (default 10)\n"
    "  --save DIR            write a checkpoint to DIR after the last step; an\n"
    "                        existing checkpoint there is replaced only once the\n"
    "                        new one is complete\n"
    "  --save-every K        also write it every K steps (needs --save)\n"
    "  --resume DIR          continue from the checkpoint DIR: restores parameters,\n"
    "                        optimizer states, step, data position and seed (used\n"
    "                        instead of --state; with --eval, evaluates DIR)\n"
    "  --device NAME         the device backend to run on (default: the one the\n"
    "                        program was compiled for, hmcc --target); the same\n"
    "                        program runs on any backend this executable has,\n"
    "                        e.g. --device cpu to compare a cuda program's\n"
    "                        losses with the CPU's\n"
    "  --threads T           CPU threads for the kernels (default: OMP_NUM_THREADS\n"
    "                        or all cores)\n"
    "  --metrics FILE        write one JSON object per step to FILE: step, loss, lr,\n"
    "                        grad_norm, tokens_per_s (token models) or\n"
    "                        examples_per_s (others), elapsed_s; FILE appears when\n"
    "                        the run ends (FILE.tmp.PID until then)\n"
    "  --feed NAME=FILE.npy  fill input NAME from a NumPy file before every step\n"
    "                        (or the --eval pass); its dtype and shape must equal\n"
    "                        the input's (a bfloat16 input takes a uint16 file of\n"
    "                        its bits); repeatable; overrides the token loader\n"
    "  --nvme DIR            where the storage tier's file goes, for a program\n"
    "                        whose optimizer states hmcc homed in storage (hmcc\n"
    "                        --nvme); default $HMRT_STORAGE_DIR, else $TMPDIR,\n"
    "                        else /tmp\n"
    "  --trace FILE          write a Chrome trace (about:tracing, Perfetto) of the\n"
    "                        first --trace-steps steps (or of --eval's pass): each\n"
    "                        step, its input writing, and every op of the program\n"
    "  --trace-steps N       steps to trace (default 10, at most 1000); a run that\n"
    "                        fails while tracing still writes what it recorded\n"
    "  --eval                run the forward pass once instead of training and\n"
    "                        print each output (all its values when it has at\n"
    "                        most 64 elements, else the first 8)\n"
    "  --dump-outputs DIR    with --eval: write each output to DIR/NAME.npy\n"
    "                        (characters other than A-Z a-z 0-9 . _ - become _)\n"
    "  --force               replace output files that exist (--metrics, --trace,\n"
    "                        the --dump-outputs files) and a checkpoint at --save\n"
    "                        DIR (other than the --resume one); without it train\n"
    "                        refuses them before doing any work. Outputs are\n"
    "                        written beside their target and renamed into place\n"
    "                        once complete; symbolic links are never written\n"
    "                        through, not even with --force\n"
    "  --quiet               print nothing but errors\n"
    "  --help                print this help and the program's inputs, and exit\n"
    "\n"
    "Flags take their value as the next argument or after '=' (--steps=100).\n"
    "Exit status: 0 on success, 1 on any error (also when an output, standard\n"
    "output included, cannot be written).\n";

struct Options {
  std::string state;
  bool state_set = false;
  std::string data;
  int data_hint = 0;
  int64_t steps = 0;
  bool steps_set = false;
  uint64_t seed = 1;
  uint64_t init = 0;  // --init's seed
  bool init_set = false;
  std::string weights;  // --weights: the ONNX model or its folder
  bool seed_set = false;
  int64_t log_every = 10;
  std::string save;
  int64_t save_every = 0;
  std::string resume;
  int threads = 0;
  std::string metrics;
  std::vector<std::pair<std::string, std::string>> feeds;  // name, file
  bool eval = false, quiet = false, help = false, force = false;
  std::string dump_outputs;
  bool dump_set = false;
  std::string trace;
  std::string nvme;  // the storage tier's directory
  std::string device;  // the backend; empty: the program's
  int64_t trace_steps = 10;
  bool trace_steps_set = false;
};

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

int64_t parse_count(const std::string& flag, const std::string& v,
                    int64_t min) {
  uint64_t u = 0;
  if (!parse_u64(v, &u) || u > uint64_t(INT64_MAX) || int64_t(u) < min)
    die("%s: expected an integer >= %lld, got '%s'", flag.c_str(),
        (long long)min, v.c_str());
  return static_cast<int64_t>(u);
}

Options parse_args(int argc, char** argv) {
  Options o;
  const std::vector<std::string> with_value = {
      "--state",   "--data",    "--data-dtype", "--steps",   "--seed",
      "--log-every", "--save",  "--save-every", "--resume",  "--threads",
      "--metrics", "--feed",    "--dump-outputs", "--trace", "--trace-steps",
      "--nvme",    "--device",  "--init",  "--weights"};
  const std::vector<std::string> switches = {"--eval", "--quiet", "--help",
                                             "--force"};
  std::vector<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i] ? argv[i] : "";
    if (arg == "-h") arg = "--help";
    if (arg.compare(0, 2, "--") != 0)
      die("unexpected argument '%s' (flags start with --; see --help)",
          arg.c_str());
    std::string flag = arg, value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    bool is_switch = false, known = false;
    for (const auto& f : switches)
      if (f == flag) known = is_switch = true;
    for (const auto& f : with_value)
      if (f == flag) known = true;
    if (!known) die("unknown flag '%s' (see --help)", flag.c_str());
    if (is_switch) {
      if (has_value) die("%s takes no value", flag.c_str());
    } else if (!has_value) {
      if (i + 1 >= argc) die("%s needs a value", flag.c_str());
      value = argv[++i];
    }
    if (flag != "--feed") {
      for (const auto& s : seen)
        if (s == flag) die("%s is given twice", flag.c_str());
      seen.push_back(flag);
    }

    if (flag == "--help") {
      o.help = true;
    } else if (flag == "--eval") {
      o.eval = true;
    } else if (flag == "--quiet") {
      o.quiet = true;
    } else if (flag == "--force") {
      o.force = true;
    } else if (flag == "--state") {
      o.state = value;
      o.state_set = true;
    } else if (flag == "--data") {
      o.data = value;
    } else if (flag == "--data-dtype") {
      if (value == "u16") o.data_hint = 2;
      else if (value == "u32") o.data_hint = 4;
      else die("--data-dtype: expected u16 or u32, got '%s'", value.c_str());
    } else if (flag == "--steps") {
      o.steps = parse_count(flag, value, 1);
      o.steps_set = true;
    } else if (flag == "--seed") {
      if (!parse_u64(value, &o.seed))
        die("--seed: expected an integer in [0, 2^64), got '%s'",
            value.c_str());
      o.seed_set = true;
    } else if (flag == "--log-every") {
      o.log_every = parse_count(flag, value, 1);
    } else if (flag == "--save") {
      o.save = value;
    } else if (flag == "--save-every") {
      o.save_every = parse_count(flag, value, 1);
    } else if (flag == "--resume") {
      o.resume = value;
    } else if (flag == "--threads") {
      const int64_t t = parse_count(flag, value, 1);
      if (t > 65536) die("--threads: %lld is too many", (long long)t);
      o.threads = static_cast<int>(t);
    } else if (flag == "--metrics") {
      o.metrics = value;
    } else if (flag == "--feed") {
      const size_t at = value.find('=');
      if (at == std::string::npos || at == 0 || at + 1 == value.size())
        die("--feed: expected NAME=FILE.npy, got '%s'", value.c_str());
      const std::string name = value.substr(0, at);
      for (const auto& f : o.feeds)
        if (f.first == name) die("--feed: input '%s' is fed twice", name.c_str());
      o.feeds.emplace_back(name, value.substr(at + 1));
    } else if (flag == "--trace") {
      o.trace = value;
    } else if (flag == "--nvme") {
      struct stat st;
      if (::stat(value.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        die("--nvme %s: not a directory", value.c_str());
      o.nvme = value;
    } else if (flag == "--init") {
      if (!parse_u64(value, &o.init)) die("--init: expected a seed (an integer >= 0), got '%s'", value.c_str());
      o.init_set = true;
    } else if (flag == "--weights") {
      o.weights = value;
    } else if (flag == "--device") {
      o.device = value;
    } else if (flag == "--trace-steps") {
      o.trace_steps = parse_count(flag, value, 1);
      if (o.trace_steps > 1000)
        die("--trace-steps: at most 1000 steps are traced (every op's events are kept in "
            "memory until the trace is written), not %lld", (long long)o.trace_steps);
      o.trace_steps_set = true;
    } else if (flag == "--dump-outputs") {
      o.dump_outputs = value;
      o.dump_set = true;
    }
    if (!is_switch && value.empty() && flag != "--feed")
      die("%s: the value is empty", flag.c_str());
  }
  if (o.help) return o;
  if (o.eval) {
    const char* bad[][2] = {
        {o.steps_set ? "--steps" : nullptr, ""},
        {o.save.empty() ? nullptr : "--save", ""},
        {o.save_every ? "--save-every" : nullptr, ""},
        {o.metrics.empty() ? nullptr : "--metrics", ""},
    };
    for (auto& b : bad)
      if (b[0]) die("%s cannot be used with --eval", b[0]);
  } else {
    if (!o.steps_set) die("--steps is required (or --eval); see --help");
    if (o.dump_set) die("--dump-outputs needs --eval");
  }
  {
    // At most one source of the initial parameters.
    const char* given[4] = {o.state_set ? "--state" : nullptr, o.resume.empty() ? nullptr : "--resume",
                            o.init_set ? "--init" : nullptr, o.weights.empty() ? nullptr : "--weights"};
    const char* first = nullptr;
    for (const char* g : given) {
      if (g == nullptr) continue;
      if (first != nullptr) die("%s and %s both give the initial parameters: pass one", first, g);
      first = g;
    }
  }
  if (o.save_every && o.save.empty()) die("--save-every needs --save");
  if (o.trace_steps_set && o.trace.empty()) die("--trace-steps needs --trace");
  if (o.trace_steps_set && o.eval) die("--trace-steps cannot be used with --eval");
  return o;
}

// The folder 'state' beside the running executable.
std::string default_state_dir(const char* argv0) {
  std::error_code ec;
#if defined(__linux__)
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && !exe.empty()) return (exe.parent_path() / "state").string();
#endif
  fs::path p = argv0 ? fs::path(argv0) : fs::path("train");
  p = fs::absolute(p, ec);
  return (p.parent_path() / "state").string();
}

// ---- the program ------------------------------------------------------------------

// Bytes of the program's arena of `tier` (a valid hmrt_tier).
uint64_t tier_bytes(const hmrt_program* p, int32_t tier) {
  switch (tier) {
    case HMRT_TIER_HOST: return p->host_arena_bytes;
    case HMRT_TIER_STORAGE: return p->storage_arena_bytes;
    default: return p->arena_bytes;
  }
}

void check_descs(const hmrt_program* p, const char* what, int32_t n,
                 const hmrt_tensor_desc* descs, bool pieces = false) {
  if (n < 0 || (n > 0 && descs == nullptr))
    die("the program's %s list is invalid (%d entries)", what, n);
  uint64_t arenas[HMRT_TIER_COUNT];
  for (int32_t tier = 0; tier < HMRT_TIER_COUNT; ++tier) arenas[tier] = tier_bytes(p, tier);
  for (int32_t i = 0; i < n; ++i) {
    const hmrt_tensor_desc& d = descs[i];
    if (d.name == nullptr) die("the program's %s %d has no name", what, i);
    const size_t elem = hmrt_dtype_size(d.dtype);
    if (elem == 0)
      die("the program's %s '%s' has unknown dtype %d", what, d.name, d.dtype);
    if (d.rank < 0 || (d.rank > 0 && d.shape == nullptr))
      die("the program's %s '%s' has an invalid shape", what, d.name);
    for (int32_t k = 0; k < d.rank; ++k)
      if (d.shape[k] < 0)
        die("the program's %s '%s' has a negative dimension", what, d.name);
    const int64_t n = hmrt::io::checked_count(d.rank, d.shape, elem);
    if (n < 0)
      die("the program's %s '%s' is %s, more than 2^63 bytes", what, d.name,
          type_str(d).c_str());
    const uint64_t count = static_cast<uint64_t>(n);
    if (count * elem != d.bytes)
      die("the program's %s '%s' is %s (%llu bytes) but its descriptor says "
          "%llu bytes",
          what, d.name, type_str(d).c_str(),
          (unsigned long long)(count * elem), (unsigned long long)d.bytes);
    if (d.num_pieces != 0 && !pieces)
      die("the program's %s '%s' lies in pieces, which only parameters and "
          "states may",
          what, d.name);
    if (hmrt_tensor_check_placed(&d, arenas) != HMRT_OK)
      die("the program's %s %s", what, std::string(hmrt_last_error()).c_str());
  }
}

void check_program(const hmrt_program* p) {
  if (p == nullptr) die("hmcc_program() returned NULL");
  if (p->abi_version != HMRT_PROGRAM_ABI_VERSION)
    die("the program was generated for driver ABI version %u, this driver "
        "implements version %u; regenerate it with a matching hmcc",
        p->abi_version, HMRT_PROGRAM_ABI_VERSION);
  check_descs(p, "input", p->num_inputs, p->inputs);
  check_descs(p, "output", p->num_outputs, p->outputs);
  check_descs(p, "parameter", p->num_params, p->params, /*pieces=*/true);
  check_descs(p, "optimizer state", p->num_states, p->states, /*pieces=*/true);
}

const char* role_name(int32_t role) {
  switch (role) {
    case HMRT_ROLE_TOKENS: return "tokens";
    case HMRT_ROLE_TARGETS: return "targets";
    default: return "--feed";
  }
}

/* Whether the program takes a learning rate (a training_info algorithm may
 * not: its rate is then a constant of the model). */
bool has_lr(const hmrt_hyperparams* h) {
  return !(h->optimizer == HMRT_OPT_ONNX && h->lr == 0);
}

void print_help(const hmrt_program* p) {
  std::fputs(kHelp, stdout);
  if (p == nullptr || p->abi_version != HMRT_PROGRAM_ABI_VERSION) return;
  std::printf("\nthis program: model '%s'", p->model_name ? p->model_name : "");
  if (p->vocab_size > 0)
    std::printf(", vocabulary %lld", (long long)p->vocab_size);
  const hmrt_hyperparams& h = p->hyper;
  static const char* const opts[] = {"none (forward only)", "SGD", "AdamW",
                                     "8-bit AdamW",
                                     "the model's own (ONNX training_info)"};
  const char* opt =
      h.optimizer >= 0 && h.optimizer <= 4 ? opts[h.optimizer] : "unknown";
  std::printf("\noptimizer %s", opt);
  if (!has_lr(&h)) {
    std::printf(" (its learning rate is not an input)");
  } else if (h.lr_schedule == HMRT_LR_COSINE) {
    std::printf(", learning rate %g (cosine: %lld warm-up steps, decay to %g by step ",
                double(h.lr),
                (long long)h.warmup_steps, double(h.min_lr));
    if (h.decay_steps > 0)
      std::printf("%lld)", (long long)h.decay_steps);
    else
      std::printf("--steps)");
  } else {
    std::printf(", learning rate %g (constant)", double(h.lr));
  }
  std::printf("\ninputs:\n");
  for (int32_t i = 0; i < p->num_inputs && p->inputs; ++i) {
    const hmrt_tensor_desc& d = p->inputs[i];
    std::printf("  %-20s %-24s %s\n", d.name ? d.name : "?",
                d.rank >= 0 && (d.shape || d.rank == 0)
                    ? type_str(d).c_str()
                    : "?",
                d.role == HMRT_ROLE_OTHER ? "--feed NAME=FILE.npy"
                                          : (std::string("from --data (") +
                                             role_name(d.role) + ")")
                                                .c_str());
  }
}

// ---- runtime state -------------------------------------------------------------

struct DeviceCloser {
  void operator()(hmrt_device* d) const { hmrt_device_close(d); }
};
struct ExecDeleter {
  void operator()(hmrt_exec* x) const { hmrt_exec_destroy(x); }
};
struct TokensDeleter {
  void operator()(hmrt_tokens* t) const { hmrt_tokens_close(t); }
};
struct NpyHolder {
  hmrt_npy npy;
  NpyHolder() { std::memset(&npy, 0, sizeof(npy)); }
  ~NpyHolder() { hmrt_npy_free(&npy); }
  NpyHolder(const NpyHolder&) = delete;
  NpyHolder& operator=(const NpyHolder&) = delete;
};

std::string last_error() { return hmrt_last_error(); }

// Flushes stdout and stops with an error when anything written to it was
// lost (a full disk, a closed pipe: `train ... > /dev/full`).
void check_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    die("cannot write to standard output: %s",
        errno != 0 ? std::strerror(errno) : "write error");
}

struct Input {
  const hmrt_tensor_desc* desc;
  const NpyHolder* feed;  // when fed from a file
};

// ---- outputs ----------------------------------------------------------------------

// An output file of train (--metrics, --trace): written to a temporary file
// beside it and renamed into place by commit(), which dies on failure (the
// temporary is removed and a previous file stays whole).  Destroyed without
// commit() (an error unwound the run), it still commits what was written,
// silently: the metrics or trace of a failed run are its record.
class Output {
 public:
  Output(std::string flag, std::string path, bool force)
      : flag_(std::move(flag)), force_(force) {
    std::string err;
    if (!file_.open(path, &err)) die("%s %s", flag_.c_str(), err.c_str());
  }
  ~Output() {
    std::string err;
    if (file_.get() != nullptr) (void)file_.commit(force_, &err);
  }
  std::FILE* get() const { return file_.get(); }
  void commit() {
    std::string err;
    if (!file_.commit(force_, &err)) die("%s %s", flag_.c_str(), err.c_str());
  }

 private:
  std::string flag_;
  bool force_;
  hmrt::io::AtomicFile file_;
};

// Refuses, before any work, an output file that train may not write: a
// symbolic link or something other than a regular file (always), or an
// existing file without --force.
void check_output_file(const char* flag, const std::string& path, bool force) {
  switch (hmrt::io::path_kind(path)) {
    case 0:
      return;
    case 1:
      if (force) return;
      die("%s %s: the file exists; pass --force to replace it", flag,
          path.c_str());
    case 2:
      die("%s %s: it is a symbolic link; train never writes through one "
          "(remove it or name another file)",
          flag, path.c_str());
    case 3:
      die("%s %s: it is a directory", flag, path.c_str());
    case 4:
      die("%s %s: it exists and is not a regular file", flag, path.c_str());
    default:
      die("%s %s: cannot inspect it: %s", flag, path.c_str(),
          std::strerror(errno));
  }
}

// --trace: collects the program's op events (hmrt/trace.h) step by step and
// writes them with the steps as a Chrome trace: complete ("X") events in
// microseconds, steps and input writing on one thread, ops on another.
class Tracer {
 public:
  // The streams of a program (hmrt/program.h), one track each.
  static constexpr int kStreams = HMRT_EXEC_STREAM_COUNT;
  static constexpr const char* kStreamNames[kStreams] = {
      "compute", "host_to_device", "device_to_host",
      "host_optimizer", "storage_read", "storage_write"};
  static int stream_index(const std::string& name) {
    for (int k = 1; k < kStreams; ++k)
      if (name == kStreamNames[k]) return k;
    return 0;
  }
  // Nanoseconds each stream was busy in the traced steps.
  const int64_t* busy() const { return busy_; }
  Tracer(std::string path, bool force, const char* const* names,
         int32_t count)
      : out_("--trace", std::move(path), force),  // fails before any work
        names_(names),
        count_(count) {
    hmrt_trace_start();
  }
  // A run that fails inside the traced steps still leaves a valid trace of
  // what was recorded.
  ~Tracer() {
    if (written_) return;
    try {
      write(model_);
    } catch (const Error&) {
    }
  }
  void set_model(const std::string& model) { model_ = model; }
  int64_t now() const { return hmrt_trace_now(); }
  void span(const std::string& name, int tid, int64_t begin, int64_t end,
            const std::string& args) {
    char times[96];
    std::snprintf(times, sizeof times, "\"ts\": %.3f, \"dur\": %.3f", begin / 1e3,
                  (end - begin) / 1e3);
    events_.push_back("{\"name\": " + hmrt::json::quote(name) + ", \"ph\": \"X\", " +
                      times + ", \"pid\": 1, \"tid\": " + std::to_string(tid) +
                      ", \"args\": {" + args + "}}");
  }
  // Turns the ops' events since the last call into spans of `step`.
  void collect(int64_t step) {
    int64_t n = 0;
    const hmrt_trace_event* ev = hmrt_trace_events(&n);
    std::vector<int64_t> begins(count_ > 0 ? count_ : 0, -1);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t op = ev[i].op;
      if (op < 0 || op >= count_) die("--trace: the program reported op %d of %d", op, count_);
      if (!ev[i].end) {
        begins[op] = ev[i].ns;
      } else if (begins[op] >= 0) {
        // "NAME [stream S]" for ops off the compute stream (hmrt/program.h).
        std::string name = names_[op];
        int stream = 0;
        const size_t mark = name.rfind(" [stream ");
        if (mark != std::string::npos && name.back() == ']') {
          stream = stream_index(name.substr(mark + 9, name.size() - mark - 10));
          name.resize(mark);
        }
        span(name, 2 + stream, begins[op], ev[i].ns,
             "\"step\": " + std::to_string((long long)step) + ", \"op\": " + std::to_string(op));
        busy_[stream] += ev[i].ns - begins[op];
        begins[op] = -1;
      }
    }
    hmrt_trace_clear();
  }
  void write(const std::string& model) {
    hmrt_trace_stop();
    written_ = true;
    std::FILE* f = out_.get();
    std::fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"model\": %s},\n"
                    " \"traceEvents\": [\n",
                 hmrt::json::quote(model).c_str());
    std::fprintf(f, "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, "
                    "\"args\": {\"name\": \"steps\"}}");
    for (int k = 0; k < kStreams; ++k)
      std::fprintf(f, ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
                      "\"args\": {\"name\": \"%s\"}}", 2 + k, kStreamNames[k]);
    for (const std::string& e : events_) std::fprintf(f, ",\n  %s", e.c_str());
    std::fprintf(f, "\n]}\n");
    out_.commit();
  }

 private:
  Output out_;
  const char* const* names_;
  int32_t count_;
  std::vector<std::string> events_;
  std::string model_;
  bool written_ = false;
  int64_t busy_[kStreams] = {};
};

class Trainer {
 public:
  Trainer(const Options& o, const hmrt_program* p, const char* argv0)
      : o_(o), p_(p), argv0_(argv0) {}
  // Clears the progress bar, also when an error unwinds the stack.
  ~Trainer() {
    if (bar_shown_) {
      std::fputs("\r\033[K", stdout);
      std::fflush(stdout);
    }
  }

  int run();

 private:
  void setup_inputs();
  void load_state();
  void init_parameters();
  void load_weights();
  void open_data();
  void write_inputs(int64_t draw);
  int eval();
  int train();
  void check_outputs();
  void save(int64_t step);
  void log(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  // Writes `bytes` of host memory to input `d` in its tier's arena.
  void write_input(const hmrt_tensor_desc& d, const void* data,
                   uint64_t bytes);

  const Options& o_;
  const hmrt_program* p_;
  const char* argv0_;
  // The device outlives the execution context (declared first, destroyed
  // last).
  std::unique_ptr<hmrt_device, DeviceCloser> device_;
  std::unique_ptr<hmrt_exec, ExecDeleter> exec_;
  std::vector<Input> inputs_;
  std::vector<std::unique_ptr<NpyHolder>> feeds_;
  std::unique_ptr<hmrt_tokens, TokensDeleter> tokens_;
  bool use_loader_ = false;
  int64_t batch_ = 0, seq_len_ = 0;  // of the loader's inputs
  int64_t examples_per_step_ = 1;
  std::vector<int64_t> tok_, tgt_;
  std::vector<int32_t> tok32_;  // an int32 token input's ids
  int64_t step0_ = 0;     // steps completed before this run
  int64_t position_ = 0;  // loader draws made
  uint64_t seed_ = 1;
  bool bar_ = false;      // progress bar on a terminal
  bool bar_shown_ = false;
};

void Trainer::log(const char* fmt, ...) {
  if (o_.quiet) return;
  if (bar_shown_) {
    std::fputs("\r\033[K", stdout);
    bar_shown_ = false;
  }
  va_list args;
  va_start(args, fmt);
  std::vprintf(fmt, args);
  va_end(args);
  check_stdout();
}

void Trainer::setup_inputs() {
  // Every --feed must name an input.
  for (const auto& f : o_.feeds) {
    bool found = false;
    for (int32_t i = 0; i < p_->num_inputs; ++i)
      if (f.first == p_->inputs[i].name) found = true;
    if (!found) {
      std::string names;
      for (int32_t i = 0; i < p_->num_inputs; ++i)
        names += std::string(i ? ", " : "") + p_->inputs[i].name;
      die("--feed %s=%s: the program has no input '%s' (its inputs: %s)",
          f.first.c_str(), f.second.c_str(), f.first.c_str(),
          names.empty() ? "none" : names.c_str());
    }
  }
  const hmrt_tensor_desc* first_token = nullptr;
  for (int32_t i = 0; i < p_->num_inputs; ++i) {
    const hmrt_tensor_desc& d = p_->inputs[i];
    Input in{&d, nullptr};
    const std::pair<std::string, std::string>* feed = nullptr;
    for (const auto& f : o_.feeds)
      if (f.first == d.name) feed = &f;
    if (feed != nullptr) {
      auto h = std::make_unique<NpyHolder>();
      if (hmrt_npy_read(feed->second.c_str(), &h->npy) != HMRT_OK)
        die("--feed %s: %s", d.name, last_error().c_str());
      const hmrt_npy& n = h->npy;
      // NumPy has no bfloat16: a BF16 input takes a uint16 file of its bits.
      const bool dtype_ok =
          n.dtype == d.dtype ||
          (d.dtype == HMRT_DTYPE_BF16 && n.dtype == HMRT_DTYPE_U16);
      const bool same = dtype_ok && n.rank == d.rank &&
                        std::equal(d.shape, d.shape + d.rank, n.shape);
      if (!same)
        die("--feed %s=%s: the file holds %s but input '%s' is %s%s", d.name,
            feed->second.c_str(), type_str(n.dtype, n.rank, n.shape).c_str(),
            d.name, type_str(d).c_str(),
            d.dtype == HMRT_DTYPE_BF16
                ? " (a bfloat16 input takes a uint16 .npy of its raw bits)"
                : "");
      in.feed = h.get();
      feeds_.push_back(std::move(h));
    } else if (d.role == HMRT_ROLE_TOKENS || d.role == HMRT_ROLE_TARGETS) {
      if (d.dtype != HMRT_DTYPE_I64 && d.dtype != HMRT_DTYPE_I32)
        die("input '%s' (%s) is fed token ids but is not int64 or int32",
            d.name, type_str(d).c_str());
      if (d.rank != 1 && d.rank != 2)
        die("input '%s' (%s) is fed token ids but is not [batch, sequence] "
            "or [sequence]",
            d.name, type_str(d).c_str());
      const int64_t b = d.rank == 2 ? d.shape[0] : 1;
      const int64_t t = d.shape[d.rank - 1];
      if (b < 1 || t < 1)
        die("input '%s' (%s) has an empty batch or sequence", d.name,
            type_str(d).c_str());
      if (first_token != nullptr && (b != batch_ || t != seq_len_))
        die("token inputs '%s' (%s) and '%s' (%s) differ in shape",
            first_token->name, type_str(*first_token).c_str(), d.name,
            type_str(d).c_str());
      if (first_token == nullptr) first_token = &d;
      batch_ = b;
      seq_len_ = t;
      use_loader_ = true;
    } else {
      die("input '%s' (%s) has no data: pass --feed %s=FILE.npy", d.name,
          type_str(d).c_str(), d.name);
    }
    inputs_.push_back(in);
  }
  if (use_loader_) {
    examples_per_step_ = batch_;
  } else if (p_->num_inputs > 0 && p_->inputs[0].rank >= 1) {
    examples_per_step_ = p_->inputs[0].shape[0];
  }
}

void Trainer::load_state() {
  hmrt_checkpoint_meta meta;
  std::memset(&meta, 0, sizeof(meta));
  const bool has_tensors = p_->num_params + p_->num_states > 0;
  if (!o_.resume.empty()) {
    if (hmrt_checkpoint_load(o_.resume.c_str(), p_, exec_.get(), &meta) !=
        HMRT_OK)
      die("--resume %s", last_error().c_str());
    if (o_.seed_set && o_.seed != meta.seed)
      die("--seed %llu differs from the seed %llu of the checkpoint %s; a "
          "resumed run keeps its seed (drop --seed)",
          (unsigned long long)o_.seed, (unsigned long long)meta.seed,
          o_.resume.c_str());
    step0_ = meta.step;
    position_ = meta.data_position;
    seed_ = meta.seed;
    log("resumed from %s at step %lld\n", o_.resume.c_str(),
        (long long)step0_);
    // The optimizer must match (the load checks it); other hyper-parameters
    // may have been changed on purpose, so a difference is only reported.
    if (meta.abi_version != 0) {
      const hmrt_hyperparams &a = meta.hyper, &b = p_->hyper;
      std::string diff;
      auto f = [&](const char* name, double x, double y) {
        if (x == y || (std::isnan(x) && std::isnan(y))) return;
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%s %g -> %g", diff.empty() ? "" : ", ",
                      name, x, y);
        diff += buf;
      };
      f("lr", a.lr, b.lr);
      f("beta1", a.beta1, b.beta1);
      f("beta2", a.beta2, b.beta2);
      f("eps", a.eps, b.eps);
      f("weight_decay", a.weight_decay, b.weight_decay);
      f("momentum", a.momentum, b.momentum);
      f("clip_norm", a.clip_norm, b.clip_norm);
      f("lr_schedule", a.lr_schedule, b.lr_schedule);
      f("warmup_steps", double(a.warmup_steps), double(b.warmup_steps));
      f("decay_steps", double(a.decay_steps), double(b.decay_steps));
      f("min_lr", a.min_lr, b.min_lr);
      if (!diff.empty())
        log("note: this program's hyper-parameters differ from the "
            "checkpoint's (%s); continuing with this program's\n",
            diff.c_str());
    }
    return;
  }
  seed_ = o_.seed;
  if (o_.init_set) {
    init_parameters();
    return;
  }
  if (!o_.weights.empty()) {
    load_weights();
    return;
  }
  const std::string dir =
      o_.state_set ? o_.state : default_state_dir(argv0_);
  std::error_code ec;
  if (!o_.state_set && !fs::exists(dir, ec)) {
    if (!has_tensors) return;
    die("no initial state: %s does not exist (hmcc --no-initial-state writes "
        "none); pass --init SEED, --state DIR or --resume DIR",
        dir.c_str());
  }
  const char* flag = o_.state_set ? "--state" : "the default --state";
  if (hmrt_checkpoint_load(dir.c_str(), p_, exec_.get(), &meta) != HMRT_OK)
    die("%s %s", flag, last_error().c_str());
}

// --init: every parameter drawn by its rule (see --help) from a generator
// keyed by the seed and the parameter's name, so that each parameter's
// values do not depend on the others; optimizer states stay zero (the
// arenas are zeroed before).  Written in pieces through the device
// interface, whatever the parameter's tier.
void Trainer::init_parameters() {
  constexpr int64_t kPiece = int64_t{1} << 22;  // elements per copy
  constexpr int64_t kSlice = int64_t{1} << 16;  // the fewest a thread draws
  std::vector<float> piece;
  for (int32_t k = 0; k < p_->num_params; ++k) {
    const hmrt_tensor_desc& d = p_->params[k];
    if (d.dtype != HMRT_DTYPE_F32)
      die("--init: parameter '%s' is not float32", d.name);
    const int64_t n = static_cast<int64_t>(d.bytes / sizeof(float));
    std::string name = d.name;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto ends_with = [&](const char* tail) {
      const size_t t = std::strlen(tail);
      return name.size() >= t && name.compare(name.size() - t, t, tail) == 0;
    };
    const bool normal = d.rank >= 2;
    const float fill = !normal && d.rank == 1 &&
                               (ends_with("weight") || ends_with("scale") || ends_with("gamma"))
                           ? 1.0f
                           : 0.0f;
    uint64_t key = 1469598103934665603ull;  // FNV-1a of the name, then the seed
    for (unsigned char c : std::string(d.name)) key = (key ^ c) * 1099511628211ull;
    key = hmrt::splitmix(o_.init, key);
    for (int64_t at = 0; at < n; at += kPiece) {
      const int64_t len = std::min(kPiece, n - at);
      piece.assign(size_t(len), fill);
      if (normal) {
        // Element j's value depends on j alone, so the piece is drawn in
        // slices on the kernels' threads (--threads; a 1.3 B model's draw
        // took a minute on one): the same values whatever the count.
        hmrt::parallel_ranges(len, kSlice, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            // Box-Muller on two draws in (0, 1] and [0, 1).
            const uint64_t j = uint64_t(at + i);
            const double u1 = double((hmrt::splitmix(key, 2 * j) >> 11) + 1) * 0x1p-53;
            const double u2 = double(hmrt::splitmix(key, 2 * j + 1) >> 11) * 0x1p-53;
            piece[size_t(i)] = static_cast<float>(
                0.02 * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
          }
        });
      }
      if (hmrt_exec_write_tensor(exec_.get(), &d, uint64_t(at) * sizeof(float), piece.data(),
                                 uint64_t(len) * sizeof(float)) != HMRT_OK)
        die("--init: cannot write parameter '%s': %s", d.name, last_error().c_str());
    }
  }
  log("initialized %d parameters with --init %llu\n", (int)p_->num_params,
      (unsigned long long)o_.init);
}

// --weights: each parameter's bytes from the external data file hmcc
// recorded for it (hmcc_weight_sources), beside the model; optimizer states
// stay zero.
void Trainer::load_weights() {
  const char* flag = "--weights";
  if (&hmcc_weight_sources == nullptr)
    die("%s: this program does not record where its weights lie (it was not generated by "
        "hmcc)", flag);
  int32_t count = 0;
  const hmrt_weight_source* sources = hmcc_weight_sources(&count);
  if (count != p_->num_params)
    die("%s: the program records %d weight sources for %d parameters", flag, (int)count,
        (int)p_->num_params);
  std::error_code ec;
  fs::path dir = o_.weights;
  if (!fs::is_directory(dir, ec)) {
    if (!fs::is_regular_file(dir, ec))
      die("%s %s: no such model file or folder", flag, o_.weights.c_str());
    dir = dir.parent_path();
    if (dir.empty()) dir = ".";
  }
  constexpr uint64_t kPiece = uint64_t{4} << 20;
  std::vector<char> piece;
  std::map<std::string, hmrt::io::File> files;  // by path, opened once
  for (int32_t k = 0; k < p_->num_params; ++k) {
    const hmrt_tensor_desc& d = p_->params[k];
    const hmrt_weight_source& src = sources[k];
    if (src.location == nullptr)
      die("%s: parameter '%s' is not raw float32 external data of the model; start from the "
          "state hmcc writes (compile without --no-initial-state)",
          flag, d.name);
    const fs::path rel(src.location);
    bool inside = !rel.is_absolute();
    for (const fs::path& part : rel) inside = inside && part != "..";
    if (!inside)
      die("%s: parameter '%s': external data location '%s' is outside the model's folder", flag,
          d.name, src.location);
    if (src.length != d.bytes)
      die("%s: parameter '%s' is %llu bytes but its external data is %llu", flag, d.name,
          (unsigned long long)d.bytes, (unsigned long long)src.length);
    const std::string path = (dir / rel).string();
    auto [it, fresh] = files.try_emplace(path);
    hmrt::io::File& f = it->second;
    if (fresh) {
      // A regular file only: opening a FIFO would block.
      if (!fs::exists(path, ec))
        die("%s: cannot open %s: %s", flag, path.c_str(), std::strerror(ENOENT));
      if (!fs::is_regular_file(path, ec)) die("%s: %s is not a regular file", flag, path.c_str());
      if (!f.open(path.c_str(), "rb"))
        die("%s: cannot open %s: %s", flag, path.c_str(), hmrt::io::errno_text().c_str());
    }
    const int64_t size = hmrt::io::file_size(f.get());
    if (size < 0 || uint64_t(size) < src.offset || uint64_t(size) - src.offset < src.length)
      die("%s: %s is %lld bytes, too short for parameter '%s' (bytes %llu to %llu)", flag,
          path.c_str(), (long long)size, d.name, (unsigned long long)src.offset,
          (unsigned long long)(src.offset + src.length));
    if (!hmrt::io::seek(f.get(), int64_t(src.offset)))
      die("%s: cannot seek in %s: %s", flag, path.c_str(), hmrt::io::errno_text().c_str());
    for (uint64_t done = 0; done < src.length;) {
      const uint64_t len = std::min(kPiece, src.length - done);
      piece.resize(size_t(len));
      if (std::fread(piece.data(), 1, size_t(len), f.get()) != size_t(len))
        die("%s: cannot read %s: %s", flag, path.c_str(),
            std::ferror(f.get()) ? hmrt::io::errno_text().c_str() : "short read");
      if (hmrt_exec_write_tensor(exec_.get(), &d, done, piece.data(), len) != HMRT_OK)
        die("%s: cannot write parameter '%s': %s", flag, d.name, last_error().c_str());
      done += len;
    }
  }
  log("read %d parameters from %s\n", (int)p_->num_params, dir.string().c_str());
}

void Trainer::open_data() {
  if (!use_loader_) return;
  std::string which;
  for (const Input& in : inputs_)
    if (!in.feed) which = in.desc->name;
  if (o_.data.empty())
    die("--data is required: input '%s' is fed from token data", which.c_str());
  hmrt_tokens* t = nullptr;
  if (hmrt_tokens_open(o_.data.c_str(), o_.data_hint, &t) != HMRT_OK)
    die("--data %s", last_error().c_str());
  tokens_.reset(t);
  const int64_t n = hmrt_tokens_count(t);
  if (n < seq_len_ + 1)
    die("--data %s: the file has %lld tokens, fewer than one batch row needs "
        "(sequence length %lld + 1)",
        o_.data.c_str(), (long long)n, (long long)seq_len_);
  tok_.resize(static_cast<size_t>(batch_ * seq_len_));
  tgt_.resize(tok_.size());
}

void Trainer::write_input(const hmrt_tensor_desc& d, const void* data,
                           uint64_t bytes) {
  if (hmrt_copy_from_host(hmrt_exec_arena(exec_.get(), d.tier), d.offset, data,
                          bytes) != HMRT_OK)
    die("cannot write input '%s': %s", d.name, last_error().c_str());
}

// Fills every input: --feed copies, token inputs from loader draw `draw`.
void Trainer::write_inputs(int64_t draw) {
  if (use_loader_) {
    if (hmrt_tokens_batch(tokens_.get(), seed_, draw, batch_, seq_len_,
                          p_->vocab_size, tok_.data(), tgt_.data()) != HMRT_OK)
      die("--data %s", last_error().c_str());
  }
  for (const Input& in : inputs_) {
    if (in.feed) {
      write_input(*in.desc, in.feed->npy.data, in.desc->bytes);
      continue;
    }
    const std::vector<int64_t>& src =
        in.desc->role == HMRT_ROLE_TOKENS ? tok_ : tgt_;
    if (in.desc->dtype == HMRT_DTYPE_I64) {
      write_input(*in.desc, src.data(), src.size() * sizeof(int64_t));
    } else {
      tok32_.resize(src.size());
      for (size_t i = 0; i < src.size(); ++i) {
        if (src[i] > INT32_MAX)
          die("--data %s: token id %lld does not fit input '%s' (int32)",
              o_.data.c_str(), (long long)src[i], in.desc->name);
        tok32_[i] = static_cast<int32_t>(src[i]);
      }
      write_input(*in.desc, tok32_.data(), tok32_.size() * sizeof(int32_t));
    }
  }
}

// Characters other than [A-Za-z0-9._-] become '_'.
std::string file_name_for(const std::string& name) {
  std::string s;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    s.push_back(ok ? c : '_');
  }
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

std::string format_value(int32_t dtype, const void* data, int64_t i) {
  char buf[40];
  switch (dtype) {
    case HMRT_DTYPE_F32:
      std::snprintf(buf, sizeof(buf), "%.9g",
                    static_cast<double>(static_cast<const float*>(data)[i]));
      break;
    case HMRT_DTYPE_F16:
    case HMRT_DTYPE_BF16: {
      // Printed as the float it converts to exactly.
      float f = 0.0f;
      if (hmrt_cast(dtype, static_cast<const uint16_t*>(data) + i,
                    HMRT_DTYPE_F32, &f, 1) != HMRT_OK)
        die("cannot convert an output value: %s", last_error().c_str());
      std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(f));
      break;
    }
    case HMRT_DTYPE_U64:
      std::snprintf(buf, sizeof(buf), "%llu",
                    (unsigned long long)static_cast<const uint64_t*>(data)[i]);
      break;
    case HMRT_DTYPE_U32:
      std::snprintf(buf, sizeof(buf), "%u",
                    unsigned(static_cast<const uint32_t*>(data)[i]));
      break;
    case HMRT_DTYPE_U16:
      std::snprintf(buf, sizeof(buf), "%u",
                    unsigned(static_cast<const uint16_t*>(data)[i]));
      break;
    case HMRT_DTYPE_I16:
      std::snprintf(buf, sizeof(buf), "%d",
                    int(static_cast<const int16_t*>(data)[i]));
      break;
    case HMRT_DTYPE_F64:
      std::snprintf(buf, sizeof(buf), "%.17g", static_cast<const double*>(data)[i]);
      break;
    case HMRT_DTYPE_I64:
      std::snprintf(buf, sizeof(buf), "%lld",
                    (long long)static_cast<const int64_t*>(data)[i]);
      break;
    case HMRT_DTYPE_I32:
      std::snprintf(buf, sizeof(buf), "%d", static_cast<const int32_t*>(data)[i]);
      break;
    case HMRT_DTYPE_I8:
      std::snprintf(buf, sizeof(buf), "%d", static_cast<const int8_t*>(data)[i]);
      break;
    default:  // U8, BOOL
      std::snprintf(buf, sizeof(buf), "%u",
                    unsigned(static_cast<const uint8_t*>(data)[i]));
  }
  return buf;
}

int Trainer::eval() {
  if (p_->forward == nullptr) die("the program has no forward function");
  std::unique_ptr<Tracer> tracer;
  if (!o_.trace.empty())
    tracer.reset(new Tracer(o_.trace, o_.force, p_->forward_ops,
                            p_->num_forward_ops));
  if (tracer) tracer->set_model(p_->model_name ? p_->model_name : "");
  const int64_t t0 = tracer ? tracer->now() : 0;
  write_inputs(position_ + 1);
  const int64_t t1 = tracer ? tracer->now() : 0;
  hmrt_clear_error();
  const hmrt_status st = p_->forward(exec_.get());
  if (st != HMRT_OK)
    die("the forward pass failed: %s%s%s", hmrt_status_string(st),
        last_error().empty() ? "" : ": ", last_error().c_str());
  if (tracer) {
    tracer->span("inputs", 1, t0, t1, "");
    tracer->span("forward", 1, t1, tracer->now(), "");
    tracer->collect(0);
    tracer->write(p_->model_name ? p_->model_name : "");
  }
  if (o_.dump_set) {
    std::error_code ec;
    fs::create_directories(o_.dump_outputs, ec);
    if (ec)
      die("--dump-outputs %s: cannot create the directory: %s",
          o_.dump_outputs.c_str(), ec.message().c_str());
  }
  std::vector<uint8_t> host;  // the output, copied out of its arena
  for (int32_t i = 0; i < p_->num_outputs; ++i) {
    const hmrt_tensor_desc& d = p_->outputs[i];
    host.resize(static_cast<size_t>(d.bytes));
    if (hmrt_copy_to_host(host.data(), hmrt_exec_arena(exec_.get(), d.tier),
                          d.offset, d.bytes) != HMRT_OK)
      die("cannot read output '%s': %s", d.name, last_error().c_str());
    const void* data = host.data();
    const int64_t count =
        static_cast<int64_t>(d.bytes / hmrt_dtype_size(d.dtype));
    if (!o_.quiet) {
      std::string line = "output " + std::string(d.name) + " " + type_str(d);
      if (count <= 64) {
        line += " = [";
        for (int64_t k = 0; k < count; ++k)
          line += (k ? ", " : "") + format_value(d.dtype, data, k);
        line += "]";
      } else {
        line += " = [";
        for (int64_t k = 0; k < 8; ++k)
          line += (k ? ", " : "") + format_value(d.dtype, data, k);
        line += ", ...] (" + std::to_string((long long)count) + " values)";
      }
      std::printf("%s\n", line.c_str());
    }
    if (o_.dump_set) {
      const std::string file = file_name_for(d.name) + ".npy";
      const std::string path = (fs::path(o_.dump_outputs) / file).string();
      // Checked before any work; again here, as the file may have appeared
      // since (hmrt_npy_write replaces a file: it writes beside it and
      // renames).
      check_output_file("--dump-outputs", path, o_.force);
      if (hmrt_npy_write(path.c_str(), d.dtype, d.rank, d.shape, data) !=
          HMRT_OK)
        die("--dump-outputs: %s", last_error().c_str());
    }
  }
  check_stdout();
  return 0;
}

// Refuses, before any work, every output train may not write: --metrics,
// --trace and the --dump-outputs files that exist (without --force), or are
// symbolic links or not regular files; a --dump-outputs directory that is a
// symbolic link or not a directory; a --save directory that a checkpoint
// may not replace (hmrt_checkpoint_check_target), or that holds one already
// (without --force, unless it is the --resume checkpoint).
// Whether `inner` is `outer` or lies inside it (both canonical).
bool within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin(), i = inner.begin();
  for (; o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

// No output names another output, one of the run's inputs, or a place
// inside or around one: --force replaces outputs, never inputs.
void check_distinct(const Options& o) {
  auto canonical = [](const std::string& p) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(p, ec);
    return ec ? fs::absolute(p).lexically_normal() : c;
  };
  std::vector<std::pair<const char*, std::string>> outputs, inputs;
  if (!o.metrics.empty()) outputs.push_back({"--metrics", o.metrics});
  if (!o.trace.empty()) outputs.push_back({"--trace", o.trace});
  if (o.dump_set) outputs.push_back({"--dump-outputs", o.dump_outputs});
  if (!o.save.empty()) outputs.push_back({"--save", o.save});
  if (!o.data.empty()) inputs.push_back({"--data", o.data});
  if (!o.state.empty()) inputs.push_back({"--state", o.state});
  for (const auto& f : o.feeds) inputs.push_back({"--feed", f.second});
  for (size_t i = 0; i < outputs.size(); ++i) {
    const fs::path out = canonical(outputs[i].second);
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      const fs::path other = canonical(outputs[j].second);
      if (within(out, other) || within(other, out))
        die("%s %s and %s %s name the same place", outputs[i].first,
            outputs[i].second.c_str(), outputs[j].first,
            outputs[j].second.c_str());
    }
    for (const auto& in : inputs) {
      const fs::path input = canonical(in.second);
      if (within(out, input) || within(input, out))
        die("%s %s: it is, holds or lies inside the input %s %s; train never "
            "writes over its inputs",
            outputs[i].first, outputs[i].second.c_str(), in.first,
            in.second.c_str());
    }
    // --save may replace the checkpoint it resumed from, nothing else in it.
    if (!o.resume.empty() && std::strcmp(outputs[i].first, "--save") != 0) {
      const fs::path resume = canonical(o.resume);
      if (within(out, resume) || within(resume, out))
        die("%s %s: it is, holds or lies inside the input --resume %s; train "
            "never writes over its inputs",
            outputs[i].first, outputs[i].second.c_str(), o.resume.c_str());
    }
  }
}

void Trainer::check_outputs() {
  if (!o_.metrics.empty()) check_output_file("--metrics", o_.metrics, o_.force);
  if (!o_.trace.empty()) check_output_file("--trace", o_.trace, o_.force);
  if (o_.dump_set) {
    const int kind = hmrt::io::path_kind(o_.dump_outputs);
    if (kind == 2)
      die("--dump-outputs %s: it is a symbolic link; train never writes "
          "through one (remove it or name another directory)",
          o_.dump_outputs.c_str());
    if (kind == 1 || kind == 4)
      die("--dump-outputs %s: it exists and is not a directory",
          o_.dump_outputs.c_str());
    std::map<std::string, std::string> files;
    for (int32_t i = 0; i < p_->num_outputs; ++i) {
      const char* name = p_->outputs[i].name;
      const std::string file = file_name_for(name) + ".npy";
      auto prev = files.find(file);
      if (prev != files.end())
        die("--dump-outputs: outputs '%s' and '%s' both map to the file %s",
            prev->second.c_str(), name, file.c_str());
      files[file] = name;
      if (kind == 3)
        check_output_file("--dump-outputs",
                          (fs::path(o_.dump_outputs) / file).string(),
                          o_.force);
    }
  }
  if (!o_.save.empty()) {
    if (hmrt_checkpoint_check_target(o_.save.c_str()) != HMRT_OK)
      die("--save %s", last_error().c_str());
    std::error_code ec;
    const bool occupied = hmrt::io::path_kind(o_.save) == 3 &&
                          !fs::is_empty(o_.save, ec) && !ec;
    const bool resumed_here =
        !o_.resume.empty() && fs::equivalent(o_.save, o_.resume, ec) && !ec;
    if (occupied && !o_.force && !resumed_here)
      die("--save %s: it holds a checkpoint already; pass --force to replace "
          "it",
          o_.save.c_str());
  }
  check_distinct(o_);
}

void Trainer::save(int64_t step) {
  hmrt_checkpoint_meta meta;
  std::memset(&meta, 0, sizeof(meta));
  meta.step = step;
  meta.data_position = position_;
  meta.seed = seed_;
  if (hmrt_checkpoint_save(o_.save.c_str(), p_, exec_.get(), &meta) != HMRT_OK)
    die("--save %s", last_error().c_str());
  log("saved checkpoint %s (step %lld)\n", o_.save.c_str(), (long long)step);
}

int Trainer::train() {
  if (p_->step == nullptr || p_->hyper.optimizer == HMRT_OPT_NONE)
    die("the program is forward-only (compiled without an optimizer); use "
        "--eval");
  if (p_->hyper.lr_schedule != HMRT_LR_CONSTANT &&
      p_->hyper.lr_schedule != HMRT_LR_COSINE)
    die("the program has unknown learning-rate schedule %d",
        p_->hyper.lr_schedule);
  const int64_t last = o_.steps;
  if (step0_ >= last) {
    log("the checkpoint is at step %lld and --steps is %lld: nothing to do\n",
        (long long)step0_, (long long)last);
    return 0;
  }
  std::unique_ptr<Output> metrics;
  if (!o_.metrics.empty())
    metrics.reset(new Output("--metrics", o_.metrics, o_.force));
#if defined(__unix__) || defined(__APPLE__)
  bar_ = !o_.quiet && ::isatty(::fileno(stdout));
#endif
  const bool token_model = use_loader_;
  const double per_step =
      token_model ? double(batch_ * seq_len_) : double(examples_per_step_);
  const char* unit = token_model ? "tok/s" : "examples/s";

  if (use_loader_)
    log("training '%s': steps %lld..%lld, batch %lld x %lld tokens from %s "
        "(%lld tokens), seed %llu\n",
        p_->model_name ? p_->model_name : "", (long long)(step0_ + 1),
        (long long)last, (long long)batch_, (long long)seq_len_,
        o_.data.c_str(), (long long)hmrt_tokens_count(tokens_.get()),
        (unsigned long long)seed_);
  else
    log("training '%s': steps %lld..%lld\n",
        p_->model_name ? p_->model_name : "", (long long)(step0_ + 1),
        (long long)last);
  // The memory of each tier: the arenas the plan sized, allocated whole
  // (nothing else is allocated per step).
  if (p_->storage_arena_bytes) {
    const char* dir = hmrt_storage_dir();
    log("memory: device arena %s, host arena %s, storage arena %s in %s (as planned)\n",
        human_bytes(double(p_->arena_bytes)).c_str(),
        human_bytes(double(p_->host_arena_bytes)).c_str(),
        human_bytes(double(p_->storage_arena_bytes)).c_str(),
        dir);
  } else if (p_->host_arena_bytes) {
    log("memory: device arena %s, host arena %s (as planned)\n",
        human_bytes(double(p_->arena_bytes)).c_str(),
        human_bytes(double(p_->host_arena_bytes)).c_str());
  }

  std::unique_ptr<Tracer> tracer;
  if (!o_.trace.empty())
    tracer.reset(new Tracer(o_.trace, o_.force, p_->step_ops,
                            p_->num_step_ops));
  if (tracer) tracer->set_model(p_->model_name ? p_->model_name : "");
  const int64_t trace_last = std::min(last, step0_ + o_.trace_steps);

  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  auto t_log = t_start;
  auto t_bar = t_start - std::chrono::seconds(1);
  int64_t steps_since_log = 0;
  int64_t last_saved = -1;
  float loss = 0.0f;
  for (int64_t s = step0_ + 1; s <= last; ++s) {
    const auto t0 = clock::now();
    const bool traced = tracer && s <= trace_last;
    const int64_t trace0 = traced ? tracer->now() : 0;
    if (use_loader_) {
      write_inputs(position_ + 1);
      ++position_;
    } else {
      write_inputs(1);
    }
    const int64_t trace1 = traced ? tracer->now() : 0;
    const float lr = hmrt_lr_at(&p_->hyper, s, last);
    float grad_norm = 0.0f;
    hmrt_clear_error();
    const hmrt_status st = p_->step(exec_.get(), s, lr, &loss, &grad_norm);
    if (st != HMRT_OK)
      die("step %lld failed: %s%s%s", (long long)s, hmrt_status_string(st),
          last_error().empty() ? "" : ": ", last_error().c_str());
    const auto t1 = clock::now();
    if (traced) {
      const std::string step_arg = "\"step\": " + std::to_string((long long)s);
      tracer->span("inputs", 1, trace0, trace1, step_arg);
      tracer->span("step " + std::to_string((long long)s), 1, trace1, tracer->now(), step_arg);
      tracer->collect(s);
      if (s == trace_last) {
        tracer->write(p_->model_name ? p_->model_name : "");
        log("wrote the trace of steps %lld..%lld to %s\n", (long long)(step0_ + 1),
            (long long)s, o_.trace.c_str());
        // Each stream's busy time per traced step (streams run beside one
        // another: the step can take less than their sum).
        const double steps = double(s - step0_);
        std::string busy;
        for (int k = 0; k < Tracer::kStreams; ++k)
          if (tracer->busy()[k] > 0 || k == 0) {
            char part[96];
            std::snprintf(part, sizeof part, "%s%s %.2f ms", busy.empty() ? "" : ", ",
                          Tracer::kStreamNames[k], tracer->busy()[k] / 1e6 / steps);
            busy += part;
          }
        log("streams busy per traced step: %s\n", busy.c_str());
      }
    }
    if (!std::isfinite(loss))
      die("step %lld: the loss is %s; stopping (lr %.3e)", (long long)s,
          std::isnan(loss) ? "nan" : "infinite", static_cast<double>(lr));
    const double step_s = std::chrono::duration<double>(t1 - t0).count();
    const double elapsed = std::chrono::duration<double>(t1 - t_start).count();
    ++steps_since_log;

    if (metrics) {
      std::fprintf(metrics->get(),
                   "{\"step\": %lld, \"loss\": %.9g, \"lr\": %.9g, "
                   "\"grad_norm\": %.9g, \"%s\": %.6g, \"elapsed_s\": %.6f}\n",
                   (long long)s, static_cast<double>(loss),
                   static_cast<double>(lr), static_cast<double>(grad_norm),
                   token_model ? "tokens_per_s" : "examples_per_s",
                   step_s > 0 ? per_step / step_s : 0.0, elapsed);
      errno = 0;
      if (std::fflush(metrics->get()) != 0 || std::ferror(metrics->get()))
        die("--metrics %s: write failed: %s", o_.metrics.c_str(),
            errno != 0 ? std::strerror(errno) : "write error");
    }
    if (s % o_.log_every == 0 || s == last) {
      const double span = std::chrono::duration<double>(t1 - t_log).count();
      const double rate = span > 0 ? per_step * steps_since_log / span : 0.0;
      char lr_text[32] = "";
      if (has_lr(&p_->hyper))
        std::snprintf(lr_text, sizeof lr_text, " | lr %.3e", static_cast<double>(lr));
      log("step %lld/%lld | loss %#.7g%s | grad norm %.4f | %.0f %s\n",
          (long long)s, (long long)last, static_cast<double>(loss), lr_text,
          static_cast<double>(grad_norm), rate, unit);
      t_log = t1;
      steps_since_log = 0;
    }
    if (o_.save_every && s % o_.save_every == 0) {
      save(s);
      last_saved = s;
    }
    // Redraw the bar at most ten times a second.
    if (bar_ && s < last &&
        std::chrono::duration<double>(t1 - t_bar).count() >= 0.1) {
      t_bar = t1;
      const int width = 30;
      const double frac = double(s - step0_) / double(last - step0_);
      const int filled = static_cast<int>(frac * width);
      const double eta = elapsed / double(s - step0_) * double(last - s);
      std::printf("\r\033[K[%s%s] %lld/%lld %3.0f%% eta %s",
                  std::string(filled, '#').c_str(),
                  std::string(width - filled, '.').c_str(), (long long)s,
                  (long long)last, frac * 100.0, human_seconds(eta).c_str());
      bar_shown_ = true;
      check_stdout();
    }
  }
  if (!o_.save.empty() && last_saved != last) save(last);
  if (metrics) metrics->commit();
  const double total =
      std::chrono::duration<double>(clock::now() - t_start).count();
  log("done: %lld steps in %.2f s, final loss %#.7g\n",
      (long long)(last - step0_), total, static_cast<double>(loss));
  return 0;
}

int Trainer::run() {
  check_program(p_);
  check_outputs();
  if (o_.threads > 0 && hmrt_set_num_threads(o_.threads) != HMRT_OK)
    die("--threads: %s", last_error().c_str());
  // The device the program was generated for, and its arenas.
  const char* backend = !o_.device.empty() ? o_.device.c_str()
                        : p_->backend != nullptr && p_->backend[0] != '\0'
                            ? p_->backend
                            : hmrt_backend_name(0);
  hmrt_device* dev = nullptr;
  if (hmrt_device_open(backend, &dev) != HMRT_OK)
    die("%s: %s", o_.device.empty() ? "cannot open the program's device" : "--device",
        last_error().c_str());
  device_.reset(dev);
  // The storage tier's file goes where --nvme says (the backend reads
  // HMRT_STORAGE_DIR when it creates it).
  if (!o_.nvme.empty()) ::setenv("HMRT_STORAGE_DIR", o_.nvme.c_str(), 1);
  hmrt_exec* x = nullptr;
  if (hmrt_exec_create_for_program(dev, p_, &x) != HMRT_OK) {
    std::string sizes = human_bytes(double(p_->arena_bytes));
    if (p_->host_arena_bytes || p_->storage_arena_bytes)
      sizes += " (device), " + human_bytes(double(p_->host_arena_bytes)) +
               " (host), " + human_bytes(double(p_->storage_arena_bytes)) +
               " (storage)";
    die("cannot allocate the program's arena of %s: %s", sizes.c_str(),
        last_error().c_str());
  }
  exec_.reset(x);
  // Deterministic contents for whatever the program reads before writing.
  for (int32_t t = 0; t < HMRT_TIER_COUNT; ++t) {
    hmrt_buffer* arena = hmrt_exec_arena(x, t);
    if (hmrt_memset(arena, 0, 0, hmrt_buffer_size(arena)) != HMRT_OK)
      die("cannot zero the program's %s arena: %s", hmrt_tier_name(t),
          last_error().c_str());
  }

  setup_inputs();
  load_state();
  open_data();
  return o_.eval ? eval() : train();
}

}  // namespace

extern "C" {

float hmrt_lr_at(const hmrt_hyperparams* h, int64_t step, int64_t total_steps) {
  if (h == nullptr) return NAN;
  const double lr = h->lr;
  switch (h->lr_schedule) {
    case HMRT_LR_CONSTANT:
      return h->lr;
    case HMRT_LR_COSINE: {
      const double min_lr = h->min_lr;
      const int64_t w = h->warmup_steps > 0 ? h->warmup_steps : 0;
      const int64_t d = h->decay_steps > 0 ? h->decay_steps : total_steps;
      if (w > 0 && step <= w) return static_cast<float>(lr * double(step) / double(w));
      if (step > d) return h->min_lr;
      const double ratio = double(step - w) / double(d - w);
      return static_cast<float>(min_lr + (lr - min_lr) * 0.5 *
                                             (1.0 + std::cos(kPi * ratio)));
    }
  }
  return NAN;
}

int hmrt_train_main(int argc, char** argv, const hmrt_program* program) {
  std::clearerr(stdout);  // report only this call's write errors
  try {
    Options o = parse_args(argc, argv);
    if (o.help) {
      print_help(program);
      check_stdout();
      return 0;
    }
    int rc = 0;
    {
      Trainer t(o, program, argc > 0 ? argv[0] : nullptr);
      rc = t.run();
    }  // the destructor may still write (it clears the progress bar)
    check_stdout();
    return rc;
  } catch (const Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "train: error: %s\n", e.message.c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fprintf(stderr, "train: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "train: error: %s\n", e.what());
    return 1;
  }
}

}  // extern "C"
