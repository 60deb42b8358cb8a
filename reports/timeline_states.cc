#include "reports/timeline_states.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace aftermath::svg {

const char* state_class(char state) {
  switch (state) {
    case 'T':
    case 't':
      return "stopped";
    case 'D':
      return "uninterruptible";
    default:
      return nullptr;
  }
}

std::vector<StateSpan> state_spans(const std::vector<StateMark>& states, double until) {
  std::vector<std::pair<double, char>> seen;
  for (const StateMark& m : states)
    if (m.state != 0) seen.emplace_back(m.t, m.state);
  std::stable_sort(seen.begin(), seen.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<StateSpan> out;
  const char* open = nullptr;  // the class of the span being drawn, if any
  auto close = [&](double t) {
    if (open) out.back().t1 = std::max(out.back().t0, std::min(t, until));
    open = nullptr;
  };
  for (const auto& [t, state] : seen) {
    const char* cls = state_class(state);
    if (open && cls && std::strcmp(open, cls) == 0) continue;  // T then t: still stopped
    close(t);
    if (cls && t <= until) {
      out.push_back({t, t, state});
      open = cls;
    }
  }
  close(until);
  return out;
}

std::optional<std::pair<double, double>> diagnose_window(const std::vector<VLine>& vlines,
                                                         double end) {
  std::optional<std::pair<double, double>> out;
  for (const VLine& l : vlines) {
    if (l.cls == "phase" && l.label == "diagnose" && !out) out = std::make_pair(l.t, end);
  }
  if (!out) return out;
  for (const VLine& l : vlines) {
    if (l.cls == "phase" && l.t > out->first && l.t < out->second) out->second = l.t;
  }
  return out;
}

}  // namespace aftermath::svg
