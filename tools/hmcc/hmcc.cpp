//===- hmcc.cpp - the hmcc compiler driver --------------------------------===//
//
//   hmcc model.onnx [--batch N] [--seq N] [--input-shape NAME=D0,D1]
//        [--frozen NAME] [--vram SIZE] [--ram SIZE] [--nvme PATH:SIZE]
//        [--emit=summary|import|mlir|schedule|emitc|cpp|exe] [-o FILE|DIR]
//
// Exit status: 0 on success, 1 on any error (one message on stderr).
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/DeviceProfile.h"
#include "compiler/planner/Timeline.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/target/common/Runtime.h"
#include "compiler/target/cpu/EmitCpp.h"
#include "compiler/target/cuda/FusedKernels.h"
#include "hm/Analysis/Liveness.h"
#include "hm/Analysis/Memory.h"
#include "hm/Export/MemoryPlot.h"
#include "hm/Export/ScheduleJson.h"
#include "hm/IR/HMOps.h"
#include "lib/import/Initializers.h"
#include "lib/import/OnnxImporter.h"
#include "lib/support/Memory.h"
#include "lib/support/Output.h"
#include "lib/support/Size.h"
#include "lib/support/Text.h"
#include "tg/IR/TGOps.h"
#include "tg/Transforms/Passes.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/DebugStringHelper.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"

#include <csignal>
#include <cstdlib>
#include <thread>

using namespace llvm;

namespace {

cl::OptionCategory inputCategory("Input");
cl::OptionCategory budgetCategory(
    "Memory budget",
    "--vram bounds the program's device arena: when the unplanned program does not fit,\n"
    "the planner homes parameters (with their gradients and optimizer states) in host\n"
    "memory and recomputes activations (the cheapest choice by --device-profile's cost\n"
    "model) until it does, or says which budget is the smallest that fits. --ram bounds\n"
    "the host arena: past it, with --nvme, the optimizer states of parameters on the host\n"
    "live in a storage file (train --nvme DIR says where) and are updated through two\n"
    "host staging buffers; when that is not enough, the largest of those parameters\n"
    "follow, read from storage for each use. Copies, host updates and storage run on\n"
    "streams of their own, overlapping compute.");
cl::OptionCategory outputCategory("Output");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx | model.onnxtxt>"),
                               cl::cat(inputCategory));

cl::opt<int64_t> batch("batch", cl::value_desc("N"),
                       cl::desc("Bind dimension 0 of every data input where it is symbolic"),
                       cl::init(0), cl::cat(inputCategory));
cl::opt<int64_t> seqLen("seq", cl::value_desc("N"),
                     cl::desc("Bind dimension 1 of every data input where it is symbolic"),
                     cl::init(0), cl::cat(inputCategory));
cl::list<std::string> inputShapes(
    "input-shape", cl::value_desc("NAME=D0,D1,..."),
    cl::desc("Give the whole shape of data input NAME (repeatable); a symbol bound "
             "here is bound wherever it appears"),
    cl::cat(inputCategory));
cl::list<std::string> frozen(
    "frozen", cl::value_desc("NAME"),
    cl::desc("Treat initializer NAME (a glob pattern such as 'rope_*' works too) as a "
             "constant, not a trainable parameter (repeatable)"),
    cl::cat(inputCategory));

cl::list<std::string> inputValues(
    "input-value", cl::value_desc("NAME=FILE.pb"),
    cl::desc("Fix data input NAME to the onnx.TensorProto in FILE.pb at compile time, "
             "e.g. a shape or axes that a graph takes as an input (repeatable)"),
    cl::cat(inputCategory));

cl::opt<std::string> vram("vram", cl::value_desc("SIZE"),
                          cl::desc("Device memory budget, e.g. 24G, 512M, 1.5T (binary units); "
                                   "the program must fit or hmcc refuses it. With --target "
                                   "cuda the CUDA runtime's own 96 MiB (kernel scratch, cuBLAS's "
                                   "workspace) come off it; the CUDA context does not"),
                          cl::cat(budgetCategory));
cl::opt<std::string> ram("ram", cl::value_desc("SIZE"),
                         cl::desc("Host memory budget for the host arena (parameters, gradients "
                                  "and optimizer states the planner homes there), e.g. 96G"),
                         cl::cat(budgetCategory));
cl::opt<std::string> quantizeStates(
    "quantize-states", cl::value_desc("never|auto|always"),
    cl::desc("AdamW's moments in block-wise 8 bits (as bitsandbytes' AdamW8bit; parameters of "
             "4096 elements or more): never (default), auto (the largest parameters' first: as "
             "--vram needs before any parameter goes to the host, or as many as save recompute "
             "under it, by 1% of the step or more, or all of them when parameters "
             "must go to the host anyway and the profile's host updates 8-bit moments as fast as "
             "fp32 ones; as --ram needs before any state goes to storage; then those in storage "
             "while 8 bits shorten the predicted step), "
             "always (every parameter: --optimizer adamw8bit)"),
    cl::init("never"), cl::cat(budgetCategory));
cl::opt<std::string> nvme("nvme", cl::value_desc("DIR:SIZE"),
                          cl::desc("Storage for optimizer states (then parameters) past --ram: "
                                   "a directory and the "
                                   "budget of the storage arena, e.g. /mnt/ssd/hm:400G (the "
                                   "size bounds the plan; train --nvme DIR places the file)"),
                          cl::cat(budgetCategory));
cl::opt<std::string> chunkSize(
    "chunk-size", cl::value_desc("SIZE"),
    cl::desc("With states (or parameters) in storage: update larger parameters chunk by chunk "
             "of SIZE bytes of parameter (a multiple of 4K, at least 4K; 1M with 8-bit states), "
             "each chunk's stored tensors staged through host memory in turn, so staging takes "
             "two chunks' instead of two whole parameters'; and where parameters must leave the "
             "device for --vram, the last of them split into chunks of rows, the fewest last "
             "chunks on the host, when that predicts a faster step (default: whole parameters)"),
    cl::cat(budgetCategory));

cl::opt<std::string> deviceProfile(
    "device-profile", cl::value_desc("cpu|h200|FILE.json"),
    cl::desc("The machine the planner's cost model predicts for (default cpu; h200 for "
             "--target cuda, the GPU profile hmcc has); a JSON profile has the fields of "
             "docs/device-profile.md"),
    cl::init("cpu"), cl::cat(budgetCategory));
cl::opt<std::string> hostParams(
    "host-params", cl::value_desc("auto|none|all|NAMES"),
    cl::desc("Which parameters live in host memory with their gradients and optimizer states, "
             "fetched to the device where read: auto (what --vram needs, default), none, all, "
             "or parameter names separated by commas, one of which may be NAME:ROWS (its last "
             "ROWS rows on the host, the rest on the device)"),
    cl::init("auto"), cl::cat(budgetCategory));
cl::opt<std::string> deviceUpdates(
    "device-updates", cl::value_desc("auto|none|all|NAMES"),
    cl::desc("Which parameters in host memory have their optimizer updates run on the device: "
             "their parameter and states copied there for the update through two staging "
             "buffers and back after it, their gradient never copied to the host: auto (a share of "
             "them, those whose host updates would end the step, where --vram puts parameters "
             "on the host, the device profile's copies do not share the host's cores (the cpu "
             "profile's do) and the step then predicts faster; default), none, all, or "
             "parameter names separated by commas"),
    cl::init("auto"), cl::cat(budgetCategory));
cl::opt<std::string> bf16Fetches(
    "bf16-fetches", cl::value_desc("auto|always|never"),
    cl::desc("With --precision bf16, fetch parameters in host memory to the device in bf16 for "
             "the GEMMs that read them (which round them to bf16 anyway): rounded once a step "
             "on the host, half the bytes over the link, the same results bit for bit (other "
             "readers get fp32 copies): auto (where the device profile's copies do not share "
             "the host's cores, as h200's; not cpu's; default), always or never"),
    cl::init("auto"), cl::cat(budgetCategory));
cl::opt<bool> measureDevice(
    "measure-device",
    cl::desc("Measure this machine with the runtime's own kernels and I/O and write its device "
             "profile to -o FILE.json (for --device-profile); with --nvme DIR:SIZE, storage is "
             "measured in DIR"),
    cl::init(false), cl::cat(budgetCategory));
cl::opt<bool> quickMeasure("quick", cl::desc("With --measure-device: small sizes, rough figures"),
                           cl::init(false), cl::Hidden, cl::cat(budgetCategory));
cl::opt<std::string> recompute(
    "recompute", cl::value_desc("auto|none|all|SEGMENTS"),
    cl::desc("Which forward stages are recomputed in the backward: auto (what --vram "
             "needs, default), none, all, or segments of the chain such as 1-3,5:offload,7:light "
             "(:offload sends the cut before the segment to host memory until it is "
             "recomputed; a stage kept :light makes its cheap saved values, such as a GELU's "
             "or a layer norm's output, again for the backward; a stage kept :store sends "
             "what it saves for the backward to host memory and back, 8:store; "
             "--dump-schedule shows the chain)"),
    cl::init("auto"), cl::cat(budgetCategory));

cl::OptionCategory trainingCategory("Training");

enum class Emit { Summary, Import, Mlir, Schedule, EmitC, Cpp, Cuda, Exe };
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce (default: exe with -o DIR, summary without):"),
    cl::values(clEnumValN(Emit::Summary, "summary",
                          "parameter count and bytes, inputs, op histogram, memory"),
               clEnumValN(Emit::Import, "import", "the imported forward graph (tg dialect)"),
               clEnumValN(Emit::Mlir, "mlir",
                          "the training graph: forward, backward and optimizer (tg dialect)"),
               clEnumValN(Emit::Schedule, "schedule",
                          "the scheduled program: every tensor placed in the arena (hm dialect)"),
               clEnumValN(Emit::EmitC, "emitc",
                          "the scheduled program lowered to MLIR's EmitC dialect"),
               clEnumValN(Emit::Cpp, "cpp", "the generated C++ program (EmitC, translated)"),
               clEnumValN(Emit::Cuda, "cuda",
                          "with --target cuda: the fused elementwise programs as CUDA kernels "
                          "(the source nvcc compiles beside the C++ program)"),
               clEnumValN(Emit::Exe, "exe",
                          "DIR/train (compiled and linked) and DIR/state (initial weights)")),
    cl::cat(outputCategory));
cl::opt<std::string> outputFile(
    "o", cl::value_desc("PATH"),
    cl::desc("Output: the directory for --emit=exe, a file for the others (default: stdout)"),
    cl::cat(outputCategory));
cl::opt<bool> force("force",
                    cl::desc("Replace outputs (-o, --dump-schedule, --dump-trace, --memory-plot) "
                             "that exist; a directory is replaced only when it holds nothing but "
                             "hmcc's own output"),
                    cl::cat(outputCategory));
cl::opt<bool> noInitialState(
    "no-initial-state",
    cl::desc("With -o: write no OUT/state and read no weights (a model too large to copy, or "
             "planned from shapes only); OUT/train then starts from --init SEED (seeded "
             "parameters), --state DIR or --resume DIR"),
    cl::cat(outputCategory));
cl::opt<bool> verbose("verbose",
                      cl::desc("Print errors whole (ONNX's checker and MLIR's diagnostics "
                               "can span several lines; by default only the first is shown)"),
                      cl::cat(outputCategory));
enum class Target { Cpu, Cuda };
cl::opt<Target> target("target", cl::desc("Code generation target:"), cl::init(Target::Cpu),
                       cl::values(clEnumValN(Target::Cpu, "cpu", "the host CPU (default)"),
                                  clEnumValN(Target::Cuda, "cuda",
                                             "NVIDIA GPUs: the same program linked with the "
                                             "runtime's CUDA backend, which it opens by default "
                                             "(kernels it lacks are named when the program "
                                             "starts; train --device cpu runs it on the CPU)")),
                       cl::cat(outputCategory));
cl::opt<std::string> precision(
    "precision", cl::value_desc("fp32|bf16"),
    cl::desc("The arithmetic of MatMul, Gemm and fused attention: fp32, or bf16 products with "
             "fp32 sums (operands rounded to bfloat16, nearest even; a GPU's tensor cores). "
             "Softmax and every sum stay fp32, and so do tensors, master weights, "
             "gradients and optimizer states. Default: bf16 for --target cuda, fp32 "
             "for --target cpu (where bf16 is an exact emulation, slower than fp32)"),
    cl::cat(outputCategory));
cl::opt<std::string> bf16Storage(
    "bf16-storage", cl::value_desc("auto|always|never"), cl::ValueOptional, cl::init("auto"),
    cl::desc("With --precision bf16: keep the values only MatMul and Gemm read (the activations "
             "linear layers keep for their backward) in bf16, written so by the layer norms, "
             "fused elementwise programs and the loss gradient that make them, or rounded once "
             "after another op (a GEMM of such a value and an fp32 one, a weight, rounds the fp32 "
             "one as it reads it). The same results, bit for bit, in less memory: always (the bare flag), "
             "never, or auto (default): both are planned and the shorter predicted step is "
             "kept, or the one that fits --vram"),
    cl::cat(outputCategory));
cl::opt<std::string> cudaArch(
    "cuda-arch", cl::value_desc("sm_NN"),
    cl::desc("With --target cuda: the GPU architecture the program is for; it must be one the "
             "runtime's CUDA kernels were built for (CMake's HMRT_CUDA_ARCHITECTURES, default "
             "sm_90: H100, H200); the program's fused elementwise kernels are compiled for "
             "it, the rest of its kernels are the runtime's"),
    cl::cat(outputCategory));
/// --cuda-arch, or the first architecture the runtime was built for.
std::string cudaArchitecture() {
  if (cudaArch.getNumOccurrences())
    return cudaArch;
  return StringRef(hmcc::cudaRuntimeArchs()).split(',').first.str();
}
/// The device memory the CUDA runtime holds beside the device arena
/// (--target cuda), and the arena's budget: --vram less that.
uint64_t deviceReserve() { return target == Target::Cuda ? hmcc::cudaRuntimeDeviceBytes() : 0; }
uint64_t arenaBudget() { return cantFail(hmcc::parseSize(vram)) - deviceReserve(); }
/// "--vram 8 GiB" and, where the runtime holds some, what is left for the arena.
std::string vramText() {
  std::string s = "--vram " + hmcc::formatBytes(cantFail(hmcc::parseSize(vram)));
  if (deviceReserve())
    s += " (" + hmcc::formatBytes(arenaBudget()) + " for the device arena beside the " +
         hmcc::formatBytes(deviceReserve()) + " the CUDA runtime holds)";
  return s;
}

cl::opt<std::string> fuse(
    "fuse", cl::value_desc("all|elementwise|none"),
    cl::desc("all (default): attention as one op whose probabilities are never stored, and "
             "each chain of elementwise ops (bias + GELU, its gradient, mask + scale, ...) as "
             "one kernel; elementwise: only the chains; none: every op on its own (the chains "
             "give the same bits either way)"),
    cl::init("all"), cl::cat(outputCategory));
cl::opt<bool> packQkv("pack-qkv", cl::Hidden, cl::init(true),
                      cl::desc("Fused attention reads q, k and v from the projection they are "
                               "split from (default); false keeps the split (for tests)"),
                      cl::cat(outputCategory));
enum class Program { Train, Forward, Gradients };
cl::opt<Program> programKind(
    "program", cl::desc("What the generated program computes:"), cl::init(Program::Train),
    cl::values(clEnumValN(Program::Train, "train",
                          "training steps: forward, backward, optimizer update (default)"),
               clEnumValN(Program::Forward, "forward", "the model's outputs (train --eval)"),
               clEnumValN(Program::Gradients, "gradients",
                          "the loss and every parameter's gradient (train --eval)")),
    cl::cat(outputCategory));

cl::opt<std::string> optimizerName("optimizer", cl::value_desc("NAME"),
                                   cl::desc("sgd (with momentum), adamw (default) or adamw8bit"),
                                   cl::init("adamw"), cl::cat(trainingCategory));
cl::opt<float> lrOpt("lr", cl::desc("Learning rate (default 1e-3)"), cl::init(1e-3f),
                     cl::cat(trainingCategory));
cl::opt<std::string> betas("betas", cl::value_desc("B1,B2"),
                           cl::desc("AdamW betas (default 0.9,0.999)"), cl::init("0.9,0.999"),
                           cl::cat(trainingCategory));
cl::opt<float> epsOpt("eps", cl::desc("AdamW epsilon (default 1e-8)"), cl::init(1e-8f),
                      cl::cat(trainingCategory));
cl::opt<float> weightDecay("weight-decay",
                           cl::desc("Weight decay (default 0.01 for AdamW, 0 for SGD)"),
                           cl::init(-1.0f), cl::cat(trainingCategory));
cl::opt<float> momentumOpt("momentum", cl::desc("SGD momentum (default 0.9)"), cl::init(0.9f),
                           cl::cat(trainingCategory));
cl::opt<float> clipNorm("clip-norm",
                        cl::desc("Clip the global gradient norm to this value (default: off)"),
                        cl::init(0.0f), cl::cat(trainingCategory));
cl::opt<std::string> lrSchedule("lr-schedule", cl::value_desc("constant|cosine"),
                                cl::desc("Learning-rate schedule (default constant); cosine "
                                         "warms up linearly, then decays to --min-lr"),
                                cl::init("constant"), cl::cat(trainingCategory));
cl::opt<int64_t> warmupSteps("warmup-steps", cl::desc("Warm-up steps of the cosine learning-rate schedule"),
                             cl::init(0), cl::cat(trainingCategory));
cl::opt<int64_t> decaySteps("decay-steps",
                            cl::desc("Step at which the cosine learning-rate schedule reaches --min-lr "
                                     "(default: the run's --steps)"),
                            cl::init(0), cl::cat(trainingCategory));
cl::opt<float> minLr("min-lr", cl::desc("Final learning rate of the cosine learning-rate schedule (default 0)"),
                     cl::init(0.0f), cl::cat(trainingCategory));
cl::opt<bool> listOps("list-ops", cl::desc("List the supported ONNX operators and exit"),
                      cl::cat(outputCategory));
cl::opt<bool> listCompileTime(
    "compile-time-operands",
    cl::desc("With --list-ops, also list the operand positions that must be known at compile "
             "time (give graph inputs there a value with --input-value)"),
    cl::cat(outputCategory));
cl::opt<std::string> dumpSchedule(
    "dump-schedule", cl::value_desc("FILE.json"),
    cl::desc("Also write the scheduled program as JSON: the arena, persistent tensors, and "
             "every op in order with the bytes it reads and writes (docs/schedule-format.md)"),
    cl::cat(outputCategory));
cl::opt<std::string> dumpTrace(
    "dump-trace", cl::value_desc("FILE.json"),
    cl::desc("Also write the predicted timeline of one step as a Chrome trace (Perfetto, "
             "chrome://tracing): one track per stream, beside train --trace's measured one"),
    cl::cat(outputCategory));
cl::opt<std::string> memoryPlot(
    "memory-plot", cl::value_desc("FILE.html"),
    cl::desc("Also write a self-contained page plotting each arena's memory over one step, "
             "stacked by tensor class (parameters, states, inputs, fetched parameters, "
             "gradients, activations)"),
    cl::cat(outputCategory));
cl::opt<bool> explain(
    "explain", cl::desc("Print what the planner decided as a short table: where each tensor class "
                        "lives (device, host, storage), recompute, bytes per link per step, predicted step "
                        "against its lower bound, what compute waits for, and which stream "
                        "ends the step when compute does not"),
    cl::init(false), cl::cat(outputCategory));
cl::opt<bool> elide("elide-constants",
                    cl::desc("With --emit=mlir, print constants over 64 elements as "
                             "dense_resource<__elided__> (shorter, but not parseable)"),
                    cl::init(false), cl::cat(outputCategory));

/// Prints one "hmcc: error:" line (every line with --verbose), with control
/// characters and invalid UTF-8 escaped. Returns the exit status, 1.
int error(const Twine &message) {
  std::string text = message.str();
  if (!verbose) {
    WithColor::error(errs(), "hmcc") << hmcc::escapeText(hmcc::firstLine(text)) << "\n";
    return 1;
  }
  SmallVector<StringRef> lines;
  StringRef(text).trim().split(lines, '\n');
  WithColor::error(errs(), "hmcc") << hmcc::escapeText(lines.front()) << "\n";
  for (StringRef line : ArrayRef(lines).drop_front())
    if (!line.trim().empty())
      errs() << "  " << hmcc::escapeText(line.rtrim()) << "\n";
  return 1;
}

/// The files this run reads: the model, --input-value files and, once the
/// model is imported, its external data. No output may replace them.
std::vector<std::string> inputPaths;

/// The names hmcc writes into an --emit=exe directory; --force replaces a
/// directory holding nothing else.
const StringRef kExeEntries[] = {"train",    "state",   "model.cpp",
                                 "build.log", "fused.cu", "fused.o"};

/// Checks -o and --dump-schedule against the rules of lib/support/Output.h.
int checkOutputs(bool directory) {
  if (!outputFile.empty() && (outputFile != "-" || directory))
    if (auto why = hmcc::checkOutputPath(outputFile, directory, force, inputPaths, kExeEntries))
      return error("-o: " + *why);
  for (auto *opt : {&dumpSchedule, &dumpTrace, &memoryPlot}) {
    const std::string &path = *opt;
    std::string flag = ("--" + opt->ArgStr).str();
    if (path.empty() || path == "-")
      continue;
    if (!outputFile.empty() && hmcc::samePath(path, outputFile))
      return error(flag + ": '" + path + "' is also the -o output");
    if (auto why = hmcc::checkOutputPath(path, false, force, inputPaths))
      return error(flag + ": " + *why);
  }
  // The side outputs name three different files.
  std::pair<cl::opt<std::string> *, cl::opt<std::string> *> pairs[] = {
      {&dumpSchedule, &dumpTrace}, {&dumpSchedule, &memoryPlot}, {&dumpTrace, &memoryPlot}};
  for (auto [a, b] : pairs)
    if (!a->empty() && !b->empty() && *a != "-" && hmcc::samePath(*a, *b))
      return error(("--" + b->ArgStr + ": '").str() + *b + "' is also the --" + a->ArgStr.str() +
                   " output");
  return 0;
}

/// Parses NAME=D0,D1,... into `out`.
bool parseInputShape(StringRef text,
                     std::pair<std::string, std::vector<int64_t>> &out) {
  auto [name, dims] = text.split('=');
  if (name.empty() || dims.empty())
    return false;
  out.first = name.str();
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef part : parts) {
    int64_t d;
    if (part.trim().getAsInteger(10, d) || d <= 0)
      return false;
    out.second.push_back(d);
  }
  return true;
}

/// An error that `write` already reported.
struct Reported : ErrorInfo<Reported> {
  static char ID;
  void log(raw_ostream &) const override {}
  std::error_code convertToErrorCode() const override { return inconvertibleErrorCode(); }
};
char Reported::ID;

/// Writes `path` (standard output when empty) through `write`, which
/// returns false after reporting its own error; a file is replaced only
/// when everything was written (lib/support/Output.h). Returns the exit
/// status.
int writeTo(StringRef path, const Twine &what, llvm::function_ref<bool(raw_ostream &)> write) {
  if (path.empty() || path == "-")
    return write(outs()) ? 0 : 1;
  Error e = hmcc::writeFileAtomically(path, [&](raw_ostream &os) -> Error {
    if (!write(os))
      return make_error<Reported>();
    return Error::success();
  });
  int rc = 0;
  handleAllErrors(std::move(e), [&](const Reported &) { rc = 1; },
                  [&](const ErrorInfoBase &info) {
                    rc = error(what + ": cannot write " + info.message());
                  });
  return rc;
}

/// Runs `write` on the -o file (standard output without -o).
int writeOutput(llvm::function_ref<bool(raw_ostream &)> write) {
  return writeTo(outputFile, "-o", write);
}

bool printModule(mlir::ModuleOp module, raw_ostream &os) {
  mlir::OpPrintingFlags flags;
  if (elide)
    flags.elideLargeElementsAttrs(64);
  module.print(os, flags);
  os << "\n";
  return true;
}

/// The summary, written to -o (or standard output) once it is complete.
std::string summaryText;
raw_string_ostream summaryOut(summaryText);
int writeSummary() {
  return writeOutput([&](raw_ostream &os) {
    os << summaryText;
    return true;
  });
}

/// Remembers which pass of the pipeline failed.
struct FailedPass : mlir::PassInstrumentation {
  std::string pass;
  void runAfterPassFailed(mlir::Pass *p, mlir::Operation *) override {
    pass = p->getArgument().str();
  }
};

/// The smallest --vram a failed plan names (plan-recompute's), or none.
uint64_t smallestVram(mlir::ModuleOp module) {
  auto n = module->getAttrOfType<mlir::IntegerAttr>(hmcc::hm::kSmallestVramAttr);
  return n ? n.getValue().getZExtValue() : UINT64_MAX;
}

/// What --bf16-storage auto chose, and why, for --explain ("" otherwise).
std::string storageChoice;

/// --bf16-storage auto's other plan: a copy of the module planned with bf16
/// storage on a thread of its own, while the module is planned without. The
/// copy lives in a context of its own (reached through bytecode), so that
/// its diagnostics, and the handlers its passes install, stay its own.
struct StorageTrial {
  mlir::MLIRContext context;
  mlir::PassManager pm{&context};
  std::string bytecode;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  bool planned = false;
  std::string diagnostics; // its messages, joined as the driver joins its own
  std::thread thread;

  /// Starts planning a copy of `source` with the pipeline of `o` (nullptr
  /// when the copy cannot be made).
  static std::unique_ptr<StorageTrial> start(mlir::ModuleOp source,
                                             const hmcc::PipelineOptions &o) {
    auto t = std::make_unique<StorageTrial>();
    // The importer's dialects; the passes load theirs.
    t->context.loadDialect<hmcc::tg::TGDialect, mlir::func::FuncDialect>();
    llvm::raw_string_ostream os(t->bytecode);
    if (mlir::failed(mlir::writeBytecodeToFile(source, os)))
      return nullptr;
    hmcc::buildPipeline(t->pm, o);
    t->thread = std::thread([p = t.get()] {
      mlir::ScopedDiagnosticHandler collect(&p->context, [p](mlir::Diagnostic &d) {
        p->diagnostics += (p->diagnostics.empty() ? "" : "\n") + d.str();
        return mlir::success();
      });
      p->module = mlir::parseSourceString<mlir::ModuleOp>(p->bytecode, &p->context);
      p->planned = p->module && mlir::succeeded(p->pm.run(*p->module));
    });
    return t;
  }

  /// Waits for the plan: whether it succeeded.
  bool finish() {
    thread.join();
    return planned;
  }

  /// The planned copy, in `to` (nullptr if it cannot be moved).
  mlir::OwningOpRef<mlir::ModuleOp> moveTo(mlir::MLIRContext &to) {
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    if (mlir::failed(mlir::writeBytecodeToFile(*module, os)))
      return nullptr;
    to.loadDialect<hmcc::hm::HMDialect>();
    return mlir::parseSourceString<mlir::ModuleOp>(bytes, &to);
  }

  ~StorageTrial() {
    if (thread.joinable())
      thread.join();
  }
};

/// What plan-recompute decided (its hm.recompute record): how many
/// stages are recomputed, kept light and have their input cut offloaded,
/// and the whole forward's predicted time.
struct RecomputeCounts {
  unsigned recomputed = 0, light = 0, stored = 0, offloaded = 0;
  double forwardSeconds = 0;
};
RecomputeCounts countRecompute(mlir::ArrayAttr stages) {
  RecomputeCounts c;
  for (mlir::Attribute a : stages) {
    auto s = cast<mlir::DictionaryAttr>(a);
    StringRef decision = s.getAs<mlir::StringAttr>("decision").getValue();
    c.recomputed += decision == "recompute";
    c.light += decision == "keep light";
    c.stored += decision == "store";
    auto offload = s.getAs<mlir::BoolAttr>("offload_input");
    c.offloaded += offload && offload.getValue();
    c.forwardSeconds += s.getAs<mlir::FloatAttr>("forward_seconds").getValueAsDouble();
  }
  return c;
}

/// plan-recompute's predicted time per step, as "X of recompute", with
/// "and Y of copies" where cuts or stored values cross the links.
std::string recomputeTime(mlir::DictionaryAttr plan) {
  double seconds = plan.getAs<mlir::FloatAttr>("recompute_seconds").getValueAsDouble();
  auto copiesAttr = plan.getAs<mlir::FloatAttr>("copy_seconds");
  double copies = copiesAttr ? copiesAttr.getValueAsDouble() : 0.0;
  std::string copyText = hmcc::formatSeconds(copies) + " of copies";
  if (copies > 0 && seconds - copies < 1e-9) // stored stages alone
    return copyText;
  std::string text = hmcc::formatSeconds(seconds - copies) + " of recompute";
  return copies > 0 ? text + " and " + copyText : text;
}

/// A stream's name as --explain writes it ("host to device").
std::string streamLabel(std::string name) {
  std::replace(name.begin(), name.end(), '_', ' ');
  return name;
}

/// The --explain table.
std::string explainPlan(mlir::ModuleOp module, const hmcc::hm::Timeline &timeline, bool train) {
  using hmcc::formatBytes;
  hmcc::ScheduleMemory m = hmcc::scheduleMemory(module);
  std::string text;
  raw_string_ostream os(text);
  os << "plan";
  if (vram.getNumOccurrences())
    os << " under " << vramText();
  os << ", profile " << timeline.profile << ":\n";
  auto row = [&](StringRef what, std::optional<int64_t> device, std::optional<int64_t> host,
                 StringRef note = "") {
    os << "  " << left_justify(what, 18) << right_justify(device ? formatBytes(*device) : "-", 11)
       << right_justify(host ? formatBytes(*host) : "-", 11);
    if (!note.empty())
      os << "   " << note;
    os << "\n";
  };
  // Tensors as the model has them: a parameter split between device and
  // host (its pieces name their whole) counts once, as one in part.
  unsigned params = 0, hostParams = 0;
  std::string split;
  for (const hmcc::hm::PersistentTensor &t : hmcc::hm::persistentTensors(module)) {
    if (t.kind != "param")
      continue;
    if (!t.whole.empty()) {
      if (t.tier != 0)
        split = t.whole.str();
      continue;
    }
    ++params;
    hostParams += t.tier == 1;
  }
  if (!split.empty())
    ++params;
  os << "  " << left_justify("", 18) << right_justify("device", 11) << right_justify("host", 11)
     << "\n";
  row("parameters", m.parameters, m.hostParameters,
      (Twine(hostParams) + " of " + Twine(params) + " tensors on the host" +
       (split.empty() ? "" : ", and the last rows of " + split))
          .str());
  // Moments 8-bit or fp32, by the parameters their AdamW updates are for.
  unsigned adamw = 0, adamw8bit = 0;
  module.walk([&](mlir::Operation *op) {
    adamw += isa<hmcc::tg::AdamWUpdateOp>(op);
    adamw8bit += isa<hmcc::tg::AdamW8bitUpdateOp>(op);
  });
  row("optimizer states", m.states, m.hostStates,
      adamw8bit ? (Twine("8-bit moments for ") + Twine(adamw8bit) + " of " +
                   Twine(adamw + adamw8bit) + " AdamW updates")
                      .str()
                : "");
  if (train)
    row("gradients", std::nullopt, m.hostArena ? std::optional<int64_t>(m.hostTransient) : std::nullopt,
        m.hostArena ? "host copies at their peak; on the device among activations" : "among activations");
  row("inputs", m.inputs, std::nullopt);
  row("activations", m.activations, std::nullopt, "at their peak");
  row("arena", m.arena, m.hostArena ? std::optional<int64_t>(m.hostArena) : std::nullopt);
  if (m.storageArena)
    os << "  storage: " << formatBytes(m.storageStates) << " of optimizer states"
       << (m.storageParameters ? " and " + formatBytes(m.storageParameters) + " of parameters"
                               : std::string())
       << " (arena " << formatBytes(m.storageArena) << "), updated through host staging\n";
  // Host parameters whose updates run on the device (plan-tiers' device
  // updates), counted by parameter (a chunked update is several ops).
  llvm::StringSet<> onHost, onDevice;
  module.walk([&](mlir::Operation *op) {
    auto ref = hmcc::tg::optimizerUpdate(op).first;
    mlir::Operation *decl = ref ? mlir::SymbolTable::lookupNearestSymbolFrom(op, ref) : nullptr;
    if (decl && hmcc::hm::isHostHomed(decl))
      (hmcc::hm::isHostHomed(op) ? onHost : onDevice).insert(ref.getValue());
  });
  if (!onDevice.empty()) {
    auto staging = module->getAttrOfType<mlir::IntegerAttr>(hmcc::hm::kDeviceStagingAttr);
    os << "  updates of host parameters: " << onDevice.size() << " on the device (through "
       << formatBytes(staging ? staging.getInt() : 0) << " of staging buffers), "
       << onHost.size() << " on the host\n";
  }
  // Host parameters fetched in bf16 (plan-tiers' bf16 fetches): each
  // rounded once a step on the host's threads.
  unsigned rounded = 0;
  double rounding = 0;
  module.walk([&](mlir::Operation *op) {
    if (!hmcc::hm::isHostRounding(op))
      return;
    ++rounded;
    if (auto it = timeline.ops.find(op); it != timeline.ops.end())
      rounding += it->second.end - it->second.start;
  });
  if (rounded)
    os << "  bf16 fetches: " << rounded << " host parameters rounded on the host once a step ("
       << hmcc::formatSeconds(rounding) << " of host-thread time), half the bytes over the link\n";
  unsigned gemms = 0, attention = 0, bf16 = 0;
  module.walk([&](mlir::Operation *op) {
    bool gemm = isa<hmcc::tg::MatMulOp, hmcc::tg::GemmOp>(op);
    bool attn = isa<hmcc::tg::AttentionOp, hmcc::tg::AttentionGradOp>(op);
    gemms += gemm;
    attention += attn;
    if (gemm || attn)
      bf16 += hmcc::tg::hasBf16Math(op);
  });
  if (gemms || attention) {
    os << "  GEMMs: " << gemms;
    if (attention)
      os << ", attention ops: " << attention;
    os << (bf16 ? ", bf16 products and fp32 sums" : ", fp32") << " (--precision "
       << (bf16 ? "bf16" : "fp32") << ")\n";
    if (!storageChoice.empty())
      os << "  values only GEMMs read: " << storageChoice << "\n";
  }
  if (auto plan = module->getAttrOfType<mlir::DictionaryAttr>(hmcc::hm::kRecomputeAttr)) {
    auto stages = plan.getAs<mlir::ArrayAttr>("stages");
    auto [recomputed, light, stored, offloaded, forward] = countRecompute(stages);
    std::string kept = (light ? ", " + std::to_string(light) + " kept light" : "") +
                       (stored ? ", " + std::to_string(stored) + " stored on the host" : "");
    if (!recomputed && !light && !stored)
      os << "  recompute: none of the " << stages.size() << " forward stages\n";
    else if (!recomputed)
      os << "  recompute: none of the " << stages.size() << " forward stages" << kept << "; "
         << recomputeTime(plan) << " per step (the whole forward: "
         << hmcc::formatSeconds(forward) << ")\n";
    else
      os << "  recompute: " << recomputed << " of " << stages.size() << " forward stages"
         << kept << ", " << offloaded << " cuts offloaded; " << recomputeTime(plan)
         << " per step (the whole forward: " << hmcc::formatSeconds(forward) << ")\n";
  }
  auto link = [&](StringRef name, StringRef label) {
    auto bytes = timeline.linkBytes.find(name.str());
    auto busy = timeline.loads.find(name.str());
    os << "  " << label << ": "
       << formatBytes(bytes != timeline.linkBytes.end() ? bytes->second : 0) << " per step ("
       << hmcc::formatSeconds(busy != timeline.loads.end() ? busy->second : 0) << ")\n";
  };
  link("host_to_device", "host to device");
  link("device_to_host", "device to host");
  if (m.storageArena) {
    link("storage_read", "storage read");
    link("storage_write", "storage write");
  }
  os << "  predicted step " << hmcc::formatSeconds(timeline.step) << " (streams overlapped), lower bound "
     << hmcc::formatSeconds(timeline.lowerBound) << " (" << timeline.binding << "): "
     << format("%.2f", timeline.lowerBound > 0 ? timeline.step / timeline.lowerBound : 1.0)
     << "x LB\n";
  // What keeps the step above compute's own load.
  double waited = 0;
  for (auto &[stream, seconds] : timeline.computeWaits)
    waited += seconds;
  if (waited > 0 || timeline.afterCompute > 0) {
    os << "  compute waits " << hmcc::formatSeconds(waited);
    const char *sep = ": ";
    for (auto &[stream, seconds] : timeline.computeWaits) {
      os << sep << hmcc::formatSeconds(seconds) << " for " << streamLabel(stream);
      sep = ", ";
    }
    os << "; other streams run " << hmcc::formatSeconds(timeline.afterCompute)
       << " past compute's last op\n";
  }
  // The stream that ends the step after compute: its work (its load) from
  // its first op on, which the step cannot beat, however fast compute is.
  if (timeline.afterCompute > 0) {
    std::map<std::string, std::pair<double, double>> span; // stream: first start, last end
    for (auto &entry : timeline.ops) {
      const hmcc::hm::OpTiming &t = entry.second;
      auto [it, fresh] = span.try_emplace(t.stream, t.start, t.end);
      if (!fresh)
        it->second = {std::min(it->second.first, t.start), std::max(it->second.second, t.end)};
    }
    auto last = std::max_element(span.begin(), span.end(), [](const auto &a, const auto &b) {
      return a.second.second < b.second.second;
    });
    auto load = last != span.end() ? timeline.loads.find(last->first) : timeline.loads.end();
    if (last != span.end() && last->first != "compute" && load != timeline.loads.end()) {
      os << "  the " << streamLabel(last->first) << " stream ends the step: " << hmcc::formatSeconds(load->second)
         << " of work from its first op at " << hmcc::formatSeconds(last->second.first) << "\n";
    }
  }
  return text;
}

/// Writes --dump-schedule and, with `summary`, how the memory of the
/// scheduled program splits and whether it fits --vram; --explain's table
/// goes with the summary, or on its own to stdout.
int reportSchedule(mlir::ModuleOp module, bool train, std::string &diagnostics, bool summary) {
  if (!summary && !explain && dumpSchedule.empty() && dumpTrace.empty() && memoryPlot.empty())
    return 0; // nothing to report
  // The predicted timeline of the entry function, by --device-profile
  // (checked when the options were read).
  std::string why;
  auto profile = hmcc::planner::loadDeviceProfile(deviceProfile, why);
  auto entry = *module.getOps<mlir::func::FuncOp>().begin();
  hmcc::hm::Timeline timeline = hmcc::planner::predictTimeline(entry, *profile);
  if (!dumpSchedule.empty())
    if (int rc = writeTo(dumpSchedule, "--dump-schedule", [&](raw_ostream &os) {
          if (mlir::succeeded(hmcc::dumpScheduleJson(module, os, &timeline)))
            return true;
          error(inputFile + ": " + diagnostics);
          return false;
        }))
      return rc;
  if (!memoryPlot.empty())
    if (int rc = writeTo(memoryPlot, "--memory-plot", [&](raw_ostream &os) {
          std::optional<int64_t> budget;
          if (vram.getNumOccurrences())
            budget = int64_t(arenaBudget());
          if (mlir::succeeded(hmcc::writeMemoryPlot(module, entry, budget, os)))
            return true;
          error(inputFile + ": " + diagnostics);
          return false;
        }))
      return rc;
  if (!dumpTrace.empty())
    if (int rc = writeTo(dumpTrace, "--dump-trace", [&](raw_ostream &os) {
          hmcc::planner::writeChromeTrace(entry, timeline, os);
          os << "\n";
          return true;
        }))
      return rc;
  if (explain && !summary)
    outs() << explainPlan(module, timeline, train);
  if (!summary)
    return 0;
  hmcc::ScheduleMemory m = hmcc::scheduleMemory(module);
  summaryOut << "  " << (train ? "training step" : "program") << " memory: "
             << hmcc::formatBytes(m.arena) << (m.hostArena ? " on the device" : " in one arena")
             << "\n    " << hmcc::describeSplit(m) << "\n";
  if (m.hostArena)
    summaryOut << "  host memory: " << hmcc::formatBytes(m.hostArena) << "\n    "
               << hmcc::describeHostSplit(m) << "\n";
  hmcc::OpCost work = hmcc::functionCost(entry);
  summaryOut << "    work per " << (train ? "step" : "call") << ": "
             << hmcc::formatFlops(work.flops) << ", " << hmcc::formatBytes(work.bytes)
             << " of memory traffic\n";
  if (auto plan = module->getAttrOfType<mlir::DictionaryAttr>(hmcc::hm::kRecomputeAttr)) {
    auto stages = plan.getAs<mlir::ArrayAttr>("stages");
    RecomputeCounts c = countRecompute(stages);
    if (c.recomputed || c.light || c.stored)
      summaryOut << "    recompute: " << c.recomputed << " of " << stages.size()
                 << " forward stages recomputed in the backward"
                 << (c.light ? ", " + std::to_string(c.light) + " kept light" : std::string())
                 << (c.stored ? ", " + std::to_string(c.stored) + " stored on the host"
                              : std::string())
                 << (c.offloaded ? " (" + std::to_string(c.offloaded) +
                                       (c.offloaded == 1 ? " cut" : " cuts") +
                                       " offloaded to the host)"
                                 : std::string())
                 << ", " << recomputeTime(plan) << " per step predicted (" << deviceProfile
                 << ")\n";
  }
  summaryOut << "    predicted " << (train ? "step" : "call") << ": "
             << hmcc::formatSeconds(timeline.step) << " on " << timeline.profile
             << " (streams overlapped); lower bound " << hmcc::formatSeconds(timeline.lowerBound)
             << " (bound by " << timeline.binding << ")\n";
  if (vram.getNumOccurrences())
    summaryOut << "    " << (static_cast<uint64_t>(m.arena) <= arenaBudget() ? "fits" : "does not fit")
               << " " << vramText() << "\n";
  if (ram.getNumOccurrences()) {
    uint64_t budget = cantFail(hmcc::parseSize(ram));
    summaryOut << "    " << (static_cast<uint64_t>(m.hostArena) <= budget ? "fits" : "does not fit")
               << " --ram " << hmcc::formatBytes(budget) << "\n";
  }
  if (explain)
    summaryOut << explainPlan(module, timeline, train);
  return 0;
}

/// Builds DIR/model.cpp, DIR/train (compiled and linked) and DIR/state
/// (the initial weights from the ONNX initializers of the parameters as the
/// model declares them, `declared`, before planning split any; zero
/// optimizer states) in a directory beside DIR, then swaps it in: a failure
/// leaves a previous DIR whole.
int buildExecutable(mlir::ModuleOp module, mlir::func::FuncOp train, mlir::func::FuncOp eval,
                    mlir::ModuleOp declared, std::string &diagnostics) {
  // Before any work: the initial state must fit in memory.
  // The model file is read whole (its inline initializers stay in memory).
  uint64_t modelBytes = 0;
  if (!noInitialState && sys::fs::file_size(inputFile, modelBytes))
    modelBytes = 0;
  uint64_t need = noInitialState ? 0 : hmcc::initialStateMemory(declared) + modelBytes,
           usable = hmcc::usableMemoryBytes();
  if (need > usable)
    return error("writing the initial state would hold about " + hmcc::formatBytes(need) +
                 " in memory, more than the " + hmcc::formatBytes(usable) +
                 " this process may still use (physical memory, or what ulimit -v leaves); --no-initial-state "
                 "writes the program without it (its train then starts from --init SEED or "
                 "--weights MODEL)");
  auto staged = hmcc::StagedDirectory::create(outputFile);
  if (!staged)
    return error("-o: cannot create a directory beside '" + outputFile +
                 "': " + toString(staged.takeError()));
  auto inStaging = [&](StringRef name) {
    SmallString<256> path(staged->path());
    sys::path::append(path, name);
    return path;
  };
  SmallString<256> cppPath = inStaging("model.cpp"), logPath = inStaging("build.log");
  if (int rc = writeTo(cppPath, "-o", [&](raw_ostream &os) {
        if (mlir::succeeded(hmcc::emitProgramCpp(module, train, eval, os,
                                                 target == Target::Cuda ? "cuda" : "cpu")))
          return true;
        error(inputFile + ": " + diagnostics);
        return false;
      }))
    return rc;
  SmallString<256> exePath(outputFile), statePath(outputFile);
  sys::path::append(exePath, "train");
  sys::path::append(statePath, "state");
  std::string message;
  // For a GPU, the fused elementwise programs as kernels of their own.
  SmallVector<std::string> objects;
  std::string cuda;
  llvm::raw_string_ostream cudaStream(cuda);
  if (unsigned kernels = target == Target::Cuda ? hmcc::emitFusedKernels(module, cudaStream) : 0) {
    SmallString<256> cuPath = inStaging("fused.cu");
    if (int rc = writeTo(cuPath, "-o", [&](raw_ostream &os) {
          os << cuda;
          return true;
        }))
      return rc;
    errs() << "hmcc: compiling " << kernels << " fused kernel" << (kernels == 1 ? "" : "s")
           << " with nvcc\n";
    SmallString<256> objPath = inStaging("fused.o");
    if (!hmcc::compileFusedKernels(cuPath, objPath, cudaArchitecture(), logPath, message)) {
      staged->keep(); // for its build.log, which the message names
      return error(message);
    }
    objects.push_back(objPath.str().str());
  }
  errs() << "hmcc: compiling " << exePath << "\n";
  if (!hmcc::compileHostExecutable(cppPath, inStaging("train"), logPath, target == Target::Cuda,
                                   objects, message)) {
    staged->keep(); // for its build.log, which the message names
    return error(message);
  }
  // The initial state: parameters from the model, optimizer states zero.
  if (!noInitialState) {
    uint64_t stateBytes = hmcc::initialStateBytes(module);
    errs() << "hmcc: writing " << statePath << " (" << hmcc::formatBytes(stateBytes) << ")\n";
    auto reader = hmcc::ParameterReader::open(declared, inputFile, message);
    if (!reader)
      return error(message);
    mlir::SymbolTable symbols(declared);
    auto valueOf = [&](StringRef name, std::string &why) -> std::optional<hmcc::Tensor> {
      if (auto param = symbols.lookup<hmcc::tg::ParameterOp>(name))
        return reader->read(param, why);
      why = "no initial value for parameter '" + name.str() + "'";
      return std::nullopt;
    };
    // On a terminal, a large state's write shows how far it is.
    int shown = -1;
    auto progress = [&](uint64_t done, uint64_t total) {
      int percent = int(done * 100 / std::max<uint64_t>(total, 1));
      if (percent == shown)
        return;
      shown = percent;
      errs() << "\rhmcc: writing the initial state: " << percent << "%";
      if (done == total)
        errs() << "\n";
    };
    bool show = errs().is_displayed() && stateBytes >= (uint64_t(1) << 30);
    if (!hmcc::writeInitialState(module, static_cast<bool>(train), valueOf, inStaging("state"),
                                 message, show ? llvm::function_ref<void(uint64_t, uint64_t)>(progress)
                                               : llvm::function_ref<void(uint64_t, uint64_t)>())) {
      if (shown >= 0 && shown < 100)
        errs() << "\n"; // the error on a line of its own
      return error(message);
    }
  }
  if (Error e = staged->commit())
    return error("-o: cannot replace '" + outputFile + "': " + toString(std::move(e)));
  if (noInitialState)
    outs() << "hmcc: wrote " << exePath << " (no initial state: train --init SEED)\n";
  else
    outs() << "hmcc: wrote " << exePath << " and " << statePath << "\n";
  return 0;
}

/// Standard output and error are written in full or the run fails: a
/// stream's error is reported here (as one line, where stderr still works)
/// instead of by LLVM's stream destructor, which would abort.
int finishStreams(int rc) {
  outs().flush();
  if (std::error_code ec = outs().error()) {
    outs().clear_error();
    rc = error("cannot write to standard output: " + ec.message());
  }
  if (errs().has_error()) {
    errs().clear_error();
    rc = 1;
  }
  return rc;
}

int run(int argc, char **argv) {
  cl::HideUnrelatedOptions(
      {&inputCategory, &budgetCategory, &outputCategory, &trainingCategory});
  cl::SetVersionPrinter([](raw_ostream &os) { os << "hmcc 0.1 (MLIR 22)\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "hmcc - ahead-of-time schedule compiler for training on one GPU\n\n"
      "Compiles an ONNX training graph (a forward graph whose output is a scalar loss,\n"
      "as torch.onnx.export writes it) into a training program:\n"
      "  hmcc model.onnx -o OUT        builds OUT/train and OUT/state (run OUT/train --help)\n"
      "  hmcc model.onnx               summarises the model and the memory it needs\n"
      "The graph is differentiated, the optimizer added, the memory planned under --vram\n"
      "(parameters homed in host memory, activations recomputed or offloaded), every tensor\n"
      "placed at a static offset of its arena (proven sound, and within the budgets), and\n"
      "the program emitted through MLIR's EmitC as C++ that calls hmcc's runtime.\n\n"
      "Initializers are trainable parameters when they are floating-point and the loss\n"
      "depends on them differentiably; all others (masks, index tables) are constants.\n"
      "Use --frozen for buffers such as rotary tables that the rule cannot tell apart.\n\n"
      "A model with ONNX training_info brings its own training step: its algorithm graph\n"
      "is compiled as the step and update_binding says which initializers change; --lr\n"
      "feeds an algorithm input used as an optimizer's learning rate.\n");

  if (listOps) {
    for (const std::string &op : hmcc::supportedOnnxOps()) {
      outs() << op;
      if (listCompileTime)
        for (int k = 0; k < 8; ++k)
          if (hmcc::needsCompileTimeValue(op, k))
            outs() << " " << k;
      outs() << "\n";
    }
    for (const std::string &op : hmcc::supportedPreviewTrainingOps())
      outs() << op << "\n";
    return 0;
  }
  if (measureDevice) {
    if (!inputFile.empty())
      return error("--measure-device takes no model (usage: hmcc --measure-device -o FILE.json)");
    if (outputFile.empty() || outputFile == "-")
      return error("--measure-device: give the profile's file with -o FILE.json");
    if (auto why = hmcc::checkOutputPath(outputFile, false, force, {}))
      return error("-o: " + *why);
    SmallVector<StringRef> args = {HMCC_MEASURE_TOOL, "-o", outputFile};
    std::string dir;
    if (nvme.getNumOccurrences()) {
      dir = StringRef(nvme).rsplit(':').first.str();
      if (!sys::fs::is_directory(dir))
        return error("--nvme: '" + dir + "' is not a directory");
      args.append({"--storage", dir});
    }
    if (quickMeasure)
      args.push_back("--quick");
    if (force)
      args.push_back("--force"); // -o was checked above
    std::string why;
    int rc = sys::ExecuteAndWait(HMCC_MEASURE_TOOL, args, std::nullopt, {}, 0, 0, &why);
    if (rc != 0)
      return error("--measure-device: " +
                   (why.empty() ? "the measurement failed (see above)" : why));
    return 0;
  }
  if (inputFile.empty())
    return error("no input model given (usage: hmcc model.onnx [options]; see --help)");

  hmcc::ImportOptions options;
  if (batch.getNumOccurrences()) {
    if (batch <= 0)
      return error("--batch must be a positive integer, not " + Twine(batch));
    options.batch = batch;
  }
  if (seqLen.getNumOccurrences()) {
    if (seqLen <= 0)
      return error("--seq must be a positive integer, not " + Twine(seqLen));
    options.seq = seqLen;
  }
  for (const std::string &text : inputShapes) {
    std::pair<std::string, std::vector<int64_t>> shape;
    if (!parseInputShape(text, shape))
      return error("--input-shape '" + text +
                   "' is malformed: write NAME=D0,D1,... with positive integers");
    options.inputShapes.push_back(std::move(shape));
  }
  options.frozen.assign(frozen.begin(), frozen.end());
  for (const std::string &text : inputValues) {
    auto [name, file] = StringRef(text).split('=');
    if (name.empty() || file.empty())
      return error("--input-value '" + text + "' is malformed: write NAME=FILE.pb");
    options.inputValues.emplace_back(name.str(), file.str());
  }

  // Budgets are validated now so that a typo is caught before any work.
  for (auto *opt : {&vram, &ram, &chunkSize}) {
    if (opt->getNumOccurrences())
      if (auto size = hmcc::parseSize(*opt); !size)
        return error("--" + opt->ArgStr + ": " + toString(size.takeError()));
  }
  if (vram.getNumOccurrences() && cantFail(hmcc::parseSize(vram)) <= deviceReserve())
    return error("--vram " + hmcc::formatBytes(cantFail(hmcc::parseSize(vram))) +
                 " leaves nothing for the device arena: the CUDA runtime holds " +
                 hmcc::formatBytes(deviceReserve()) + " beside it (its scratch and cuBLAS's "
                 "workspace)");
  if (target == Target::Cuda && !deviceProfile.getNumOccurrences())
    deviceProfile = "h200";  // a GPU program is planned for a GPU
  if (std::string why; !hmcc::planner::loadDeviceProfile(deviceProfile, why))
    return error("--device-profile: " + why);
  if (StringRef(deviceUpdates).trim().empty())
    return error("--device-updates is empty: give auto, none, all or parameter names separated "
                 "by commas");
  if (nvme.getNumOccurrences()) {
    auto [dir, size] = StringRef(nvme).rsplit(':');
    if (dir.empty() || size.empty())
      return error("--nvme '" + nvme + "' is malformed: write DIR:SIZE, e.g. /mnt/ssd/hm:400G");
    if (auto bytes = hmcc::parseSize(size); !bytes)
      return error("--nvme: " + toString(bytes.takeError()));
  }

  if (cudaArch.getNumOccurrences() && target != Target::Cuda)
    return error("--cuda-arch is for --target cuda");
  if (emit == Emit::Cuda && target != Target::Cuda)
    return error("--emit=cuda is for --target cuda");
  if (target == Target::Cuda && cudaArch.getNumOccurrences() && hmcc::haveCudaRuntime() &&
      !hmcc::cudaRuntimeHasArch(cudaArch))
    return error("--cuda-arch " + hmcc::escapeText(cudaArch) +
                 ": this hmcc's CUDA runtime was built for " +
                 hmcc::cudaRuntimeArchs() +
                 " (rebuild it with -DHMRT_CUDA_ARCHITECTURES=NN for sm_NN)");
  if (target == Target::Cuda && !hmcc::haveCudaRuntime())
    return error("--target cuda: this hmcc was built without the CUDA toolkit (no nvcc was found "
                 "when it was configured), so it has no CUDA runtime to link programs with");
  if (optimizerName != "sgd" && optimizerName != "adamw" && optimizerName != "adamw8bit")
    return error("--optimizer '" + optimizerName + "' is unknown: use sgd, adamw or adamw8bit");
  if (fuse != "all" && fuse != "elementwise" && fuse != "none")
    return error("--fuse '" + fuse + "' is unknown: use all, elementwise or none");
  if (precision.getNumOccurrences() && precision != "fp32" && precision != "bf16")
    return error("--precision '" + hmcc::escapeText(precision) + "' is unknown: use fp32 or bf16");
  if (bf16Storage.empty())
    bf16Storage = "always";
  if (bf16Storage != "auto" && bf16Storage != "always" && bf16Storage != "never")
    return error("--bf16-storage '" + hmcc::escapeText(bf16Storage) +
                 "' is unknown: use auto, always or never");
  if (bf16Storage == "always" &&
      (precision.getNumOccurrences() ? precision != "bf16" : target != Target::Cuda))
    return error("--bf16-storage keeps GEMM operands in bf16: it needs --precision bf16");
  if (bf16Fetches != "auto" && bf16Fetches != "always" && bf16Fetches != "never")
    return error("--bf16-fetches '" + hmcc::escapeText(bf16Fetches) +
                 "' is unknown: use auto, always or never");
  if (bf16Fetches == "always" &&
      (precision.getNumOccurrences() ? precision != "bf16" : target != Target::Cuda))
    return error("--bf16-fetches fetches parameters for GEMMs with bf16 products: it needs "
                 "--precision bf16");
  if (quantizeStates != "never" && quantizeStates != "auto" && quantizeStates != "always")
    return error("--quantize-states '" + quantizeStates + "' is unknown: use never, auto or always");
  if (quantizeStates.getNumOccurrences() && quantizeStates != "never" && optimizerName == "sgd")
    return error("--quantize-states " + quantizeStates +
                 ": only AdamW's moments can be 8-bit, and --optimizer is sgd");
  if (quantizeStates == "never" && quantizeStates.getNumOccurrences() &&
      optimizerName == "adamw8bit")
    return error("--quantize-states never contradicts --optimizer adamw8bit (8-bit moments): "
                 "use --optimizer adamw");
  if (lrSchedule != "constant" && lrSchedule != "cosine")
    return error("--lr-schedule '" + lrSchedule + "' is unknown: use constant or cosine");
  if (!(lrOpt > 0))
    return error("--lr must be positive");
  float beta1 = 0, beta2 = 0;
  {
    auto [b1, b2] = StringRef(betas).split(',');
    double d1, d2;
    if (b1.getAsDouble(d1) || b2.getAsDouble(d2) || d1 < 0 || d1 >= 1 || d2 < 0 || d2 >= 1)
      return error("--betas '" + betas + "' is malformed: write B1,B2 with each in [0, 1)");
    beta1 = static_cast<float>(d1);
    beta2 = static_cast<float>(d2);
  }

  Emit stage = emit.getNumOccurrences() ? emit.getValue()
                                        : (outputFile.empty() ? Emit::Summary : Emit::Exe);
  if (stage == Emit::Exe && (outputFile.empty() || outputFile == "-"))
    return error("--emit=exe needs an output directory: -o DIR");
  if (noInitialState && stage != Emit::Exe)
    return error("--no-initial-state is about the executable's state directory: it needs -o DIR");
  // --explain's table goes to stdout, beside the summary or alone.
  if (explain && stage != Emit::Summary && stage != Emit::Exe &&
      (outputFile.empty() || outputFile == "-"))
    return error("--explain prints to stdout, where --emit writes too: give -o FILE");
  inputPaths.push_back(inputFile);
  for (auto &[name, file] : options.inputValues)
    inputPaths.push_back(file);
  if (int rc = checkOutputs(stage == Emit::Exe))
    return rc;

  mlir::MLIRContext context;
  std::string message;
  auto module = hmcc::importOnnxModel(context, inputFile, options, message);
  if (!module)
    return error(message);
  // The external data files are inputs too.
  for (auto param : module->getOps<hmcc::tg::ParameterOp>())
    if (auto location = param.getLocation()) {
      SmallString<256> path(sys::path::parent_path(inputFile));
      sys::path::append(path, *location);
      inputPaths.push_back(std::string(path));
    }
  if (int rc = checkOutputs(stage == Emit::Exe))
    return rc;

  if (stage == Emit::Import)
    return writeOutput([&](raw_ostream &os) { return printModule(*module, os); });
  // The summary's first part; the memory the program needs follows, from
  // the scheduled program.
  if (stage == Emit::Summary)
    hmcc::printSummary(*module, summaryOut);

  // The pipeline: training passes, then the scheduled program.
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diagnostics += (diagnostics.empty() ? "" : "\n") + d.str();
    return mlir::success();
  });
  // A model with training_info brings its own step; hmcc's optimizer and
  // autodiff of a loss output do not apply to it.
  bool ownAlgorithm = (*module)->hasAttr("tg.training_info");
  if (ownAlgorithm) {
    for (cl::Option *o : std::initializer_list<cl::Option *>{
             &optimizerName, &betas, &epsOpt, &weightDecay, &momentumOpt, &clipNorm})
      if (o->getNumOccurrences())
        return error(inputFile + ": --" + o->ArgStr +
                     " does not apply: the model's training_info defines its training "
                     "algorithm (--lr feeds its learning-rate input)");
    if (programKind == Program::Gradients)
      return error(inputFile + ": --program=gradients does not apply to a model with "
                   "training_info (its algorithm computes its own gradients)");
  }
  hmcc::PipelineOptions o;
  o.program = programKind == Program::Train     ? "train"
              : programKind == Program::Forward ? "forward"
                                                : "gradients";
  o.until = stage == Emit::Mlir ? "training" : "schedule";
  o.trainingInfo = ownAlgorithm;
  o.optimizer = optimizerName;
  // A GPU's kernels read no host memory: its constants live in the arena.
  o.constantsInArena = target == Target::Cuda;
  o.precision = precision.getNumOccurrences() ? std::string(precision)
                : target == Target::Cuda      ? std::string("bf16")
                                              : std::string("fp32");
  o.bf16Storage = bf16Storage == "always";
  o.quantizeStates = quantizeStates;
  o.fuse = fuse;
  o.packQkv = packQkv;
  o.lr = lrOpt;
  o.beta1 = beta1;
  o.beta2 = beta2;
  o.eps = epsOpt;
  o.weightDecay = weightDecay;
  o.momentum = momentumOpt;
  o.clipNorm = clipNorm;
  o.lrSchedule = lrSchedule;
  o.warmupSteps = warmupSteps;
  o.decaySteps = decaySteps;
  o.minLr = minLr;
  if (vram.getNumOccurrences())
    o.vram = deviceReserve() ? std::to_string(arenaBudget()) : std::string(vram);
  o.vramReserve = int64_t(deviceReserve());
  if (ram.getNumOccurrences())
    o.ram = ram;
  if (nvme.getNumOccurrences())
    o.nvme = StringRef(nvme).rsplit(':').second.str();
  if (chunkSize.getNumOccurrences())
    o.chunkSize = chunkSize;
  o.deviceProfile = deviceProfile;
  o.recompute = recompute;
  o.tiers = hostParams;
  o.deviceUpdates = deviceUpdates;
  o.bf16Fetches = bf16Fetches;
  // The parameters as the model declares them, for the initial state:
  // planning may split one into pieces (plan-tiers).
  mlir::OwningOpRef<mlir::ModuleOp> declared = mlir::ModuleOp::create(module->getLoc());
  {
    mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(declared->getBody());
    for (auto param : module->getOps<hmcc::tg::ParameterOp>())
      b.clone(*param);
  }
  // --bf16-storage auto: a copy planned with bf16 storage, beside the
  // program planned without, on a thread and in a context of its own.
  std::unique_ptr<StorageTrial> trial;
  if (bf16Storage != "auto" && o.precision == "bf16")
    storageChoice = std::string(o.bf16Storage ? "bf16" : "fp32") + " storage (--bf16-storage " +
                    std::string(bf16Storage) + ")";
  if (bf16Storage == "auto" && o.precision == "bf16" && o.until != "training") {
    o.bf16Storage = true; // the passes take their options' values when built
    trial = StorageTrial::start(*module, o);
    o.bf16Storage = false;
  }
  mlir::PassManager pm(&context);
  hmcc::buildPipeline(pm, o);
  auto failedPass = std::make_unique<FailedPass>();
  FailedPass *failure = failedPass.get();
  pm.addInstrumentation(std::move(failedPass));
  bool train = programKind == Program::Train;
  mlir::LogicalResult planned = pm.run(*module);
  // The copy replaces the program where it predicts a shorter step or fits
  // where the program does not; where neither fits, the smaller of the
  // budgets they name is the smallest for --bf16-storage auto.
  if (trial && !trial->finish()) {
    if (mlir::failed(planned) && trial->module &&
        smallestVram(*trial->module) < smallestVram(*module))
      diagnostics = trial->diagnostics;
  } else if (trial) {
    std::string why;
    auto profile = hmcc::planner::loadDeviceProfile(deviceProfile, why);
    auto step = [&](mlir::ModuleOp m) {
      return hmcc::planner::predictTimeline(*m.getOps<mlir::func::FuncOp>().begin(), *profile)
          .step;
    };
    double with = step(*trial->module);
    bool take = mlir::failed(planned);
    if (take) {
      storageChoice = "bf16 storage (--bf16-storage auto: the program fits --vram only so)";
    } else {
      double without = step(*module);
      take = with < without;
      storageChoice = std::string(take ? "bf16 storage" : "fp32 storage") +
                      " (--bf16-storage auto: " + hmcc::formatSeconds(with) + " with, " +
                      hmcc::formatSeconds(without) + " without)";
    }
    if (take) {
      if (auto copy = trial->moveTo(context)) {
        module = std::move(copy);
        planned = mlir::success();
        diagnostics.clear();
      } else {
        storageChoice.clear();
      }
    }
  }
  if (mlir::failed(planned)) {
    // A sound program that does not fit --vram is still dumped, and the
    // summary says how its memory splits, before the error.
    if (failure->pass == "hm-check-budget") {
      reportSchedule(*module, train, diagnostics, stage == Emit::Summary);
      if (stage == Emit::Summary)
        writeSummary();
      return error(inputFile + ": " + diagnostics);
    }
    if (stage != Emit::Summary)
      return error(inputFile + ": " + diagnostics);
    if (failure->pass == "plan-recompute" || failure->pass == "plan-tiers") {
      summaryOut << "  no " << (train ? "training step" : "program") << ": "
                 << StringRef(diagnostics).split('\n').first << "\n";
      writeSummary();
      return error(inputFile + ": " + diagnostics);
    }
    summaryOut << "  no " << (train ? "training step" : "program") << ": "
               << StringRef(diagnostics).split('\n').first
               << (programKind == Program::Forward ? "" : " (--program=forward compiles the forward pass)")
               << "\n";
    return writeSummary();
  }
  if (stage == Emit::Mlir)
    return writeOutput([&](raw_ostream &os) { return printModule(*module, os); });
  if (int rc = reportSchedule(*module, train, diagnostics, stage == Emit::Summary))
    return rc;
  if (stage == Emit::Summary)
    return writeSummary();

  auto entry = module->lookupSymbol<mlir::func::FuncOp>(hmcc::entryFunction(o.program));
  mlir::func::FuncOp trainFn = train ? entry : nullptr, eval = train ? nullptr : entry;
  if (stage == Emit::EmitC)
    return writeOutput([&](raw_ostream &os) {
      auto cpp = hmcc::lowerToEmitC(*module, trainFn, eval, target == Target::Cuda ? "cuda" : "cpu");
      if (cpp)
        return printModule(*cpp, os);
      error(inputFile + ": " + diagnostics);
      return false;
    });
  if (stage == Emit::Cpp)
    return writeOutput([&](raw_ostream &os) {
      if (mlir::succeeded(hmcc::emitProgramCpp(*module, trainFn, eval, os,
                                               target == Target::Cuda ? "cuda" : "cpu")))
        return true;
      error(inputFile + ": " + diagnostics);
      return false;
    });
  if (stage == Emit::Schedule)
    return writeOutput([&](raw_ostream &os) { return printModule(*module, os); });
  if (stage == Emit::Cuda)
    return writeOutput([&](raw_ostream &os) {
      hmcc::emitFusedKernels(*module, os);
      return true;
    });
  return buildExecutable(*module, trainFn, eval, *declared, diagnostics);
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // Past a file size limit (ulimit -f) a write fails with EFBIG, reported
  // like a full disk, instead of killing hmcc mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  return finishStreams(run(argc, argv));
}
