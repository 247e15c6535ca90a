//===- ScheduleJson.cpp - the scheduled program as JSON -------------------===//
//
// `hmcc --dump-schedule=FILE` writes the scheduled program (after
// hm-place-buffers) for people and tools to inspect: the arena, every
// persistent tensor, and per entry function every op in execution order
// with the bytes it reads and writes and the arena bytes in use once it has
// run (persistent tensors included; values it frees are freed after that).
// The format is documented in docs/schedule-format.md.
//
//===----------------------------------------------------------------------===//

#include "hm/Export/ScheduleJson.h"
#include "hm/Analysis/Liveness.h"
#include "hm/Analysis/Memory.h"
#include "hm/IR/HMOps.h"
#include "tg/IR/TGOps.h"
#include "tg/IR/TGShapes.h"

#include "mlir/Support/DebugStringHelper.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace hmcc::tg;

namespace hmcc {
namespace {

/// Where a value's bytes are, as the dump names them.
struct Place {
  std::string tensor; ///< "param:NAME", "state:NAME", "staging:NAME", "input:NAME", "%N", "const"
  int64_t offset = -1, bytes = 0;
  int tier = 0; ///< the arena of the offset: 0 device, 1 host, 2 storage
};

class Dumper {
public:
  Dumper(ModuleOp module, llvm::json::OStream &j, const hm::Timeline *timeline)
      : module(module), j(j), timeline(timeline) {}

  void run() {
    auto arena = hm::arenaOfTier(module, "device");
    j.object([&] {
      j.attribute("format", "hmcc-schedule-1");
      j.attribute("model", module.getSymName() ? module.getSymName()->str() : "model");
      j.attributeObject("arena", [&] {
        j.attribute("name", arena.getSymName());
        j.attribute("tier", arena.getTier());
        j.attribute("bytes", arena.getBytes());
      });
      if (auto host = hm::arenaOfTier(module, "host"))
        j.attributeObject("host_arena", [&] {
          j.attribute("name", host.getSymName());
          j.attribute("bytes", host.getBytes());
        });
      if (auto storage = hm::arenaOfTier(module, "storage"))
        j.attributeObject("storage_arena", [&] {
          j.attribute("name", storage.getSymName());
          j.attribute("bytes", storage.getBytes());
        });
      j.attributeArray("persistent", [&] {
        for (const hm::PersistentTensor &t : hm::persistentTensors(module))
          persistent(t);
      });
      j.attributeArray("functions", [&] {
        for (auto fn : module.getOps<func::FuncOp>())
          function(fn);
      });
      if (auto plan = module->getAttrOfType<DictionaryAttr>(hm::kRecomputeAttr))
        j.attributeObject("recompute", [&] { recompute(plan); });
      if (timeline)
        j.attributeObject("timeline", [&] { writeTimeline(); });
    });
  }

  /// The predicted step, its lower bound and the loads behind it.
  void writeTimeline() {
    j.attribute("profile", timeline->profile);
    j.attribute("predicted_step_seconds", timeline->step);
    j.attribute("lower_bound_seconds", timeline->lowerBound);
    j.attribute("binding", timeline->binding);
    j.attributeObject("loads", [&] {
      for (auto &[resource, seconds] : timeline->loads)
        j.attribute(resource, seconds);
    });
    j.attributeObject("link_bytes", [&] {
      for (auto &[link, bytes] : timeline->linkBytes)
        j.attribute(link, bytes);
    });
    j.attributeObject("compute_waits", [&] {
      for (auto &[stream, seconds] : timeline->computeWaits)
        j.attribute(stream, seconds);
    });
    j.attribute("after_compute_seconds", timeline->afterCompute);
  }

  /// The chain plan-recompute saw and its decision.
  void recompute(DictionaryAttr plan) {
    if (auto budget = plan.getAs<IntegerAttr>("budget"))
      j.attribute("budget", budget.getInt());
    j.attribute("forced", plan.getAs<BoolAttr>("forced").getValue());
    j.attribute("recompute_seconds",
                plan.getAs<FloatAttr>("recompute_seconds").getValueAsDouble());
    if (auto copies = plan.getAs<FloatAttr>("copy_seconds"))
      j.attribute("copy_seconds", copies.getValueAsDouble());
    j.attributeArray("stages", [&] {
      for (Attribute a : plan.getAs<ArrayAttr>("stages")) {
        auto s = cast<DictionaryAttr>(a);
        j.object([&] {
          j.attribute("ops", s.getAs<IntegerAttr>("ops").getInt());
          j.attribute("forward_seconds", s.getAs<FloatAttr>("forward_seconds").getValueAsDouble());
          j.attribute("backward_seconds",
                      s.getAs<FloatAttr>("backward_seconds").getValueAsDouble());
          j.attribute("cut_bytes", s.getAs<IntegerAttr>("cut_bytes").getInt());
          j.attribute("saved_bytes", s.getAs<IntegerAttr>("saved_bytes").getInt());
          j.attribute("light_bytes", s.getAs<IntegerAttr>("light_bytes").getInt());
          j.attribute("decision", s.getAs<StringAttr>("decision").getValue());
          j.attribute("offload_input", s.getAs<BoolAttr>("offload_input").getValue());
        });
      }
    });
  }

private:
  ModuleOp module;
  llvm::json::OStream &j;
  int64_t persistentBytes = 0;
  const hm::Timeline *timeline;

  void persistent(const hm::PersistentTensor &t) {
    int64_t bytes = tg::tensorBytes(t.type);
    if (t.tier == 0)
      persistentBytes += hm::alignedSize(bytes);
    j.object([&] {
      j.attribute("kind", t.kind);
      j.attribute("name", t.name);
      j.attribute("tier", t.tier == 2 ? "storage" : t.tier == 1 ? "host" : "device");
      j.attribute("offset", t.offset);
      j.attribute("bytes", bytes);
      j.attribute("type", debugString(t.type));
      if (!t.whole.empty())
        j.attribute("whole", t.whole);
    });
  }

  void function(func::FuncOp fn) {
    Block &body = fn.getBody().front();
    DenseMap<Value, Place> places;
    unsigned next = 0;
    StringRef deviceArena = hm::arenaOfTier(module, "device").getSymName();
    auto symbolPlace = [&](StringRef kind, StringRef name) {
      Operation *decl = module.lookupSymbol(name);
      auto type = cast<RankedTensorType>(cast<TypeAttr>(decl->getAttr("type")).getValue());
      return Place{(kind + ":" + name).str(),
                   decl->getAttrOfType<IntegerAttr>(hm::kOffsetAttr).getInt(),
                   tg::tensorBytes(type), hm::homeTier(decl)};
    };
    for (unsigned k = 0; k < fn.getNumArguments(); ++k)
      if (auto name = fn.getArgAttrOfType<StringAttr>(k, "tg.input"))
        places[body.getArgument(k)] =
            Place{"input:" + name.str(), fn.getArgAttrOfType<IntegerAttr>(k, hm::kOffsetAttr).getInt(),
                  tg::tensorBytes(body.getArgument(k).getType())};
    for (auto place : body.getOps<hm::PlaceOp>())
      places[place.getValue()] = Place{"%" + std::to_string(next++), place.getByteOffset(),
                                       tg::tensorBytes(place.getValue().getType()),
                                       place.getArena() != deviceArena ? 1 : 0};
    auto placeOf = [&](Value v) {
      if (auto it = places.find(v); it != places.end())
        return it->second;
      if (auto p = v.getDefiningOp<ParamOp>())
        return symbolPlace("param", p.getName());
      if (auto arg = dyn_cast<BlockArgument>(v))
        if (auto role = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tg.role"))
          return Place{role.str(), -1, 0}; // passed by value
      return Place{"const", -1, 0};        // static data of the program
    };
    auto writePlace = [&](const Place &p) {
      j.object([&] {
        j.attribute("tensor", p.tensor);
        if (p.offset >= 0) {
          j.attribute("offset", p.offset);
          j.attribute("bytes", p.bytes);
          if (p.tier)
            j.attribute("tier", p.tier == 2 ? "storage" : "host");
        }
      });
    };

    hm::FunctionLiveness liveness = hm::replayFunction(fn);
    j.object([&] {
      j.attribute("name", fn.getSymName());
      j.attributeArray("ops", [&] {
        unsigned index = 0;
        for (const hm::LiveStep &step : liveness.steps) {
          Operation &op = *step.op;
          if (!runsInProgram(op))
            continue;
          j.object([&] {
            j.attribute("index", index++);
            j.attribute("op", op.getName().getStringRef());
            if (auto name = dyn_cast<NameLoc>(op.getLoc()))
              j.attribute("node", name.getName().getValue());
            if (tg::hasBf16Math(&op)) // bf16 products (tg-precision)
              j.attribute("math", "bf16");
            // A staging copy in the arena a tier up from the tensor's
            // home (the host's for storage, the device's for the host).
            // With hm.chunk, only the chunk's slice of it.
            auto slice = [&](StringRef name) {
              return hm::stagedSlice(&op, module.lookupSymbol(name));
            };
            auto staging = [&](StringRef name, int64_t offset) {
              return Place{("staging:" + name).str(), offset, slice(name).bytes,
                           hm::stagingTier(module.lookupSymbol(name))};
            };
            auto stored = [&](StringRef name) {
              Place p = symbolPlace(
                  isa<tg::ParameterOp>(module.lookupSymbol(name)) ? "param" : "state", name);
              hm::Slice s = slice(name);
              p.offset += s.begin;
              p.bytes = s.bytes;
              return p;
            };
            if (auto chunk = hm::chunkOf(&op))
              j.attributeArray("chunk", [&] {
                j.value(chunk->first);
                j.value(chunk->second);
              });
            auto stage = dyn_cast<hm::StageOp>(op);
            auto staged = op.getAttrOfType<DictionaryAttr>(hm::kStagedAttr);
            j.attributeArray("reads", [&] {
              for (Value v : op.getOperands())
                writePlace(placeOf(v));
              if (stage)
                writePlace(stage.getDirection() == "in"
                               ? stored(stage.getState())
                               : staging(stage.getState(), stage.getOffsetAttr().getInt()));
            });
            j.attributeArray("writes", [&] {
              for (Value r : op.getResults())
                writePlace(placeOf(r));
              if (stage) {
                writePlace(stage.getDirection() == "in"
                               ? staging(stage.getState(), stage.getOffsetAttr().getInt())
                               : stored(stage.getState()));
                return;
              }
              // In-place updates write the parameters and states they name
              // (a stored state: its staging copy).
              for (NamedAttribute a : op.getAttrs())
                if (auto ref = dyn_cast<FlatSymbolRefAttr>(a.getValue())) {
                  Operation *decl = module.lookupSymbol(ref.getValue());
                  if (isa_and_nonnull<ParameterOp>(decl))
                    writePlace(symbolPlace("param", ref.getValue()));
                  else if (auto at = staged ? staged.getAs<IntegerAttr>(ref.getValue())
                                            : IntegerAttr())
                    writePlace(staging(ref.getValue(), at.getInt()));
                  else if (isa_and_nonnull<StateOp>(decl))
                    writePlace(symbolPlace("state", ref.getValue()));
                }
            });
            if (auto event = op.getAttrOfType<IntegerAttr>(hm::kEventAttr))
              j.attribute("event", event.getInt());
            if (auto waits = op.getAttrOfType<DenseI64ArrayAttr>(hm::kWaitAttr))
              j.attributeArray("wait", [&] {
                for (int64_t e : waits.asArrayRef())
                  j.value(e);
              });
            j.attribute("live_bytes", persistentBytes + step.liveBytes);
            if (timeline)
              if (auto it = timeline->ops.find(&op); it != timeline->ops.end()) {
                j.attribute("stream", it->second.stream);
                j.attribute("start", it->second.start);
                j.attribute("end", it->second.end);
              }
            OpCost cost = scheduledCost(op);
            j.attribute("flops", cost.flops);
            j.attribute("traffic_bytes", cost.bytes);
          });
        }
      });
      j.attribute("peak_bytes", persistentBytes + liveness.peakBytes);
      j.attribute("activation_peak_bytes", liveness.peakBytes);
      OpCost total = functionCost(fn);
      j.attribute("flops", total.flops);
      j.attribute("traffic_bytes", total.bytes);
    });
  }
};

} // namespace

LogicalResult dumpScheduleJson(ModuleOp module, llvm::raw_ostream &os,
                               const hm::Timeline *timeline) {
  if (module.getOps<hm::ArenaOp>().empty())
    return module.emitError("--dump-schedule: the module is not scheduled");
  llvm::json::OStream j(os, /*IndentSize=*/1);
  Dumper(module, j, timeline).run();
  os << "\n";
  return success();
}

} // namespace hmcc
