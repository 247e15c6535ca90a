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

std::vector<WholeTensor> wholeTensors(ModuleOp module, bool states) {
  std::vector<WholeTensor> out;
  auto add = [&](Operation *decl, StringRef name, Type type) {
    auto t = cast<RankedTensorType>(type);
    auto whole = decl->getAttrOfType<StringAttr>(hm::kWholeAttr);
    // The next piece of the whole before it (a whole's name is no other
    // declaration's).
    if (whole && !out.empty() && out.back().name == whole.getValue()) {
      WholeTensor &w = out.back();
      SmallVector<int64_t> shape(w.type.getShape());
      shape[0] += t.getDimSize(0);
      w.type = RankedTensorType::get(shape, w.type.getElementType());
      w.pieces.push_back(decl);
      return;
    }
    out.push_back({whole ? whole.getValue().str() : name.str(), t, {decl}});
  };
  if (states)
    for (auto s : module.getOps<StateOp>())
      add(s, s.getSymName(), s.getType());
  else
    for (auto p : module.getOps<ParameterOp>())
      add(p, p.getSymName(), p.getType());
  return out;
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
    std::string text;
    llvm::raw_string_ostream os(text);
    std::vector<WholeTensor> wholeParams = wholeTensors(module, false);
    for (const WholeTensor &w : wholeParams)
      params.push_back(declared(w, os));
    for (const WholeTensor &w : wholeTensors(module, true))
      states.push_back(declared(w, os));

    auto list = [&](const char *name, const std::vector<std::string> &items) {
      os << "static const hmrt_tensor_desc " << name << "[] = {\n";
      for (const std::string &item : items)
        os << "  " << item << ",\n";
      if (items.empty())
        os << "  {nullptr, 0, 0, nullptr, 0, 0, 0, 0, 0, nullptr},\n";
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
    for (const WholeTensor &w : wholeParams) {
      // Raw float32 external data, its pieces' bytes one after the other.
      auto first = cast<ParameterOp>(w.pieces.front());
      auto location = first.getLocation();
      int64_t start = first.getOffset() ? static_cast<int64_t>(*first.getOffset()) : 0;
      int64_t bytes = 0;
      bool raw = location && w.type.getElementType().isF32();
      for (Operation *decl : w.pieces) {
        auto p = cast<ParameterOp>(decl);
        int64_t pieceBytes = tg::tensorBytes(p.getType());
        raw = raw && !p.getInitialValueAttr() && p.getLocation() == location &&
              (p.getOffset() ? static_cast<int64_t>(*p.getOffset()) : 0) == start + bytes &&
              (!p.getLength() || static_cast<int64_t>(*p.getLength()) == pieceBytes);
        bytes += pieceBytes;
      }
      if (raw)
        os << "  {" << cStringLiteral(*location) << ", " << start << "u, " << bytes << "u},\n";
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
  int numPieceArrays = 0;

  static const char *tierName(int tier) {
    return tier == 2 ? "HMRT_TIER_STORAGE" : tier == 1 ? "HMRT_TIER_HOST" : "HMRT_TIER_DEVICE";
  }

  /// One hmrt_tensor_desc initializer, in the arena of `tier`; `pieces`
  /// names its array of pieces when it has `numPieces`.
  std::string tensor(StringRef name, Type type, int64_t offset,
                     StringRef role = "HMRT_ROLE_OTHER", int tier = 0, size_t numPieces = 0,
                     StringRef pieces = "nullptr") {
    auto t = cast<RankedTensorType>(type);
    std::string out;
    llvm::raw_string_ostream d(out);
    d << "{" << cStringLiteral(name) << ", " << hmrtDtypeOf(t.getElementType()) << ", "
      << t.getRank() << ", " << symbols.shapeArray(t.getShape()) << ", " << offset << "u, "
      << tg::tensorBytes(t) << "u, " << role << ", " << tierName(tier) << ", " << numPieces
      << ", " << pieces << "}";
    return out;
  }

  /// The initializer of a declared parameter or state, whole or in pieces;
  /// the array of its pieces, if any, is written to `os` first.
  std::string declared(const WholeTensor &w, llvm::raw_ostream &os) {
    auto name = [](Operation *decl) { return cast<SymbolOpInterface>(decl).getName(); };
    Operation *first = w.pieces.front();
    int64_t offset = symbolOffsets.lookup(name(first));
    if (w.pieces.size() == 1)
      return tensor(w.name, w.type, offset, "HMRT_ROLE_OTHER", hm::homeTier(first));
    std::string array = "kPieces" + std::to_string(numPieceArrays++);
    os << "static const hmrt_tensor_piece " << array << "[] = {\n";
    int64_t at = 0;
    for (Operation *decl : w.pieces) {
      int64_t bytes = tg::tensorBytes(hm::storedType(decl));
      os << "  {" << at << "u, " << bytes << "u, " << tierName(hm::homeTier(decl)) << ", "
         << symbolOffsets.lookup(name(decl)) << "u},\n";
      at += bytes;
    }
    os << "};\n";
    return tensor(w.name, w.type, offset, "HMRT_ROLE_OTHER", hm::homeTier(first),
                  w.pieces.size(), array);
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
