//===- HostCompiler.cpp - builds the CPU program with the host compiler ---===//
#include "compiler/target/cpu/EmitCpp.h"

#include "hmrt/device.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Program.h"

using namespace llvm;

bool hmcc::haveCudaRuntime() { return StringRef(HMCC_RUNTIME_CUDA_LIB).size() != 0; }

uint64_t hmcc::cudaRuntimeDeviceBytes() {
  return HMRT_CUDA_SCRATCH_BYTES + HMRT_CUDA_BLAS_WORKSPACE_BYTES;
}

std::string hmcc::cudaRuntimeArchs() {
  SmallVector<StringRef> archs;
  StringRef(HMCC_RUNTIME_CUDA_ARCHS).split(archs, '|', -1, /*KeepEmpty=*/false);
  std::string out;
  for (StringRef a : archs)
    out += (out.empty() ? "sm_" : ", sm_") + a.take_while([](char c) { return llvm::isDigit(c); }).str();
  return out;
}

bool hmcc::cudaRuntimeHasArch(StringRef arch) {
  SmallVector<StringRef> archs;
  StringRef(HMCC_RUNTIME_CUDA_ARCHS).split(archs, '|', -1, /*KeepEmpty=*/false);
  return arch.consume_front("sm_") &&
         llvm::any_of(archs, [&](StringRef a) {
           return a.take_while([](char c) { return llvm::isDigit(c); }) == arch;
         });
}

bool hmcc::compileHostExecutable(StringRef cppPath, StringRef exePath, StringRef logPath,
                                 bool cuda, ArrayRef<std::string> objects, std::string &error) {
  auto cxx = sys::findProgramByName("c++");
  if (!cxx) {
    error = "no C++ compiler ('c++') found on PATH to build the program";
    return false;
  }
  // -O1: the program is one long function of calls into the runtime, whose
  // kernels do the work; -O2's passes grow faster than linearly with it (a
  // 22 B GPT with chunked updates: 98,000 lines, 6 minutes at -O2, 77 s at
  // -O1) for no speed the kernels would show.
  SmallVector<std::string> args = {*cxx, "-O1", "-std=c++17", "-I" HMCC_RUNTIME_INCLUDE_DIR,
                                   cppPath.str()};
  args.append(objects.begin(), objects.end());
  args.push_back(HMCC_RUNTIME_DRIVER_LIB);
  // The CUDA backend whole: the runtime's registry reaches it only through
  // a weak reference (runtime/core/registry.cpp).
  if (cuda)
    args.append({"-Wl,--whole-archive", HMCC_RUNTIME_CUDA_LIB, "-Wl,--no-whole-archive"});
  args.push_back(HMCC_RUNTIME_LIB);
  SmallVector<StringRef> cudaLibs;
  if (cuda)
    StringRef(HMCC_RUNTIME_CUDA_LINK_LIBS).split(cudaLibs, '|', -1, /*KeepEmpty=*/false);
  // The system libraries libhmrt.a needs, separated by commas (-lz,-luring).
  SmallVector<StringRef> systemLibs;
  StringRef(HMCC_RUNTIME_SYSTEM_LIBS).split(systemLibs, ',', -1, /*KeepEmpty=*/false);
  for (StringRef lib : llvm::concat<StringRef>(systemLibs, cudaLibs))
    args.push_back(lib.str());
  args.append({"-fopenmp", "-lm", "-o", exePath.str()});
  // What libhmrt.a needs besides (OpenBLAS, found by path), before -o EXE.
  if (StringRef(HMCC_RUNTIME_EXTRA_LIB).size()) {
    args.insert(args.end() - 2, HMCC_RUNTIME_EXTRA_LIB);
    args.insert(args.end() - 2, std::string("-Wl,-rpath,") + HMCC_RUNTIME_EXTRA_RPATH);
  }
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {std::nullopt, logPath, logPath};
  std::string execError;
  int rc = sys::ExecuteAndWait(*cxx, argRefs, std::nullopt, redirects, 0, 0, &execError);
  if (rc != 0) {
    error = ("building " + exePath + " failed" + (execError.empty() ? "" : ": " + execError) +
             "; the compiler's output is in " + logPath)
                .str();
    return false;
  }
  return true;
}
