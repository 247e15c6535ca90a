//===- ProgramDescriptor.cpp - hmcc_program() for every target ------------===//
#include "compiler/target/common/ProgramDescriptor.h"
#include "compiler/target/common/Runtime.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <vector>

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc {

std::string cFloatLiteral(double v) {
  if (std::isinf(v))
    return v > 0 ? "HUGE_VALF" : "-HUGE_VALF";
  if (std::isnan(v))
    return "NAN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string text = buf;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + "f";
}

std::string cStringLiteral(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 32)
      out += "?"; // control characters have no place in a name
    else
      out += c;
  }
  return out + "\"";
}

LogicalResult checkScheduled(ModuleOp module, func::FuncOp train, func::FuncOp eval) {
  if (module.getOps<hm::ArenaOp>().empty())
    return module.emitError("codegen: the module is not scheduled (run hm-place-buffers)");
  for (func::FuncOp fn : {train, eval})
    if (fn)
      for (Value v : fn.getBody().front().getTerminator()->getOperands())
        if (!hm::placedOffset(v))
          return fn.emitError("codegen: a result of @") << fn.getSymName() << " is not placed";
  return success();
}

namespace {

class Descriptor {
public:
  Descriptor(ModuleOp module, const ProgramSymbols &symbols) : module(module), symbols(symbols) {
    for (auto p : module.getOps<ParameterOp>())
      symbolOffsets[p.getSymName()] = p->getAttrOfType<IntegerAttr>(hm::kOffsetAttr).getInt();
    for (auto s : module.getOps<StateOp>())
      symbolOffsets[s.getSymName()] = s->getAttrOfType<IntegerAttr>(hm::kOffsetAttr).getInt();
  }

  std::string write(func::FuncOp train, func::FuncOp eval) {
    func::FuncOp io = train ? train : eval;
    std::vector<std::string> inputs, outputs, params, states;
    int64_t vocab = 0;
    for (unsigned k = 0; k < io.getNumArguments(); ++k) {
      auto name = io.getArgAttrOfType<StringAttr>(k, "tg.input");
      if (!name)
        continue;
      auto role = io.getArgAttrOfType<StringAttr>(k, "tg.input_role");
      if (auto v = io.getArgAttrOfType<IntegerAttr>(k, "tg.vocab_size"))
        vocab = v.getInt();
      inputs.push_back(tensor(name.getValue(), io.getArgument(k).getType(),
                              io.getArgAttrOfType<IntegerAttr>(k, hm::kOffsetAttr).getInt(),
                              !role                          ? "HMRT_ROLE_OTHER"
                              : role.getValue() == "tokens" ? "HMRT_ROLE_TOKENS"
                                                             : "HMRT_ROLE_TARGETS"));
    }
    if (train) {
      Value loss = train.getBody().front().getTerminator()->getOperand(0);
      outputs.push_back(tensor("loss", loss.getType(), *hm::placedOffset(loss)));
    } else {
      auto ret = cast<func::ReturnOp>(eval.getBody().front().getTerminator());
      for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
        std::string name = "output" + std::to_string(k);
        if (auto n = eval.getResultAttrOfType<StringAttr>(k, "tg.output"))
          name = n.str();
        else if (auto g = eval.getResultAttrOfType<FlatSymbolRefAttr>(k, "tg.grad_of"))
          name = "grad." + g.getValue().str();
        outputs.push_back(tensor(name, v.getType(), *hm::placedOffset(v)));
      }
    }
    for (auto p : module.getOps<ParameterOp>())
      params.push_back(tensor(p.getSymName(), p.getType(), symbolOffsets.lookup(p.getSymName()),
                              "HMRT_ROLE_OTHER", hm::homeTier(p)));
    for (auto st : module.getOps<StateOp>())
      states.push_back(tensor(st.getSymName(), st.getType(), symbolOffsets.lookup(st.getSymName()),
                              "HMRT_ROLE_OTHER", hm::homeTier(st)));

    std::string text;
    llvm::raw_string_ostream os(text);
    auto list = [&](const char *name, const std::vector<std::string> &items) {
      os << "static const hmrt_tensor_desc " << name << "[] = {\n";
      for (const std::string &item : items)
        os << "  " << item << ",\n";
      if (items.empty())
        os << "  {nullptr, 0, 0, nullptr, 0, 0, 0, 0},\n";
      os << "};\n";
    };
    list("kInputs", inputs);
    list("kOutputs", outputs);
    list("kParams", params);
    list("kStates", states);
    auto names = [&](const char *name, ArrayRef<std::string> ops) {
      os << "static const char* const " << name << "[] = {\n";
      for (const std::string &op : ops)
        os << "  " << cStringLiteral(op) << ",\n";
      if (ops.empty())
        os << "  nullptr,\n";
      os << "};\n";
    };
    // Where each parameter's initial value lies in the ONNX model's external
    // data (train --weights reads it there), in kParams' order.
    os << "static const hmrt_weight_source kWeightSources[] = {\n";
    size_t sources = 0;
    for (auto p : module.getOps<ParameterOp>()) {
      auto type = cast<RankedTensorType>(p.getType());
      auto location = p.getLocation();
      int64_t bytes = tg::tensorBytes(type);
      bool raw = location && !p.getInitialValueAttr() && type.getElementType().isF32() &&
                 (!p.getLength() || static_cast<int64_t>(*p.getLength()) == bytes);
      if (raw)
        os << "  {" << cStringLiteral(*location) << ", "
           << (p.getOffset() ? static_cast<int64_t>(*p.getOffset()) : 0) << "u, " << bytes
           << "u},\n";
      else
        os << "  {nullptr, 0u, 0u},\n";
      ++sources;
    }
    if (sources == 0)
      os << "  {nullptr, 0u, 0u},\n";
    os << "};\n"
       << "extern \"C\" const hmrt_weight_source* hmcc_weight_sources(int32_t* count) {\n"
       << "  *count = " << sources << ";\n  return kWeightSources;\n}\n";
    names("kStepOps", symbols.stepOps);
    names("kForwardOps", symbols.forwardOps);

    auto function = [](StringRef name) { return name.empty() ? std::string("nullptr") : name.str(); };
    auto arena = hm::arenaOfTier(module, "device");
    auto host = hm::arenaOfTier(module, "host");
    auto storage = hm::arenaOfTier(module, "storage");
    os << "\nextern \"C\" const hmrt_program* hmcc_program(void) {\n"
       << "  static const hmrt_program program = {\n"
       << "    HMRT_PROGRAM_ABI_VERSION, "
       << cStringLiteral(module.getSymName() ? module.getSymName()->str() : "model") << ", "
       << cStringLiteral(symbols.backend) << ",\n"
       << "    " << arena.getBytes() << "u, " << (host ? host.getBytes() : 0) << "u, "
       << (storage ? storage.getBytes() : 0) << "u,\n"
       << "    " << inputs.size() << ", kInputs, " << outputs.size() << ", kOutputs,\n"
       << "    " << params.size() << ", kParams, " << states.size() << ", kStates,\n"
       << "    " << vocab << ",\n"
       << "    " << hyperparams(static_cast<bool>(train)) << ",\n"
       << "    " << function(symbols.stepFunction) << ", " << function(symbols.forwardFunction)
       << ",\n    " << symbols.stepOps.size() << ", kStepOps, " << symbols.forwardOps.size()
       << ", kForwardOps};\n"
       << "  return &program;\n}";
    return text;
  }

private:
  ModuleOp module;
  const ProgramSymbols &symbols;
  llvm::StringMap<int64_t> symbolOffsets;

  /// One hmrt_tensor_desc initializer, in the arena of `tier`.
  std::string tensor(StringRef name, Type type, int64_t offset,
                     StringRef role = "HMRT_ROLE_OTHER", int tier = 0) {
    auto t = cast<RankedTensorType>(type);
    std::string out;
    llvm::raw_string_ostream d(out);
    d << "{" << cStringLiteral(name) << ", " << hmrtDtypeOf(t.getElementType()) << ", "
      << t.getRank() << ", " << symbols.shapeArray(t.getShape()) << ", " << offset << "u, "
      << tg::tensorBytes(t) << "u, " << role << ", "
      << (tier == 2 ? "HMRT_TIER_STORAGE" : tier == 1 ? "HMRT_TIER_HOST" : "HMRT_TIER_DEVICE")
      << "}";
    return out;
  }

  /// The hmrt_hyperparams initializer (programHyperparams).
  std::string hyperparams(bool training) {
    hmrt_hyperparams h = programHyperparams(module, training);
    const char *optimizer = h.optimizer == HMRT_OPT_SGD       ? "HMRT_OPT_SGD"
                            : h.optimizer == HMRT_OPT_ADAMW   ? "HMRT_OPT_ADAMW"
                            : h.optimizer == HMRT_OPT_ONNX    ? "HMRT_OPT_ONNX"
                            : h.optimizer == HMRT_OPT_ADAMW8BIT ? "HMRT_OPT_ADAMW8BIT"
                                                              : "HMRT_OPT_NONE";
    std::string out;
    llvm::raw_string_ostream os(out);
    os << "{" << optimizer << ", " << cFloatLiteral(h.lr) << ", " << cFloatLiteral(h.beta1)
       << ", " << cFloatLiteral(h.beta2) << ", " << cFloatLiteral(h.eps) << ", "
       << cFloatLiteral(h.weight_decay) << ", " << cFloatLiteral(h.momentum) << ", "
       << cFloatLiteral(h.clip_norm) << ", "
       << (h.lr_schedule == HMRT_LR_COSINE ? "HMRT_LR_COSINE" : "HMRT_LR_CONSTANT") << ", "
       << h.warmup_steps << ", " << h.decay_steps << ", " << cFloatLiteral(h.min_lr) << "}";
    return out;
  }
};

} // namespace

std::string programDescriptor(ModuleOp module, func::FuncOp train, func::FuncOp eval,
                              const ProgramSymbols &symbols) {
  return Descriptor(module, symbols).write(train, eval);
}

} // namespace hmcc
