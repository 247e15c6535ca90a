//===- MemoryPlot.cpp - memory over one step, as a self-contained page ----===//
//
// `hmcc --memory-plot=FILE.html`: for the entry function, the bytes of each
// arena (device, host) in use at every op, stacked by tensor class, drawn
// as inline SVG with no external resource. A short script measures the
// drawing once the page is laid out and writes what it found into the
// title, so that a headless browser's DOM dump shows the page rendered.
//
//===----------------------------------------------------------------------===//

#include "hm/Export/MemoryPlot.h"
#include "hm/Analysis/Liveness.h"
#include "hm/IR/HMOps.h"
#include "lib/support/Size.h"
#include "lib/support/Text.h"
#include "tg/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <array>

using namespace mlir;

namespace hmcc {
namespace {

/// The classes a plot stacks, bottom to top, and their colours.
enum Class { Parameters, States, Inputs, Fetched, Gradients, Activations, kClasses };
constexpr std::array<const char *, kClasses> kNames = {
    "parameters", "optimizer states", "inputs", "fetched parameters", "gradients", "activations"};
constexpr std::array<const char *, kClasses> kColours = {"#4e79a7", "#f28e2b", "#bab0ac",
                                                         "#76b7b2", "#e15759", "#59a14f"};

/// The class of a value placed in the function: a gradient (what the norm
/// and the updates read, on the device or its host copy), a device copy of a
/// parameter, else an activation (an offloaded cut and its way back too).
Class classOf(Value v) {
  for (Operation *user : v.getUsers()) {
    if (auto sum = dyn_cast<tg::SumSquaresOp>(user); sum && sum.getGrad() == v)
      return Gradients; // not the running sum it adds to
    if (isa<tg::SgdUpdateOp, tg::AdamWUpdateOp, tg::AdamW8bitUpdateOp>(user))
      return Gradients;
    // A value copied (to the host) as a gradient is one.
    if (auto copy = dyn_cast<tg::IdentityOp>(user); copy && classOf(copy) == Gradients)
      return Gradients;
  }
  if (auto copy = dyn_cast_or_null<tg::IdentityOp>(v.getDefiningOp());
      copy && copy.getOperand().getDefiningOp<tg::ParamOp>())
    return Fetched;
  return Activations;
}

/// `text` safe inside HTML: control characters and invalid UTF-8 escaped
/// (escapeText), then HTML's special characters (LLVM's printHTMLEscaped).
std::string escape(StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printHTMLEscaped(escapeText(text), os);
  return out;
}

/// One tier's series: bytes per class at each op.
struct Series {
  std::string tier;
  int64_t arena = 0;
  std::vector<std::array<int64_t, kClasses>> steps;
};

void drawTier(raw_ostream &os, const Series &s, std::optional<int64_t> budget) {
  constexpr double kWidth = 960, kHeight = 260, kLeft = 70, kTop = 20;
  size_t n = std::max<size_t>(s.steps.size(), 1);
  double top = double(std::max<int64_t>({s.arena, budget.value_or(0), 1}));
  auto x = [&](size_t i) { return kLeft + kWidth * double(i) / double(n); };
  auto y = [&](double bytes) { return kTop + kHeight * (1.0 - bytes / top); };
  os << "<h2>" << escape(s.tier) << " arena: " << escape(formatBytes(s.arena)) << "</h2>\n"
     << "<svg id=\"" << escape(s.tier) << "\" width=\"" << kLeft + kWidth + 20 << "\" height=\""
     << kTop + kHeight + 40 << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  // Stacked areas, each the band between the classes below and itself.
  std::vector<int64_t> below(s.steps.size(), 0);
  for (int c = 0; c < kClasses; ++c) {
    bool any = false;
    for (const auto &step : s.steps)
      any |= step[c] > 0;
    if (!any)
      continue;
    // Along the top edge left to right, back along the bottom edge.
    std::string upper;
    std::vector<std::string> lower;
    for (size_t i = 0; i < s.steps.size(); ++i) {
      double lo = double(below[i]), hi = lo + double(s.steps[i][c]);
      upper += llvm::formatv("{0:F1},{1:F1} {2:F1},{1:F1} ", x(i), y(hi), x(i + 1)).str();
      lower.push_back(llvm::formatv("{0:F1},{1:F1} {2:F1},{1:F1} ", x(i + 1), y(lo), x(i)).str());
      below[i] += s.steps[i][c];
    }
    os << "<polygon class=\"band\" fill=\"" << kColours[c] << "\" points=\"" << upper;
    for (auto it = lower.rbegin(); it != lower.rend(); ++it)
      os << *it;
    os << "\"><title>" << kNames[c] << "</title></polygon>\n";
  }
  // The arena (and the budget) as lines, and the axes.
  // (The arena's label on the right, the budget's on the left.)
  auto line = [&](double bytes, const char *colour, const std::string &label, bool right) {
    os << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + kWidth << "\" y1=\"" << y(bytes)
       << "\" y2=\"" << y(bytes) << "\" stroke=\"" << colour << "\" stroke-dasharray=\"4 3\"/>"
       << "<text x=\"" << (right ? kLeft + kWidth - 4 : kLeft + 4) << "\" y=\"" << y(bytes) - 4
       << "\" text-anchor=\"" << (right ? "end" : "start") << "\" font-size=\"11\">"
       << escape(label) << "</text>\n";
  };
  line(double(s.arena), "#333", "arena " + formatBytes(s.arena), true);
  if (budget)
    line(double(*budget), "#c00", "budget " + formatBytes(*budget), false);
  os << "<text x=\"" << kLeft - 6 << "\" y=\"" << y(0) << "\" text-anchor=\"end\" "
     << "font-size=\"11\">0</text>"
     << "<text x=\"" << kLeft + kWidth / 2 << "\" y=\"" << kTop + kHeight + 30
     << "\" text-anchor=\"middle\" font-size=\"12\">ops of one step, in order (" << s.steps.size()
     << ")</text>\n</svg>\n";
}

} // namespace

LogicalResult writeMemoryPlot(ModuleOp module, func::FuncOp fn, std::optional<int64_t> vram,
                              raw_ostream &os) {
  auto device = hm::arenaOfTier(module, "device");
  if (!device)
    return module.emitError("--memory-plot: the module is not scheduled");
  auto host = hm::arenaOfTier(module, "host");
  hm::FunctionLiveness live = hm::replayFunction(fn);
  if (live.broken)
    return module.emitError("--memory-plot: the schedule does not replay");

  // Persistent bytes per tier and class, then each step's transient bytes.
  std::array<int64_t, kClasses> fixed[2] = {};
  for (const hm::PersistentTensor &t : hm::persistentTensors(module)) {
    Class c = t.kind == "param" ? Parameters : t.kind == "state" ? States : Inputs;
    if (t.tier < 2) // storage is not plotted
      fixed[t.tier][c] += hm::arenaBytes(t.type);
  }
  Series series[2];
  series[0].tier = "device";
  series[0].arena = device.getBytes();
  series[1].tier = "host";
  series[1].arena = host ? host.getBytes() : 0;
  std::array<int64_t, kClasses> live2[2] = {};
  for (const hm::LiveStep &step : live.steps) {
    for (Value v : step.born)
      live2[live.inHost.contains(v)][classOf(v)] += hm::arenaBytes(v.getType());
    for (int tier = 0; tier < 2; ++tier) {
      std::array<int64_t, kClasses> total = fixed[tier];
      for (int c = 0; c < kClasses; ++c)
        total[c] += live2[tier][c];
      series[tier].steps.push_back(total);
    }
    for (Value v : step.freed)
      live2[live.inHost.contains(v)][classOf(v)] -= hm::arenaBytes(v.getType());
  }

  std::string model = module.getSymName() ? module.getSymName()->str() : "model";
  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>hmcc memory plan: "
     << escape(model) << "</title>\n<style>body{font-family:sans-serif;margin:20px}"
     << "h2{font-size:15px;margin:18px 0 4px}.legend span{display:inline-block;margin-right:14px}"
     << ".legend i{display:inline-block;width:12px;height:12px;margin-right:4px}</style>\n"
     << "</head><body>\n<h1 style=\"font-size:18px\">" << escape(model) << ": memory over one "
     << escape(fn.getSymName()) << "</h1>\n<div class=\"legend\">";
  for (int c = 0; c < kClasses; ++c)
    os << "<span><i style=\"background:" << kColours[c] << "\"></i>" << kNames[c] << "</span>";
  os << "</div>\n";
  drawTier(os, series[0], vram);
  if (host)
    drawTier(os, series[1], std::nullopt);
  // Once laid out: the drawn bands' extent, into the title.
  os << "<script>\nwindow.addEventListener('load', function () {\n"
     << "  var bands = document.querySelectorAll('polygon.band'), w = 0, h = 0;\n"
     << "  bands.forEach(function (b) { var r = b.getBBox(); w = Math.max(w, r.width); "
     << "h = Math.max(h, r.height); });\n"
     << "  document.title = 'rendered ' + bands.length + ' bands, ' + Math.round(w) + 'x' + "
     << "Math.round(h) + ' px';\n});\n</script>\n</body></html>\n";
  return success();
}

} // namespace hmcc
