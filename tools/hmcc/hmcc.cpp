//===- hmcc.cpp - the hmcc compiler driver --------------------------------===//
//
//   hmcc model.onnx [--batch N] [--seq N] [--input-shape NAME=D0,D1]
//        [--frozen NAME] [--vram SIZE] [--ram SIZE] [--nvme PATH:SIZE]
//        [--emit=summary|mlir] [-o FILE]
//
// Exit status: 0 on success, 1 on any error (one message on stderr).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "lib/import/OnnxImporter.h"
#include "lib/support/Size.h"
#include "tg/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <cstdlib>

using namespace llvm;

namespace {

cl::OptionCategory inputCategory("Input");
cl::OptionCategory budgetCategory(
    "Memory budget",
    "Checked for well-formedness now; the planner that schedules within them is not built yet.");
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
                          cl::desc("Device memory budget, e.g. 24G, 512M, 1.5T (binary units)"),
                          cl::cat(budgetCategory));
cl::opt<std::string> ram("ram", cl::value_desc("SIZE"),
                         cl::desc("Pinned host memory budget, e.g. 96G"),
                         cl::cat(budgetCategory));
cl::opt<std::string> nvme("nvme", cl::value_desc("DIR:SIZE"),
                          cl::desc("NVMe spill directory and its budget, e.g. /mnt/ssd/hm:400G"),
                          cl::cat(budgetCategory));

enum class Emit { Summary, Mlir };
cl::opt<Emit> emit("emit", cl::desc("What to produce:"), cl::init(Emit::Summary),
                   cl::values(clEnumValN(Emit::Summary, "summary",
                                         "parameter count and bytes, inputs, op histogram (default)"),
                              clEnumValN(Emit::Mlir, "mlir",
                                         "the imported training graph (tg dialect)")),
                   cl::cat(outputCategory));
cl::opt<std::string> outputFile("o", cl::value_desc("FILE"),
                                cl::desc("Write the output to FILE instead of standard output"),
                                cl::cat(outputCategory));
cl::opt<bool> force("force", cl::desc("Overwrite the -o file if it exists"),
                    cl::cat(outputCategory));
cl::opt<bool> listOps("list-ops", cl::desc("List the supported ONNX operators and exit"),
                      cl::cat(outputCategory));
cl::opt<bool> elide("elide-constants",
                    cl::desc("With --emit=mlir, print constants over 64 elements as "
                             "dense_resource<__elided__> (shorter, but not parseable)"),
                    cl::init(false), cl::cat(outputCategory));

int error(const Twine &message) {
  WithColor::error(errs(), "hmcc") << message << "\n";
  return 1;
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

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&inputCategory, &budgetCategory, &outputCategory});
  cl::SetVersionPrinter([](raw_ostream &os) { os << "hmcc 0.1 (MLIR 22)\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "hmcc - ahead-of-time schedule compiler for training on one GPU\n\n"
      "Imports an ONNX training graph (a forward graph whose output is a scalar loss,\n"
      "as torch.onnx.export writes it) into hmcc's training-graph dialect and reports\n"
      "what it holds (--emit=summary) or prints it (--emit=mlir).\n\n"
      "Initializers are trainable parameters when they are floating-point and the loss\n"
      "depends on them differentiably; all others (masks, index tables) are constants.\n"
      "Use --frozen for buffers such as rotary tables that the rule cannot tell apart.\n");

  if (listOps) {
    for (const std::string &op : hmcc::supportedOnnxOps())
      outs() << op << "\n";
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
  for (auto *opt : {&vram, &ram}) {
    if (opt->getNumOccurrences())
      if (auto size = hmcc::parseSize(*opt); !size)
        return error("--" + opt->ArgStr + ": " + toString(size.takeError()));
  }
  if (nvme.getNumOccurrences()) {
    auto [dir, size] = StringRef(nvme).rsplit(':');
    if (dir.empty() || size.empty())
      return error("--nvme '" + nvme + "' is malformed: write DIR:SIZE, e.g. /mnt/ssd/hm:400G");
    if (auto bytes = hmcc::parseSize(size); !bytes)
      return error("--nvme: " + toString(bytes.takeError()));
  }

  if (!outputFile.empty() && !force && sys::fs::exists(outputFile))
    return error("output file '" + outputFile +
                 "' exists; pass --force to overwrite it");

  mlir::MLIRContext context;
  std::string message;
  auto module = hmcc::importOnnxModel(context, inputFile, options, message);
  if (!module)
    return error(message);

  std::string openError;
  auto output = mlir::openOutputFile(outputFile.empty() ? std::string("-") : std::string(outputFile), &openError);
  if (!output)
    return error(openError);

  if (emit == Emit::Mlir) {
    mlir::OpPrintingFlags flags;
    if (elide)
      flags.elideLargeElementsAttrs(64);
    module->print(output->os(), flags);
  } else {
    mlir::PassManager pm(&context);
    hmcc::TGSummaryOptions summaryOptions;
    summaryOptions.output = outputFile.empty() ? std::string("-") : std::string(outputFile);
    output.reset(); // the pass writes the file itself
    pm.addPass(hmcc::createTGSummary(summaryOptions));
    if (mlir::failed(pm.run(*module)))
      return error("could not summarise the model");
    return 0;
  }
  output->keep();
  return 0;
}
