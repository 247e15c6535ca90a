//===- PlannerTest.cpp - device profiles, the cost model, the recompute DP ===//
//
// compiler/planner: the built-in profiles and the JSON form (round trip and
// the errors a bad file gets); the cost model's roofline on ops whose FLOPs
// and bytes are known; and the recompute dynamic program against an
// exhaustive search over every decision on random chains, with the
// constraints written out again here from the pass description.
//
//===----------------------------------------------------------------------===//

#include "compiler/planner/CostModel.h"
#include "compiler/planner/DeviceProfile.h"
#include "compiler/planner/PassOptions.h"
#include "compiler/planner/Recompute.h"
#include "compiler/planner/Timeline.h"
#include "hm/IR/HMDialect.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <utility>

using namespace mlir;
using namespace hmcc::planner;

namespace {

std::string writeTemp(const std::string &text) {
  llvm::SmallString<128> path;
  int fd;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("profile", "json", fd, path));
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << text;
  return std::string(path);
}

TEST(DeviceProfile, BuiltinsAndJsonRoundTrip) {
  std::string error;
  auto h200 = loadDeviceProfile("h200", error);
  ASSERT_TRUE(h200);
  // The design brief's figures.
  EXPECT_EQ(h200->flopsFor("bf16"), 7.97e14);
  EXPECT_EQ(h200->hostToDevice, 5.5e10);
  EXPECT_EQ(h200->bothDirections, 1.01e11);
  EXPECT_EQ(h200->storageRead, 1.8e9);
  EXPECT_EQ(h200->hostOptimizer.at("f32"), 4.2e9);
  ASSERT_TRUE(loadDeviceProfile("cpu", error));

  std::string path = writeTemp(toJson(*h200));
  auto back = loadDeviceProfile(path, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->peakFlops, h200->peakFlops);
  EXPECT_EQ(back->memoryBandwidth, h200->memoryBandwidth);
  EXPECT_EQ(back->storageWrite, h200->storageWrite);
  EXPECT_EQ(back->launchOverhead, h200->launchOverhead);
  EXPECT_EQ(back->efficiency, h200->efficiency);
  // A dtype without a peak of its own uses f32's; a kind without an
  // efficiency runs at peak.
  EXPECT_EQ(back->flopsFor("f64"), h200->flopsFor("f32"));
  EXPECT_EQ(back->efficiencyOf("no-such-kind"), 1.0);
  llvm::sys::fs::remove(path);
}

TEST(DeviceProfile, BadFilesAreNamed) {
  std::string error;
  EXPECT_FALSE(loadDeviceProfile("no/such/profile.json", error));
  EXPECT_NE(error.find("neither cpu, h200 nor a readable file"), std::string::npos) << error;

  auto expectError = [&](const std::string &text, const std::string &what) {
    std::string path = writeTemp(text), e;
    EXPECT_FALSE(loadDeviceProfile(path, e)) << text;
    EXPECT_NE(e.find(what), std::string::npos) << e;
    llvm::sys::fs::remove(path);
  };
  std::string good = toJson(*builtinProfile("cpu"));
  expectError("[1, 2]", "not a JSON object");
  expectError("{", "not a JSON object");
  auto replace = [&](const std::string &from, const std::string &to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  expectError(replace("\"memory_bandwidth\"", "\"memory_bandwidt\""),
              "field 'memory_bandwidth' is missing");
  expectError(replace("\"launch_overhead\": ", "\"launch_overhead\": -"),
              "field 'launch_overhead' must be a positive number");
  expectError(replace("\"host_copy\"", "\"host_cpy\""), "field 'links.host_copy' is missing");
  expectError(replace("\"matmul\": 0.6", "\"matmul\": 1.5"),
              "field 'efficiency.matmul' must be at most 1");
  expectError(replace("\"f32\": 100000000000.0", "\"bf16\": 1e11"),
              "field 'peak_flops.f32' is missing");
  expectError(replace("\"name\": \"cpu\"", "\"name\": 5"), "field 'name' must be a string");
  expectError(replace("\"shared_host\": true", "\"shared_host\": 1"),
              "field 'shared_host' must be true or false");
  expectError(replace("\"links\": {", "\"links\": [], \"x\": {"),
              "field 'links' must be an object of positive numbers");
}

/// `text` parsed with the dialects the cost model reads.
OwningOpRef<ModuleOp> parseModule(MLIRContext &context, StringRef text) {
  context.loadDialect<hmcc::tg::TGDialect, hmcc::hm::HMDialect, func::FuncDialect>();
  return parseSourceString<ModuleOp>(text, &context);
}

/// The ops of function @f of `module`, in order.
SmallVector<Operation *> opsOfF(ModuleOp module) {
  SmallVector<Operation *> ops;
  for (Operation &op : module.lookupSymbol<func::FuncOp>("f").getBody().front())
    ops.push_back(&op);
  return ops;
}

TEST(CostModel, RooflinePerOp) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseModule(context, R"mlir(
    func.func @f(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<4096xf32> {
      %m = tg.matmul %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %e = tg.exp %m : tensor<64x64xf32>
      %r = tg.reshape %e : tensor<64x64xf32> -> tensor<4096xf32>
      return %r : tensor<4096xf32>
    })mlir");
  ASSERT_TRUE(module);
  DeviceProfile p;
  p.peakFlops = {{"f32", 1e9}};
  p.memoryBandwidth = 1e9;
  p.launchOverhead = 1e-6;
  p.efficiency = {{"matmul", 0.5}, {"transcendental", 0.25}};
  SmallVector<Operation *> ops = opsOfF(*module);
  Operation *matmul = ops[0], *exp = ops[1], *reshape = ops[2];
  EXPECT_EQ(opKind(matmul), "matmul");
  EXPECT_EQ(opKind(exp), "transcendental");
  EXPECT_EQ(opKind(reshape), "data");
  // matmul: 2*64^3 FLOP at half of 1 GFLOP/s beats 3*16 KiB at half of 1 GB/s.
  EXPECT_DOUBLE_EQ(predictSeconds(matmul, p), 1e-6 + 2.0 * 64 * 64 * 64 / 0.5e9);
  // exp: 4096 FLOP against 32 KiB of traffic at a quarter of 1 GB/s.
  EXPECT_DOUBLE_EQ(predictSeconds(exp, p), 1e-6 + 2.0 * 16384 / 0.25e9);
  // A view costs the launch alone.
  EXPECT_DOUBLE_EQ(predictSeconds(reshape, p), 1e-6);
  EXPECT_DOUBLE_EQ(transferSeconds(1 << 20, 1 << 20), 1.0);
}

/// A profile with fp32 and bf16 peaks of 1 and 10 GFLOP/s, memory too fast
/// to bind and no launch cost: an op's time is its FLOPs over its peak and
/// `efficiency`.
DeviceProfile computeBound(std::map<std::string, double> efficiency) {
  DeviceProfile p;
  p.peakFlops = {{"f32", 1e9}, {"bf16", 1e10}};
  p.memoryBandwidth = 1e12;
  p.launchOverhead = 0;
  p.efficiency = std::move(efficiency);
  return p;
}

// A GEMM of bf16 operands (bf16 storage) takes the profile's matmul_bf16
// efficiency, one of fp32 operands with bf16 products its matmul one (which
// includes rounding them); without matmul_bf16, both take matmul's.
TEST(CostModel, GemmsOfBf16OperandsTakeTheirOwnEfficiency) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseModule(context, R"mlir(
    func.func @f(%a: tensor<64x64xf32>, %a16: tensor<64x64xbf16>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
      %m = tg.matmul %a, %a {tg.math = "bf16"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %m16 = tg.matmul %a16, %a16 {tg.math = "bf16"} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xf32>
      return %m, %m16 : tensor<64x64xf32>, tensor<64x64xf32>
    })mlir");
  ASSERT_TRUE(module);
  DeviceProfile p = computeBound({{"matmul", 0.25}});
  SmallVector<Operation *> ops = opsOfF(*module);
  const double flops = 2.0 * 64 * 64 * 64;
  EXPECT_DOUBLE_EQ(predictSeconds(ops[0], p), flops / 0.25e10);
  EXPECT_DOUBLE_EQ(predictSeconds(ops[1], p), flops / 0.25e10);
  p.efficiency["matmul_bf16"] = 0.5;
  EXPECT_DOUBLE_EQ(predictSeconds(ops[0], p), flops / 0.25e10);
  EXPECT_DOUBLE_EQ(predictSeconds(ops[1], p), flops / 0.5e10);
}

// Attention marked for bf16 products (tg-precision) is timed at the bf16
// peak, unmarked at the f32 one: 2 GEMMs of (64 x 64 x 32), half under the
// causal mask.
TEST(CostModel, AttentionAtItsArithmeticsPeak) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseModule(context, R"mlir(
    func.func @f(%q: tensor<1x1x64x32xf32>) -> (tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>) {
      %o, %l = tg.attention %q, %q, %q {causal, scale = 0.5 : f32} : (tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>) -> (tensor<1x1x64x32xf32>, tensor<1x1x64xf32>)
      %o2, %l2 = tg.attention %q, %q, %q {causal, scale = 0.5 : f32, tg.math = "bf16"} : (tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>) -> (tensor<1x1x64x32xf32>, tensor<1x1x64xf32>)
      return %o, %o2 : tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>
    })mlir");
  ASSERT_TRUE(module);
  DeviceProfile p = computeBound({{"attention", 0.5}});
  SmallVector<Operation *> ops = opsOfF(*module);
  const double flops = 2.0 * 2 * 64 * 32 * 64 / 2;
  EXPECT_DOUBLE_EQ(predictSeconds(ops[0], p), flops / 0.5e9);
  EXPECT_DOUBLE_EQ(predictSeconds(ops[1], p), flops / 0.5e10);
}

// A device kernel reading a value homed on the host (a gradient's sum of
// squares over a host copy) reads it over the host-to-device link; on a
// profile whose device is the host, at memory speed.
TEST(CostModel, HostReadsOverTheLink) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseModule(context, R"mlir(
    func.func @f(%g: tensor<1024xf32>) -> tensor<f64> {
      %h = tg.identity %g {hm.home = "host"} : tensor<1024xf32>
      %s = tg.sum_squares %h : tensor<1024xf32>
      return %s : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  DeviceProfile p;
  p.peakFlops = {{"f32", 1e12}};
  p.memoryBandwidth = 1e12;
  p.launchOverhead = 1e-6;
  p.hostToDevice = 1e6;
  Operation *norm = opsOfF(*module)[1];
  EXPECT_DOUBLE_EQ(predictSeconds(norm, p), 1e-6 + 4096 / 1e6);
  p.sharedHost = true;
  EXPECT_LT(predictSeconds(norm, p), 1e-5);
}

// A storage transfer (a parameter read into a host copy, a staging copy)
// takes the profile's storage latency besides its bytes at the link's rate,
// and the latency goes through a profile file (and stays out of it at 0).
TEST(Timeline, StorageTransfersPayTheirLatency) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseModule(context, R"mlir(
    tg.parameter @w : tensor<1024xf32> {hm.home = "storage", source = "w"}
    tg.state @w.m : tensor<1024xf32> {hm.home = "storage", kind = "momentum_buffer", param = @w}
    func.func @f() -> tensor<1024xf32> {
      %w = tg.param @w : tensor<1024xf32>
      %h = tg.identity %w {hm.home = "host"} : tensor<1024xf32>
      hm.stage "out" @w.m at 4096 : tensor<1024xf32>
      return %h : tensor<1024xf32>
    })mlir");
  ASSERT_TRUE(module);
  DeviceProfile p;
  p.storageRead = 1e6;
  p.storageWrite = 5e5;
  p.storageLatency = 1e-4;
  SmallVector<Operation *> ops = opsOfF(*module);
  auto [readStream, read] = streamSeconds(*ops[1], p);
  EXPECT_EQ(readStream, "storage_read");
  EXPECT_DOUBLE_EQ(read, 1e-4 + 4096 / 1e6);
  auto [writeStream, write] = streamSeconds(*ops[2], p);
  EXPECT_EQ(writeStream, "storage_write");
  EXPECT_DOUBLE_EQ(write, 1e-4 + 4096 / 5e5);

  std::string error;
  auto h200 = loadDeviceProfile("h200", error);
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->storageLatency, 0.0);
  EXPECT_EQ(toJson(*h200).find("storage_latency"), std::string::npos);
  h200->storageLatency = 3e-5;
  std::string path = writeTemp(toJson(*h200));
  auto back = loadDeviceProfile(path, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->storageLatency, 3e-5);
  llvm::sys::fs::remove(path);
}

// A host parameter's rounding to bf16 for its fetches (plan-tiers'
// bf16-fetches) runs on the host optimizer's threads as a host copy of 3
// bytes an element (4 read, 2 written); its fetch moves the bf16 bytes, and
// a rounding on the device is compute.
TEST(Timeline, HostRoundingIsAHostCopy) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseModule(context, R"mlir(
    tg.parameter @w : tensor<1024xf32> {hm.home = "host", source = "w"}
    func.func @f() -> tensor<1024xbf16> {
      %w = tg.param @w : tensor<1024xf32>
      %r = tg.cast %w {hm.home = "host", nearest_even} : tensor<1024xf32> to tensor<1024xbf16>
      %d = tg.identity %r : tensor<1024xbf16>
      %e = tg.cast %d : tensor<1024xbf16> to tensor<1024xf32>
      %b = tg.cast %e {nearest_even} : tensor<1024xf32> to tensor<1024xbf16>
      return %b : tensor<1024xbf16>
    })mlir");
  ASSERT_TRUE(module);
  DeviceProfile p = *builtinProfile("h200");
  p.hostCopy = 1e9;
  SmallVector<Operation *> ops = opsOfF(*module);
  EXPECT_TRUE(hmcc::hm::isHostRounding(ops[1]));
  auto [roundStream, round] = streamSeconds(*ops[1], p);
  EXPECT_EQ(roundStream, "host_optimizer");
  EXPECT_DOUBLE_EQ(round, 3 * 1024 / 1e9);
  auto [fetchStream, fetch] = streamSeconds(*ops[2], p);
  EXPECT_EQ(fetchStream, "host_to_device");
  EXPECT_DOUBLE_EQ(fetch, 2 * 1024 / p.hostToDevice);
  EXPECT_FALSE(hmcc::hm::isHostRounding(ops[4]));
  EXPECT_EQ(streamSeconds(*ops[4], p).first, "compute");
}

// The galloping search of plan-tiers and plan-quantize-device: for every
// answer and every guess (past the end too), the fewest count that meets a
// monotone predicate, each count asked once at most; a guess at the answer or next to it takes
// at most four questions, a bisection of 1000 would take ten.
TEST(PlanTiers, FewestFromAnyGuess) {
  for (size_t total : {1u, 2u, 7u, 100u, 1000u})
    for (size_t answer = 0; answer <= total; ++answer)
      for (size_t guess = 0; guess <= total + 2; guess += (total > 20 ? 37 : 1)) {
        std::set<size_t> asked;
        bool twice = false;
        size_t found = fewestFrom(guess, total, [&](size_t n) {
          EXPECT_LE(n, total);
          twice |= !asked.insert(n).second;
          return n >= answer;
        });
        EXPECT_EQ(found, answer) << total << " " << guess;
        EXPECT_FALSE(twice) << total << " " << answer << " " << guess;
      }
  for (size_t guess : {499u, 500u, 501u}) {
    int asked = 0;
    EXPECT_EQ(fewestFrom(guess, 1000, [&](size_t n) { return ++asked, n >= 500; }), 500u);
    EXPECT_LE(asked, 4) << guess;
  }
}

// plan-tiers' candidates: largest first, unless a parameter's slack (compute
// before its first reader plus after its gradient) is shorter than its host
// round trip. @emb is read first and differentiated last: 2 s of slack
// (the last two updates) against 10.24 s of copies on slow links, so @w2
// comes first: 6 s against 5.12 s, 2 s of it before its first reader (its
// tg.param, like every parameter's as imported, comes first); on fast
// links both overlap and the larger @emb leads.
TEST(PlanTiers, HostCandidatesBySlack) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseModule(context, R"mlir(
    tg.parameter @emb : tensor<8x16xf32> {source = "emb"}
    tg.parameter @w2 : tensor<16x4xf32> {source = "w2"}
    func.func @f(%x: tensor<4x8xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
      %e = tg.param @emb : tensor<8x16xf32>
      %w = tg.param @w2 : tensor<16x4xf32>
      %h = tg.matmul %x, %e : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %t = tg.tanh %h : tensor<4x16xf32>
      %y = tg.matmul %t, %w : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
      %gw = tg.matmul %t, %y {transA} : (tensor<4x16xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
      %dt = tg.matmul %y, %w {transB} : (tensor<4x4xf32>, tensor<16x4xf32>) -> tensor<4x16xf32>
      %ge = tg.matmul %x, %dt {transA} : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
      tg.sgd_update @w2, %gw, %lr, %step {momentum = 0.0 : f32, weight_decay = 0.0 : f32} : tensor<16x4xf32>
      tg.sgd_update @emb, %ge, %lr, %step {momentum = 0.0 : f32, weight_decay = 0.0 : f32} : tensor<8x16xf32>
      return
    })mlir");
  ASSERT_TRUE(module);
  auto fn = module->lookupSymbol<func::FuncOp>("f");
  DeviceProfile p;
  p.peakFlops = {{"f32", 1e12}};
  p.memoryBandwidth = 1e12;
  p.launchOverhead = 1.0; // each op 1 s: slack counts ops
  p.hostOptimizer = {{"f32", 1e9}};
  p.hostToDevice = p.deviceToHost = 100;
  EXPECT_EQ(hostCandidates(*module, fn, p), (SmallVector<StringRef>{"w2", "emb"}));
  p.hostToDevice = p.deviceToHost = 1e9;
  EXPECT_EQ(hostCandidates(*module, fn, p), (SmallVector<StringRef>{"emb", "w2"}));
}

//===----------------------------------------------------------------------===//
// The dynamic program against every decision.
//===----------------------------------------------------------------------===//

/// What `d` does under `budget`, by the rules of the pass description,
/// evaluated segment by segment: whether it keeps the bytes live within
/// the budget at every op, the bytes its segments free by the end, and its
/// slack: the least bytes to spare at any stage (the tail aside).
struct Outcome {
  bool fits;
  int64_t freed, slack;
};
Outcome evaluate(const Chain &chain, const Decision &d, int64_t budget) {
  unsigned n = chain.stages.size();
  std::vector<int> segmentOf(n + 1,
                             0); // 0: kept; else the segment's first stage
  for (auto [s, t] : d.recomputed)
    for (unsigned k = s; k <= t; ++k)
      segmentOf[k] = int(s);
  int64_t freed = 0; // bytes freed by segments already passed
  int64_t slack = std::numeric_limits<int64_t>::max();
  auto within = [&](int64_t live) { slack = std::min(slack, budget - live); };
  for (unsigned s = 1; s <= n;) {
    const Stage &first = chain.stages[s - 1];
    if (!segmentOf[s]) {
      // Kept; light, what its light ops save is freed after its forward
      // and made again for its backward, where it was live anyway.
      within(first.forwardPeak - freed);
      within(first.backwardPeak - freed);
      if (d.light.count(s))
        freed += first.lightBytes;
      ++s;
      continue;
    }
    unsigned t = s;
    while (t < n && segmentOf[t + 1] == int(s))
      ++t;
    // The cut before the segment stays on the device until the segment is
    // recomputed: bytes the unplanned program frees when the backward does
    // not read it. Offloaded, it leaves the device after stage s's forward
    // (freeing its bytes when the backward reads it) and is back for the
    // recompute and the backward.
    int64_t extra = first.inputReadByBackward ? 0 : first.inputBytes;
    int64_t held = extra;
    if (d.offloaded.count(s))
      held = first.inputReadByBackward ? -first.inputBytes : 0;
    int64_t saved = 0, growth = 0;
    for (unsigned j = s; j <= t; ++j) {
      const Stage &st = chain.stages[j - 1];
      // While stage j runs forward, stages s..j-1 have freed what they
      // saved, and the cuts before j-1 are freed too (j-1's is j's input);
      // during stage s's forward its input is read, wherever it goes later.
      within(st.forwardPeak - freed - saved + (j > s ? held : 0));
      within(st.backwardPeak - freed + extra);
      saved += st.savedBytes;
      if (j > s && chain.stages[j - 2].outputBackwardStart != Stage::kNone)
        saved += chain.stages[j - 2].outputBytes;
      growth = std::max(growth, st.forwardGrowth);
    }
    const Stage &last = chain.stages[t - 1];
    if (last.backwardStart != Stage::kNone)
      within(last.liveAtBackward - freed + extra + growth);
    freed += saved - held;
    s = t + 1;
  }
  return {slack >= 0 && chain.tailPeak - freed <= budget, freed, slack};
}

/// The recompute and transfer seconds of `d`.
double secondsOf(const Chain &chain, const Decision &d) {
  double seconds = 0;
  for (auto [s, t] : d.recomputed) {
    // The last stage's ops that make only its output cut are not redone.
    for (unsigned k = s; k <= t; ++k)
      seconds += chain.stages[k - 1].forwardSeconds;
    seconds -= chain.stages[t - 1].outputOnlySeconds;
    if (d.offloaded.count(s))
      seconds += chain.stages[s - 1].inputTransferSeconds;
  }
  for (unsigned n : d.light)
    seconds += chain.stages[n - 1].lightSeconds;
  return seconds;
}

/// Every decision on n stages: each boundary between stages splits or not,
/// each resulting group is kept (as single stages; with `light`, kept light too) or
/// recomputed.
std::vector<Decision> everyDecision(unsigned n, bool light) {
  std::vector<Decision> out;
  for (unsigned cuts = 0; cuts < (1u << (n - 1)); ++cuts) {
    std::vector<std::pair<unsigned, unsigned>> groups;
    unsigned start = 1;
    for (unsigned k = 1; k <= n; ++k)
      if (k == n || (cuts >> (k - 1) & 1)) {
        groups.push_back({start, k});
        start = k + 1;
      }
    // Each group kept, recomputed, (past the first stage) recomputed with
    // its input cut offloaded, or kept light.
    const unsigned choices = light ? 4 : 3;
    unsigned options = 1;
    for (unsigned g = 0; g < groups.size(); ++g)
      options *= choices;
    for (unsigned pick = 0; pick < options; ++pick) {
      Decision d;
      bool skip = false;
      for (unsigned g = 0, code = pick; g < groups.size(); ++g, code /= choices) {
        unsigned choice = code % choices;
        if (choice == 0 || choice == 3)
          skip |= groups[g].second > groups[g].first; // kept: its stages one by one
        else
          d.recomputed.push_back(groups[g]);
        if (choice == 3)
          d.light.insert(groups[g].first);
        if (choice == 2) {
          skip |= groups[g].first == 1; // no cut before the first stage
          d.offloaded.insert(groups[g].first);
        }
      }
      if (!skip)
        out.push_back(d);
    }
  }
  return out;
}

/// How often solve, checked against every decision on 300 random chains
/// of up to 7 stages (with `alike`, all like the first; with `light`, that
/// may be kept light) at four budgets,
/// was compared, found nothing, and chose by slack alone (the fastest that
/// free the most differ in slack). Times are whole multiples of `unit`
/// seconds, at most `most` of them per stage: sums of them are exact, so
/// equally fast decisions are equal to the bit.
struct SolveCounts {
  int compared = 0, infeasible = 0, tied = 0;
  int light = 0; ///< decisions found with a stage kept light
};
SolveCounts checkSolveAgainstEveryDecision(unsigned seed, double unit, int most, bool alike,
                                           bool light) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  SolveCounts counts;
  for (int trial = 0; trial < 300; ++trial) {
    Chain chain;
    unsigned n = uniform(1, 7);
    for (unsigned k = 0; k < n; ++k) {
      if (alike && k > 0) { // the stages repeat the first
        Stage s = chain.stages[0];
        s.inputBytes = chain.stages[k - 1].outputBytes;
        s.inputReadByBackward = chain.stages[k - 1].outputBackwardStart != Stage::kNone;
        s.number = k + 1;
        if (k + 1 == n) {
          s.outputBytes = 0;
          s.outputBackwardStart = Stage::kNone;
        }
        chain.stages.push_back(s);
        continue;
      }
      Stage s;
      s.number = k + 1;
      s.savedBytes = 64 * uniform(0, 20);
      s.outputBytes = k + 1 < n ? 64 * uniform(1, 6) : 0;
      s.outputBackwardStart = k + 1 < n && uniform(0, 1) ? 100 + k : Stage::kNone;
      s.inputBytes = k ? chain.stages[k - 1].outputBytes : 0;
      s.inputReadByBackward = k && chain.stages[k - 1].outputBackwardStart != Stage::kNone;
      s.backwardStart = s.savedBytes || uniform(0, 3) ? 200 - k : Stage::kNone;
      int forwardUnits = uniform(1, most);
      s.forwardSeconds = forwardUnits * unit;
      s.outputOnlySeconds = uniform(0, forwardUnits - 1) * unit;
      s.inputTransferSeconds = uniform(0, most * 2 / 5) * unit;
      if (light) {
        s.lightBytes = std::min<int64_t>(s.savedBytes, 64 * uniform(0, 10));
        s.lightSeconds = uniform(1, std::max(1, most / 4)) * unit;
      }
      s.forwardPeak = 64 * uniform(10, 60);
      s.forwardGrowth = 64 * uniform(0, 10);
      s.backwardPeak = 64 * uniform(10, 60);
      s.liveAtBackward = 64 * uniform(10, 60);
      chain.stages.push_back(s);
    }
    chain.tailPeak = 64 * uniform(10, 60);
    std::vector<Decision> all = everyDecision(n, light);
    for (int64_t budget : {64 * 20, 64 * 35, 64 * 50, 64 * 70}) {
      // The least time, and what the decisions that take it free by the
      // end and their slack.
      double best = INFINITY;
      std::set<std::pair<int64_t, int64_t>> fastest;
      for (Decision &d : all) {
        Outcome o = evaluate(chain, d, budget);
        if (!o.fits)
          continue;
        double seconds = secondsOf(chain, d);
        if (seconds < best)
          fastest.clear();
        if (seconds <= best)
          fastest.insert({o.freed, o.slack});
        best = std::min(best, seconds);
      }
      auto found = solve(chain, budget, /*offload=*/true);
      EXPECT_EQ(found.has_value(), std::isfinite(best))
          << "trial " << trial << " budget " << budget;
      if (!found) {
        ++counts.infeasible;
        continue;
      }
      // The fastest, and among those the one that frees the most, then the
      // one with the most slack.
      Outcome o = evaluate(chain, *found, budget);
      EXPECT_TRUE(o.fits) << "trial " << trial;
      EXPECT_EQ(secondsOf(chain, *found), found->seconds);
      EXPECT_EQ(found->seconds, best) << "trial " << trial << " budget " << budget;
      EXPECT_EQ(std::make_pair(o.freed, o.slack), *fastest.rbegin())
          << "trial " << trial << " budget " << budget;
      ++counts.compared;
      counts.light += !found->light.empty();
      // Equally fast and freeing as much, but with less slack.
      auto most = *fastest.rbegin();
      counts.tied += fastest.size() > 1 && std::prev(fastest.end(), 2)->first == most.first;
    }
  }
  return counts;
}

TEST(RecomputeSolve, EqualsExhaustiveSearch) {
  SolveCounts counts = checkSolveAgainstEveryDecision(12345, 1.0 / 1024, 100, /*alike=*/false,
                                                      /*light=*/false);
  // Both outcomes occur, so the comparison says something.
  EXPECT_GT(counts.compared, 300);
  EXPECT_GT(counts.infeasible, 50);
}

TEST(RecomputeSolve, WithLightStagesEqualsExhaustiveSearch) {
  // Stages that can also be kept light: their cheap saved values made
  // again for the backward.
  SolveCounts counts = checkSolveAgainstEveryDecision(777, 1.0 / 1024, 100, /*alike=*/false,
                                                      /*light=*/true);
  EXPECT_GT(counts.compared, 300);
  EXPECT_GT(counts.infeasible, 50);
  EXPECT_GT(counts.light, 50);
}

TEST(RecomputeSolve, AmongEquallyFastFreesMostThenHasMostSlack) {
  // Stages alike, as a model's layers are: which of them to recompute
  // makes no difference to the time or the bytes freed, only to the slack.
  SolveCounts counts = checkSolveAgainstEveryDecision(3, 1.0 / 8, 1, /*alike=*/true, /*light=*/false);
  EXPECT_GE(counts.tied, 10);
}

TEST(RecomputeParse, Segments) {
  std::string error;
  auto d = parseDecision("1-3,5", 6, error);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->recomputed, (std::vector<std::pair<unsigned, unsigned>>{{1, 3}, {5, 5}}));
  EXPECT_EQ(parseDecision("all", 3, error)->recomputed.size(), 3u);
  EXPECT_TRUE(parseDecision("none", 3, error)->recomputed.empty());
  auto offloaded = parseDecision("1-2,4-5:offload", 6, error);
  ASSERT_TRUE(offloaded) << error;
  EXPECT_EQ(offloaded->offloaded, (std::set<unsigned>{4}));
  EXPECT_FALSE(parseDecision("1-2:offload", 6, error));
  EXPECT_NE(error.find("has no cut to offload"), std::string::npos) << error;
  auto light = parseDecision("1-2,3:light,5:light", 6, error);
  ASSERT_TRUE(light) << error;
  EXPECT_EQ(light->recomputed, (std::vector<std::pair<unsigned, unsigned>>{{1, 2}}));
  EXPECT_EQ(light->light, (std::set<unsigned>{3, 5}));
  auto stored = parseDecision("1-2,3:store,4:light,6:store", 6, error);
  ASSERT_TRUE(stored) << error;
  EXPECT_EQ(stored->stored, (std::set<unsigned>{3, 6}));
  EXPECT_EQ(stored->light, (std::set<unsigned>{4}));
  for (const char *bad : {"2:store,1", "7:store", "1-2:store", "3:store:light"}) {
    EXPECT_FALSE(parseDecision(bad, 6, error)) << bad;
    EXPECT_NE(error.find("not a"), std::string::npos) << error;
  }
  for (const char *bad : {"2:light,1", "1-3,2:light", "7:light", "x:light", "1-2:light"}) {
    EXPECT_FALSE(parseDecision(bad, 6, error)) << bad;
    EXPECT_NE(error.find("not a"), std::string::npos) << error;
  }
  for (const char *bad : {"0-2", "2-1", "1-7", "3,2", "1-2,2", "x", "1-"}) {
    EXPECT_FALSE(parseDecision(bad, 6, error)) << bad;
    EXPECT_NE(error.find("is not a range of stages"), std::string::npos) << error;
  }
}

} // namespace
