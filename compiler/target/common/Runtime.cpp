//===- Runtime.cpp - what every target shares about the runtime -----------===//
#include "compiler/target/common/Runtime.h"
#include "compiler/target/common/ProgramDescriptor.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "hmrt/io.h"
#include "hmrt/program.h"

#include "mlir/Support/DebugStringHelper.h"

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace mlir;

namespace hmcc {

int hmrtDtypeOf(Type element) {
  if (element.isF32())
    return HMRT_DTYPE_F32;
  if (element.isF64())
    return HMRT_DTYPE_F64;
  if (element.isF16())
    return HMRT_DTYPE_F16;
  if (element.isBF16())
    return HMRT_DTYPE_BF16;
  if (auto i = dyn_cast<IntegerType>(element)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 1: return HMRT_DTYPE_BOOL;
    case 8: return u ? HMRT_DTYPE_U8 : HMRT_DTYPE_I8;
    case 16: return u ? HMRT_DTYPE_U16 : HMRT_DTYPE_I16;
    case 32: return u ? HMRT_DTYPE_U32 : HMRT_DTYPE_I32;
    case 64: return u ? HMRT_DTYPE_U64 : HMRT_DTYPE_I64;
    }
  }
  return 0;
}

hmrt_hyperparams programHyperparams(ModuleOp module, bool training) {
  hmrt_hyperparams h = {};
  h.optimizer = HMRT_OPT_NONE;
  auto hyper = module->getAttrOfType<DictionaryAttr>("tg.optimizer");
  auto hp = [&](StringRef key) {
    auto a = hyper ? hyper.getAs<FloatAttr>(key) : FloatAttr();
    return static_cast<float>(a ? a.getValueAsDouble() : 0.0);
  };
  if (hyper && training) {
    StringRef name = hyper.getAs<StringAttr>("name").getValue();
    h.optimizer = name == "sgd"     ? HMRT_OPT_SGD
                  : name == "adamw" ? HMRT_OPT_ADAMW
                  : name == "onnx"  ? HMRT_OPT_ONNX
                                    : HMRT_OPT_ADAMW8BIT;
  }
  h.lr = hp("lr");
  h.beta1 = hp("beta1");
  h.beta2 = hp("beta2");
  h.eps = hp("eps");
  h.weight_decay = hp("weight_decay");
  h.momentum = hp("momentum");
  h.clip_norm = hp("clip_norm");
  auto lrSchedule = module->getAttrOfType<DictionaryAttr>("tg.lr_schedule");
  auto get = [&](StringRef key) { return lrSchedule ? lrSchedule.get(key) : Attribute(); };
  auto kind = dyn_cast_or_null<StringAttr>(get("kind"));
  auto integer = [&](StringRef key) {
    auto v = dyn_cast_or_null<IntegerAttr>(get(key));
    return v ? v.getInt() : 0;
  };
  auto minLr = dyn_cast_or_null<FloatAttr>(get("min_lr"));
  h.lr_schedule = kind && kind.getValue() == "cosine" ? HMRT_LR_COSINE : HMRT_LR_CONSTANT;
  h.warmup_steps = integer("warmup_steps");
  h.decay_steps = integer("decay_steps");
  h.min_lr = static_cast<float>(minLr ? minLr.getValueAsDouble() : 0.0);
  return h;
}

bool writeInitialState(ModuleOp module, bool training, const TensorMap &values,
                       llvm::StringRef path, std::string &error) {
  std::vector<std::vector<char>> storage;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> names;
  std::vector<hmrt_checkpoint_tensor> tensors;
  // Zero-filled storage for one tensor; parameters then get their values.
  auto add = [&](StringRef name, Type type, int kind) {
    auto t = cast<RankedTensorType>(type);
    storage.emplace_back(tg::tensorBytes(t), 0);
    shapes.emplace_back(t.getShape().begin(), t.getShape().end());
    names.push_back(name.str());
    tensors.push_back({nullptr, kind, hmrtDtypeOf(t.getElementType()),
                       static_cast<int32_t>(t.getRank()), nullptr, nullptr});
  };
  // Whole tensors, also where the program keeps one in pieces.
  for (const WholeTensor &w : wholeTensors(module, /*states=*/false)) {
    auto it = values.find(w.name);
    if (it == values.end()) {
      error = "no initial value for parameter '" + w.name + "'";
      return false;
    }
    add(w.name, w.type, HMRT_KIND_PARAM);
    Type element = w.type.getElementType();
    const std::vector<double> &v = it->second.values;
    if (element.isF32())
      std::copy(v.begin(), v.end(), reinterpret_cast<float *>(storage.back().data()));
    else if (element.isF64())
      std::copy(v.begin(), v.end(), reinterpret_cast<double *>(storage.back().data()));
    else if (element.isInteger(64))
      std::copy(v.begin(), v.end(), reinterpret_cast<int64_t *>(storage.back().data()));
    else if (element.isInteger(32))
      std::copy(v.begin(), v.end(), reinterpret_cast<int32_t *>(storage.back().data()));
    else {
      error = "parameter '" + w.name + "' has element type " + debugString(element) +
              "; the CPU target keeps parameters in f32, f64, i32 or i64";
      return false;
    }
  }
  for (const WholeTensor &w : wholeTensors(module, /*states=*/true))
    add(w.name, w.type, HMRT_KIND_STATE);
  for (size_t i = 0; i < tensors.size(); ++i) {
    tensors[i].name = names[i].c_str();
    tensors[i].shape = shapes[i].data();
    tensors[i].data = storage[i].data();
  }
  hmrt_checkpoint_meta meta = {};
  std::snprintf(meta.model, sizeof meta.model, "%s",
                module.getSymName() ? module.getSymName()->str().c_str() : "model");
  meta.abi_version = HMRT_PROGRAM_ABI_VERSION;
  meta.hyper = programHyperparams(module, training);
  if (hmrt_checkpoint_write(path.str().c_str(), &meta, static_cast<int32_t>(tensors.size()),
                            tensors.data()) != HMRT_OK) {
    error = std::string("cannot write the initial state: ") + hmrt_last_error();
    return false;
  }
  return true;
}

uint64_t initialStateMemory(ModuleOp module) {
  uint64_t bytes = 0;
  for (auto p : module.getOps<tg::ParameterOp>()) {
    auto t = cast<RankedTensorType>(p.getType());
    // The decoded value and the double copy (8 bytes each), its bytes.
    bytes += static_cast<uint64_t>(t.getNumElements()) * 16 + tg::tensorBytes(t);
  }
  for (auto st : module.getOps<tg::StateOp>())
    bytes += tg::tensorBytes(cast<RankedTensorType>(st.getType()));
  return bytes;
}

} // namespace hmcc
