//===- Pipeline.cpp - hmcc's pass pipeline --------------------------------===//
#include "compiler/pipeline/Pipeline.h"
#include "compiler/conversion/Passes.h"
#include "compiler/planner/Passes.h"
#include "hm/Transforms/Passes.h"
#include "tg/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace hmcc {

StringRef entryFunction(StringRef program) {
  if (program == "forward")
    return "forward";
  if (program == "gradients")
    return "forward_backward";
  return "train_step";
}

std::string validate(const PipelineOptions &o) {
  if (o.program != "train" && o.program != "forward" && o.program != "gradients")
    return "program '" + o.program + "' is unknown: use train, forward or gradients";
  if (o.until != "training" && o.until != "schedule")
    return "until '" + o.until + "' is unknown: use training or schedule";
  if (o.optimizer != "sgd" && o.optimizer != "adamw" && o.optimizer != "adamw8bit")
    return "optimizer '" + o.optimizer + "' is unknown: use sgd, adamw or adamw8bit";
  if (o.lrSchedule != "constant" && o.lrSchedule != "cosine")
    return "lr-schedule '" + o.lrSchedule + "' is unknown: use constant or cosine";
  if (o.fuse != "all" && o.fuse != "elementwise" && o.fuse != "none")
    return "fuse '" + o.fuse + "' is unknown: use all, elementwise or none";
  if (o.quantizeStates != "never" && o.quantizeStates != "auto" && o.quantizeStates != "always")
    return "quantize-states '" + o.quantizeStates + "' is unknown: use never, auto or always";
  if (o.precision != "fp32" && o.precision != "bf16")
    return "precision '" + o.precision + "' is unknown: use fp32 or bf16";
  if (o.bf16Storage && o.precision != "bf16")
    return "bf16-storage needs precision bf16";
  if (o.optimizer == "sgd" && o.quantizeStates != "never")
    return "quantize-states " + o.quantizeStates +
           ": only AdamW's moments can be 8-bit (the optimizer is sgd)";
  return "";
}

void buildPipeline(OpPassManager &pm, const PipelineOptions &o) {
  bool train = o.program == "train", forward = o.program == "forward";
  if (o.trainingInfo && train) {
    TGTrainingInfoOptions t;
    t.lr = o.lr;
    pm.addPass(createTGTrainingInfo(t));
  }
  pm.addPass(createTGFoldTransposes());
  if (o.fuse == "all") {
    TGFuseAttentionOptions t;
    t.packQkv = o.packQkv;
    pm.addPass(createTGFuseAttention(t));
  }
  pm.addPass(createTGExpandGradients());
  if (!forward && !o.trainingInfo)
    pm.addPass(createTGAutodiff());
  if (train && !o.trainingInfo) {
    TGOptimizerOptions t;
    // --quantize-states always is 8-bit AdamW from the start.
    t.optimizer = o.optimizer == "adamw" && o.quantizeStates == "always" ? std::string("adamw8bit")
                                                                         : std::string(o.optimizer);
    t.lr = o.lr;
    t.beta1 = o.beta1;
    t.beta2 = o.beta2;
    t.eps = o.eps;
    t.weightDecay = o.weightDecay;
    t.momentum = o.momentum;
    t.clipNorm = o.clipNorm;
    pm.addPass(createTGOptimizer(t));
  }
  TGLrScheduleOptions lrSchedule;
  lrSchedule.kind = o.lrSchedule;
  lrSchedule.warmupSteps = o.warmupSteps;
  lrSchedule.decaySteps = o.decaySteps;
  lrSchedule.minLr = o.minLr;
  pm.addPass(createTGLrSchedule(lrSchedule));
  if (o.until == "training")
    return;

  // Where constants live, before any placement (the planner's trials too).
  HMSetConstantsOptions constants;
  constants.placement = o.constantsInArena ? "arena" : "static";
  pm.addPass(createHMSetConstants(constants));
  pm.addPass(createTGLegalizeCpuTypes());
  TGPrecisionOptions precision;
  precision.precision = o.precision;
  precision.bf16Storage = o.bf16Storage;
  pm.addPass(createTGPrecision(precision));
  TGSelectEntriesOptions entries;
  entries.functions = {entryFunction(o.program).str()};
  pm.addPass(createTGSelectEntries(entries));
  pm.addPass(createTGInputRoles());
  if (o.fuse != "none")
    pm.addPass(createTGFuseElementwise());
  pm.addPass(createTGFoldRounding());
  PlanTiersOptions tiers;
  tiers.vram = o.vram;
  tiers.deviceProfile = o.deviceProfile;
  tiers.chunkSize = o.chunkSize;
  tiers.force = o.tiers == "auto" ? std::string() : std::string(o.tiers);
  tiers.deviceUpdates = o.deviceUpdates;
  tiers.bf16Fetches = o.bf16Fetches;
  PlanQuantizeDeviceOptions device;
  device.mode = o.quantizeStates;
  device.vram = o.vram;
  device.deviceProfile = o.deviceProfile;
  device.recompute = o.recompute;
  pm.addPass(createPlanUpdates());
  pm.addPass(createPlanQuantizeDevice(device));
  pm.addPass(createPlanTiers(tiers));
  PlanRecomputeOptions recompute;
  recompute.vram = o.vram;
  recompute.deviceProfile = o.deviceProfile;
  recompute.force = o.recompute == "auto" ? std::string() : std::string(o.recompute);
  recompute.vramReserve = o.vramReserve;
  pm.addPass(createPlanRecompute(recompute));
  PlanOverlapOptions overlap;
  overlap.vram = o.vram;
  overlap.deviceProfile = o.deviceProfile;
  pm.addPass(createPlanOverlap(overlap));
  PlanQuantizeOptions quantize;
  quantize.mode = o.quantizeStates;
  quantize.ram = o.ram;
  pm.addPass(createPlanQuantize(quantize));
  PlanStorageOptions storage;
  storage.ram = o.ram;
  storage.nvme = o.nvme;
  storage.chunkSize = o.chunkSize;
  storage.deviceProfile = o.deviceProfile;
  pm.addPass(createPlanStorage(storage));
  PlanQuantizeTrafficOptions traffic;
  traffic.mode = o.quantizeStates;
  traffic.deviceProfile = o.deviceProfile;
  pm.addPass(createPlanQuantizeTraffic(traffic));
  pm.addPass(createHMPlaceBuffers());
  PlanStagingOptions staging;
  staging.chunkSize = o.chunkSize;
  pm.addPass(createPlanStaging(staging));
  pm.addPass(createPlanStreams());
  pm.addPass(createHMVerifyMemory());
  pm.addPass(createHMVerifyStreams());
  HMCheckBudgetOptions budget;
  budget.vram = o.vram;
  budget.vramReserve = o.vramReserve;
  budget.ram = o.ram;
  budget.nvme = o.nvme;
  pm.addPass(createHMCheckBudget(budget));
}

void registerPipeline() {
  registerPassPipeline(
      "hmcc-pipeline",
      "hmcc's compilation from the imported module to the scheduled program (what hmcc "
      "--emit=schedule prints; until=training stops at the training graph, hmcc --emit=mlir)",
      [](OpPassManager &pm, StringRef text, function_ref<LogicalResult(const Twine &)> fail) {
        PipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (std::string message = validate(options); !message.empty())
          return fail("hmcc-pipeline: " + message);
        buildPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) { handler(PipelineOptions()); });
}

} // namespace hmcc
