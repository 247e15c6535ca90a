//===- ImportHarness.cpp - the importer's fuzz targets share this ---------===//
#include "ImportHarness.h"

#include "lib/import/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

// The checks on open: the linker sends the calls to open/fopen of every
// statically linked object (the project, LLVM, MLIR) here (-Wl,--wrap=...).
extern "C" {
int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __real_openat(int dirfd, const char *path, int flags, ...);
int __real_openat64(int dirfd, const char *path, int flags, ...);
FILE *__real_fopen(const char *path, const char *mode);
FILE *__real_fopen64(const char *path, const char *mode);
}

namespace {

/// Set while this thread imports: what it opens is checked.
thread_local bool guarding = false;
/// The first file opened outside the model's folder in this import. Reported
/// after the import returns: were it reported at once, a crash report
/// (libFuzzer writes the input to a file) could not be written.
thread_local std::string escaped;
/// The sandbox and the model's folder in it, resolved (no symlinks).
std::string base, modelDir;

[[noreturn]] void die(const std::string &what) {
  fprintf(stderr, "==hmcc-fuzz== %s\n", what.c_str());
  fflush(stderr);
  abort();
}

void checkOpened(int fd, const char *path) {
  if (!guarding || fd < 0)
    return;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0)
    return;
  target[n] = 0;
  std::string real(target);
  if (escaped.empty() && real.compare(0, modelDir.size() + 1, modelDir + "/") != 0)
    escaped = "the importer opened '" + std::string(path) + "', which is '" + real +
              "', outside the model's folder " + modelDir;
}

int modeArg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

void writeFile(const std::string &path, const std::string &bytes) {
  FILE *f = __real_fopen(path.c_str(), "wb");
  if (!f || fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || fclose(f) != 0)
    die("cannot write " + path);
}

std::set<std::string> listing(const std::string &dir) {
  std::set<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
        names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

int removeEntry(const char *path, const struct stat *, int, struct FTW *) {
  return remove(path);
}

void removeSandbox() {
  if (!base.empty())
    nftw(base.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS);
}

const std::set<std::string> baseFiles = {"model", "outside.bin"};
const std::set<std::string> modelFiles = {"empty.bin", "link.bin", "linkdir", "sub",
                                          "weights.bin"};

void makeSandbox() {
  const char *tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/hmcc-import-fuzz-XXXXXX";
  if (!mkdtemp(pattern.data()))
    die("cannot make a folder like " + pattern);
  char real[PATH_MAX];
  if (!realpath(pattern.c_str(), real))
    die("cannot resolve " + pattern);
  base = real;
  atexit(removeSandbox);
  modelDir = base + "/model";
  std::string weights;
  for (int k = 0; k < 16; ++k) {
    float v = 0.25f * k;
    weights.append(reinterpret_cast<const char *>(&v), sizeof v);
  }
  if (mkdir(modelDir.c_str(), 0700) || mkdir((modelDir + "/sub").c_str(), 0700))
    die("cannot make folders in " + base);
  writeFile(base + "/outside.bin", weights);
  writeFile(modelDir + "/weights.bin", weights);
  writeFile(modelDir + "/empty.bin", "");
  writeFile(modelDir + "/sub/w.bin", weights.substr(0, 32));
  if (symlink("../outside.bin", (modelDir + "/link.bin").c_str()) ||
      symlink("..", (modelDir + "/linkdir").c_str()))
    die("cannot make symlinks in " + modelDir);
}

} // namespace

extern "C" {
int __wrap_open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = modeArg(flags, ap);
  va_end(ap);
  int fd = __real_open(path, flags, mode);
  checkOpened(fd, path);
  return fd;
}
int __wrap_open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = modeArg(flags, ap);
  va_end(ap);
  int fd = __real_open64(path, flags, mode);
  checkOpened(fd, path);
  return fd;
}
int __wrap_openat(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = modeArg(flags, ap);
  va_end(ap);
  int fd = __real_openat(dirfd, path, flags, mode);
  checkOpened(fd, path);
  return fd;
}
int __wrap_openat64(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = modeArg(flags, ap);
  va_end(ap);
  int fd = __real_openat64(dirfd, path, flags, mode);
  checkOpened(fd, path);
  return fd;
}
FILE *__wrap_fopen(const char *path, const char *mode) {
  FILE *f = __real_fopen(path, mode);
  if (f)
    checkOpened(fileno(f), path);
  return f;
}
FILE *__wrap_fopen64(const char *path, const char *mode) {
  FILE *f = __real_fopen64(path, mode);
  if (f)
    checkOpened(fileno(f), path);
  return f;
}
}

namespace hmcc::fuzz {

bool importBytes(const uint8_t *data, size_t size) {
  static bool ready = (makeSandbox(), true);
  (void)ready;
  size_t first = 0;
  while (first < size && isspace(data[first]))
    ++first;
  bool text = first < size && data[first] == '<';
  std::string path = modelDir + (text ? "/model.onnxtxt" : "/model.onnx");
  writeFile(path, std::string(reinterpret_cast<const char *>(data), size));

  bool ok = false;
  {
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    // The importer's errors come back as one message; any diagnostic on the
    // way (a verifier's) is not the fuzzer's business.
    mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) {
      return mlir::success();
    });
    std::string error;
    // Symbolic batch and sequence dimensions get values, as hmcc's --batch
    // and --seq give them, so that dynamic models import further.
    hmcc::ImportOptions options;
    options.batch = 2;
    options.seq = 5;
    escaped.clear();
    guarding = true;
    auto module = hmcc::importOnnxModel(context, path, options, error);
    guarding = false;
    if (!escaped.empty())
      die(escaped);
    static const bool verbose = getenv("HMCC_FUZZ_VERBOSE") != nullptr;
    if (verbose)
      fprintf(stderr, "import: %s\n", module ? "ok" : error.c_str());
    if (module) {
      ok = true;
      if (mlir::failed(mlir::verify(*module)))
        die("the importer returned a module that does not verify");
    } else if (error.empty()) {
      die("the import failed without a message");
    }
  }

  if (unlink(path.c_str()) != 0)
    die("the model file " + path + " is gone");
  if (listing(base) != baseFiles || listing(modelDir) != modelFiles ||
      listing(modelDir + "/sub") != std::set<std::string>{"w.bin"})
    die("the import left files behind or removed some in " + base);
  return ok;
}

} // namespace hmcc::fuzz
