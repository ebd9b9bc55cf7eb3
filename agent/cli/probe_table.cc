#include "cli/probe_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "common/text_table.h"

namespace gpuq {
namespace {

// Fewer rows alike than this stay rows: folding them saves no line.
constexpr size_t kFoldAtLeast = 3;
constexpr size_t kLineWidth = 120;

}  // namespace

std::string RenderProbeTable(const std::vector<ProbeStatus>& status) {
  const bool any_attached =
      std::any_of(status.begin(), status.end(),
                  [](const ProbeStatus& s) { return s.attached; });
  // Mode, tier and detail: what a row says besides which hook it is.
  using Alike = std::tuple<std::string, std::string, std::string>;
  std::map<Alike, std::vector<const ProbeStatus*>> alike;
  if (!any_attached) {
    for (const ProbeStatus& s : status) {
      alike[{s.mode, s.tier, s.detail}].push_back(&s);
    }
  }
  auto folded = [&alike](const ProbeStatus& s) {
    const auto it = alike.find({s.mode, s.tier, s.detail});
    return it != alike.end() && it->second.size() >= kFoldAtLeast;
  };

  TextTable table({"PROBE", "FUNCTION", "MODE", "ATTACHED", "TIER", "DETAIL"});
  std::string folds;
  for (const ProbeStatus& s : status) {
    if (!folded(s)) {
      table.Add({s.probe, s.function, s.mode, s.attached ? "yes" : "no", s.tier,
                 s.detail});
      continue;
    }
    // Once per group, where its first hook is.
    const std::vector<const ProbeStatus*>& group =
        alike.at({s.mode, s.tier, s.detail});
    if (group.front() != &s) continue;
    std::vector<std::string> hooks;
    for (const ProbeStatus* g : group) {
      hooks.push_back(fmt::format("{} ({})", g->probe, g->function));
    }
    folds += fmt::format("{} hooks: not attached (mode {}, tier {}): {}\n",
                         group.size(), s.mode, s.tier, s.detail);
    folds += WrapList(" ", hooks, kLineWidth);
  }
  return (table.empty() ? "" : table.Render()) + folds;
}

}  // namespace gpuq
