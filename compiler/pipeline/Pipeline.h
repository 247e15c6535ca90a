//===- Pipeline.h - hmcc's pass pipeline --------------------------*- C++ -*-===//
//
// The whole compilation from the imported module (tg, as lib/import writes
// it) to the scheduled program (hm), as one pass pipeline: what `hmcc` runs
// and what `hmcc-opt --hmcc-pipeline="..."` replays.
//
//   tg-training-info        (training-info=true, program=train)
//   tg-fold-transposes
//   tg-fuse-attention       (fuse=all)
//   tg-expand-gradients
//   tg-autodiff             (program=train|gradients, training-info=false)
//   tg-optimizer            (program=train, training-info=false)
//   tg-lr-schedule
//   -- until=training stops here: the training graph (hmcc --emit=mlir) --
//   tg-legalize-cpu-types
//   tg-precision            (precision, bf16-storage)
//   tg-select-entries       (the entry function of `program`)
//   tg-input-roles          (tokens / targets, for the driver's loader)
//   tg-fuse-elementwise     (fuse=all|elementwise)
//   tg-fold-rounding
//   plan-updates
//   plan-quantize-device    (quantize-states, vram, device-profile, recompute)
//   plan-tiers              (vram, device-profile, host-params, device-updates, bf16-fetches,
//                            chunk-size)
//   plan-recompute          (vram, device-profile, recompute)
//   plan-overlap            (vram, device-profile)
//   plan-quantize           (quantize-states, ram)
//   plan-storage            (ram, nvme, chunk-size)
//   plan-quantize-traffic   (quantize-states, device-profile)
//   hm-place-buffers        (tg -> hm)
//   plan-staging            (chunk-size)
//   plan-streams
//   hm-verify-memory
//   hm-verify-streams
//   hm-check-budget         (vram, ram, nvme)
//
//===----------------------------------------------------------------------===//
#ifndef HMCC_PIPELINE_PIPELINE_H
#define HMCC_PIPELINE_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include "llvm/ADT/StringRef.h"

namespace hmcc {

struct PipelineOptions : mlir::PassPipelineOptions<PipelineOptions> {
  Option<std::string> program{*this, "program",
                              llvm::cl::desc("train, forward or gradients (hmcc --program)"),
                              llvm::cl::init("train")};
  Option<std::string> until{*this, "until",
                            llvm::cl::desc("training (the training graph, hmcc --emit=mlir) or "
                                           "schedule (the scheduled program)"),
                            llvm::cl::init("schedule")};
  Option<bool> trainingInfo{
      *this, "training-info",
      llvm::cl::desc("The module brings its own training step (ONNX training_info; hmcc sets "
                     "this when the imported module has the tg.training_info attribute)"),
      llvm::cl::init(false)};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd, adamw or adamw8bit"),
                                llvm::cl::init("adamw")};
  Option<float> lr{*this, "lr", llvm::cl::desc("Learning rate"), llvm::cl::init(1e-3f)};
  Option<float> beta1{*this, "beta1", llvm::cl::desc("AdamW beta1"), llvm::cl::init(0.9f)};
  Option<float> beta2{*this, "beta2", llvm::cl::desc("AdamW beta2"), llvm::cl::init(0.999f)};
  Option<float> eps{*this, "eps", llvm::cl::desc("AdamW epsilon"), llvm::cl::init(1e-8f)};
  Option<float> weightDecay{*this, "weight-decay",
                            llvm::cl::desc("Weight decay; negative: 0.01 for AdamW, 0 for SGD"),
                            llvm::cl::init(-1.0f)};
  Option<float> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                         llvm::cl::init(0.9f)};
  Option<float> clipNorm{*this, "clip-norm",
                         llvm::cl::desc("Clip the global gradient norm (0: off)"),
                         llvm::cl::init(0.0f)};
  Option<std::string> lrSchedule{*this, "lr-schedule", llvm::cl::desc("constant or cosine"),
                                 llvm::cl::init("constant")};
  Option<int64_t> warmupSteps{*this, "warmup-steps", llvm::cl::desc("Cosine warm-up steps"),
                              llvm::cl::init(0)};
  Option<int64_t> decaySteps{*this, "decay-steps",
                             llvm::cl::desc("Cosine decay steps (0: the run's --steps)"),
                             llvm::cl::init(0)};
  Option<float> minLr{*this, "min-lr", llvm::cl::desc("Final cosine learning rate"),
                      llvm::cl::init(0.0f)};
  Option<std::string> vram{*this, "vram",
                           llvm::cl::desc("Device memory budget, e.g. 24G (empty: no bound)"),
                           llvm::cl::init("")};
  Option<int64_t> vramReserve{
      *this, "vram-reserve",
      llvm::cl::desc("Device bytes the runtime holds beside the arena (hmcc --target cuda): vram "
                     "is then the arena's budget, and messages add these back"),
      llvm::cl::init(0)};
  Option<std::string> ram{*this, "ram",
                          llvm::cl::desc("Host memory budget for the host arena, e.g. 96G "
                                         "(empty: no bound)"),
                          llvm::cl::init("")};
  Option<std::string> quantizeStates{
      *this, "quantize-states",
      llvm::cl::desc("AdamW moments in 8 bits: never, auto (what --vram, --ram and the "
                     "predicted step need) or always"),
      llvm::cl::init("never")};
  Option<std::string> nvme{*this, "nvme",
                           llvm::cl::desc("Storage budget for the storage arena, e.g. 400G "
                                          "(empty: no storage)"),
                           llvm::cl::init("")};
  Option<std::string> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("Parameter bytes per chunk of an update of stored states, e.g. 64M "
                     "(empty: whole parameters)"),
      llvm::cl::init("")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("fp32, or bf16 (MatMul and Gemm with bf16 products and fp32 sums)"),
      llvm::cl::init("fp32")};
  Option<bool> bf16Storage{
      *this, "bf16-storage",
      llvm::cl::desc("With precision=bf16: keep the values only GEMMs read in bf16 "
                     "(tg-precision bf16-storage)"),
      llvm::cl::init(false)};
  Option<bool> constantsInArena{
      *this, "constants-in-arena",
      llvm::cl::desc("Place every constant in the arena (hm-set-constants placement=arena): "
                     "for targets whose kernels cannot read host memory"),
      llvm::cl::init(false)};
  Option<std::string> deviceProfile{
      *this, "device-profile",
      llvm::cl::desc("cpu, h200 or a JSON profile: the planner's cost model"),
      llvm::cl::init("cpu")};
  Option<std::string> tiers{
      *this, "host-params",
      llvm::cl::desc("auto (what the budget needs), none, all, or parameter names: homed in host "
                     "memory"),
      llvm::cl::init("auto")};
  Option<std::string> deviceUpdates{
      *this, "device-updates",
      llvm::cl::desc("auto (where the step predicts faster), none, all, or names of "
                     "parameters homed on the host whose optimizer updates run on the device "
                     "through staging buffers (plan-tiers)"),
      llvm::cl::init("auto")};
  Option<std::string> bf16Fetches{
      *this, "bf16-fetches",
      llvm::cl::desc("auto (where the device profile's copies do not share the host's cores), "
                     "always or never: host parameters fetched in bf16 for the bf16 GEMMs that "
                     "read them (plan-tiers)"),
      llvm::cl::init("auto")};
  Option<std::string> fuse{
      *this, "fuse",
      llvm::cl::desc("all (tg-fuse-attention and tg-fuse-elementwise), elementwise or none"),
      llvm::cl::init("all")};
  Option<bool> packQkv{
      *this, "pack-qkv",
      llvm::cl::desc("tg-fuse-attention's pack-qkv: attention reads q, k and v from their "
                     "projection"),
      llvm::cl::init(true)};
  Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("auto (what the budget needs), none, all, or segments such as 1-3,5"),
      llvm::cl::init("auto")};
};

/// The entry function the program of `program` exports: train_step,
/// forward or forward_backward.
llvm::StringRef entryFunction(llvm::StringRef program);

/// Checks the options' enumerations; returns an empty string when they are
/// valid, else one message naming the option.
std::string validate(const PipelineOptions &options);

/// Adds hmcc's pipeline (see the file comment) to `pm`, which runs on the
/// module.
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers the pipeline as `hmcc-pipeline` (for hmcc-opt).
void registerPipeline();

} // namespace hmcc

#endif // HMCC_PIPELINE_PIPELINE_H
