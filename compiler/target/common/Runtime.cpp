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
#include <cstring>
#include <new>
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

namespace {

/// The bytes of the initial state's tensors for hmrt_checkpoint_write_filled:
/// a parameter's value is asked for when its first piece is, and dropped
/// after its last; states are zero.
struct InitialStateFill {
  llvm::function_ref<std::optional<Tensor>(StringRef, std::string &)> valueOf;
  llvm::function_ref<void(uint64_t, uint64_t)> progress;
  const std::vector<WholeTensor> *params;
  uint64_t done = 0, total = 0;
  std::string error;
  int32_t current = -1;
  std::vector<char> bytes; // parameter `current` in its element type

  bool encode(const WholeTensor &w) {
    std::optional<Tensor> value = valueOf(w.name, error);
    if (!value)
      return false;
    Type element = w.type.getElementType();
    const std::vector<double> &v = value->values;
    if (int64_t(v.size()) != w.type.getNumElements()) {
      error = "parameter '" + w.name + "': the value has " + std::to_string(v.size()) +
              " elements, its type " + std::to_string(w.type.getNumElements());
      return false;
    }
    bytes.assign(tg::tensorBytes(w.type), 0);
    if (element.isF32())
      std::copy(v.begin(), v.end(), reinterpret_cast<float *>(bytes.data()));
    else if (element.isF64())
      std::copy(v.begin(), v.end(), reinterpret_cast<double *>(bytes.data()));
    else if (element.isInteger(64))
      std::copy(v.begin(), v.end(), reinterpret_cast<int64_t *>(bytes.data()));
    else if (element.isInteger(32))
      std::copy(v.begin(), v.end(), reinterpret_cast<int32_t *>(bytes.data()));
    else {
      error = "parameter '" + w.name + "' has element type " + debugString(element) +
              "; the CPU target keeps parameters in f32, f64, i32 or i64";
      return false;
    }
    return true;
  }

  static hmrt_status fill(void *user, int32_t index, uint64_t offset, uint64_t n, void *dst) {
    auto *self = static_cast<InitialStateFill *>(user);
    self->done += n;
    if (self->progress)
      self->progress(self->done, self->total);
    if (index >= int32_t(self->params->size())) { // an optimizer state
      std::memset(dst, 0, n);
      return HMRT_OK;
    }
    if (index != self->current) {
      std::vector<char>().swap(self->bytes);
      self->current = index;
      if (!self->encode((*self->params)[index]))
        return HMRT_INVALID_ARGUMENT;
    }
    std::memcpy(dst, self->bytes.data() + offset, n);
    if (offset + n == self->bytes.size())
      std::vector<char>().swap(self->bytes); // written: its memory goes now
    return HMRT_OK;
  }
};

} // namespace

bool writeInitialState(ModuleOp module, bool training,
                       llvm::function_ref<std::optional<Tensor>(StringRef, std::string &)> valueOf,
                       llvm::StringRef path, std::string &error,
                       llvm::function_ref<void(uint64_t, uint64_t)> progress) {
  std::vector<WholeTensor> params = wholeTensors(module, /*states=*/false);
  std::vector<WholeTensor> states = wholeTensors(module, /*states=*/true);
  std::vector<std::vector<int64_t>> shapes;
  std::vector<hmrt_checkpoint_tensor> tensors;
  for (const std::vector<WholeTensor> *list : {&params, &states})
    for (const WholeTensor &w : *list) {
      shapes.emplace_back(w.type.getShape().begin(), w.type.getShape().end());
      tensors.push_back({w.name.c_str(), list == &params ? HMRT_KIND_PARAM : HMRT_KIND_STATE,
                         hmrtDtypeOf(w.type.getElementType()),
                         static_cast<int32_t>(w.type.getRank()), nullptr, nullptr});
    }
  for (size_t i = 0; i < tensors.size(); ++i)
    tensors[i].shape = shapes[i].data();
  hmrt_checkpoint_meta meta = {};
  std::snprintf(meta.model, sizeof meta.model, "%s",
                module.getSymName() ? module.getSymName()->str().c_str() : "model");
  meta.abi_version = HMRT_PROGRAM_ABI_VERSION;
  meta.hyper = programHyperparams(module, training);
  InitialStateFill fill{valueOf, progress, &params, 0, initialStateBytes(module), "", -1, {}};
  // An allocation that fails throws std::bad_alloc, which the runtime's
  // entry point turns into HMRT_OUT_OF_MEMORY (LLVM's handler, which hmcc
  // installs, would abort instead).
  struct NewHandler {
    std::new_handler saved = std::set_new_handler(nullptr);
    ~NewHandler() { std::set_new_handler(saved); }
  } throwing;
  hmrt_status status = hmrt_checkpoint_write_filled(path.str().c_str(), &meta,
                                                    static_cast<int32_t>(tensors.size()),
                                                    tensors.data(), &InitialStateFill::fill, &fill);
  if (status == HMRT_OK)
    return true;
  if (!fill.error.empty())
    error = fill.error;
  else if (status == HMRT_OUT_OF_MEMORY && fill.current >= 0 &&
           fill.current < int32_t(params.size()))
    error = "out of memory for parameter '" + params[fill.current].name + "' (" +
            std::to_string(params[fill.current].type.getNumElements()) +
            " elements) while writing the initial state; --no-initial-state writes the program "
            "without it";
  else
    error = std::string("cannot write the initial state: ") + hmrt_last_error();
  return false;
}

uint64_t initialStateBytes(ModuleOp module) {
  uint64_t bytes = 0;
  for (bool states : {false, true})
    for (const WholeTensor &w : wholeTensors(module, states))
      bytes += static_cast<uint64_t>(tg::tensorBytes(w.type));
  return bytes;
}

uint64_t initialStateMemory(ModuleOp module) {
  // One parameter at a time. Decoding holds its file bytes and the
  // doubles (8 bytes an element), as read from external data through a
  // mapped file (its bytes once more); then the doubles and its bytes
  // again. 16 bytes an element and twice its bytes bound both. States go
  // through the writer's buffer.
  uint64_t largest = 0;
  for (auto p : module.getOps<tg::ParameterOp>()) {
    auto t = cast<RankedTensorType>(p.getType());
    largest = std::max(largest, static_cast<uint64_t>(t.getNumElements()) * 16 +
                                    2 * static_cast<uint64_t>(tg::tensorBytes(t)));
  }
  return largest + (uint64_t(64) << 20);
}

} // namespace hmcc
