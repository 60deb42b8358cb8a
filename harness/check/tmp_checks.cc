#include "harness/check/tmp_checks.h"

#include <map>
#include <set>

namespace aftermath {

using nlohmann::json;

namespace {

// How many "other" entries are listed by name (the rest are only counted):
// a job that writes its outputs to the temp dir can leave thousands.
constexpr size_t kOtherListed = 20;

std::string entries(size_t n) { return n == 1 ? "entry" : "entries"; }

}  // namespace

CheckResult tmp_clean(const CheckInput& in) {
  CheckResult r;
  std::set<std::string> reclaimed;
  std::map<std::string, std::string> moved;  // torchrun's log folders: path -> where they went
  for (const auto& o : in.timeline.observations) {
    if (const auto* f = harness_failed(o, HarnessPart::TmpDir)) {
      r.status = CheckStatus::Skipped;
      r.reason = "the temp dir could not be observed: " + f->why;
      return r;
    }
    if (const auto* rc = o.as<obs::TmpReclaim>()) {
      if (rc->moved_to.empty())
        reclaimed.insert(rc->path);
      else
        moved[rc->path] = rc->moved_to;
    }
  }
  json left = json::array(), outside = json::array(), other = json::array(),
       torchrun_logs = json::array();
  size_t other_count = 0;
  std::int64_t left_bytes = 0;
  std::vector<std::string> names;
  for (const auto& o : in.timeline.observations) {
    const auto* t = o.as<obs::TmpLeft>();
    if (!t) continue;
    const std::string residue(to_string(t->residue));
    json e{{"path", t->path}, {"residue", residue}, {"owner", t->owner}, {"bytes", t->bytes}};
    if (t->held_outside_by != 0) {
      e["held_by"] = t->held_outside_by;
      outside.push_back(e);
    } else if (t->residue == TmpKind::Torchelastic) {
      // torchrun makes one on every run and never removes it: its design.
      if (auto m = moved.find(t->path); m != moved.end()) e["moved_to"] = m->second;
      torchrun_logs.push_back(e);
    } else if (t->residue == TmpKind::Other) {
      if (other.size() < kOtherListed) other.push_back(e);
      ++other_count;
    } else {
      e["reclaimed"] = reclaimed.count(t->path) > 0;
      left.push_back(e);
      left_bytes += t->bytes;
      names.push_back(t->path + " (" + residue + ", uid " + std::to_string(t->owner) + ", " +
                      format_bytes(t->bytes) + ")");
    }
  }
  r.measured["left"] = left;
  r.measured["left_bytes"] = left_bytes;
  r.measured["reclaimed_by_harness"] = !reclaimed.empty();
  r.measured["held_outside_job"] = outside;
  r.measured["other"] = other;
  r.measured["other_count"] = other_count;
  r.measured["torchrun_logs"] = torchrun_logs;
  std::string also;
  if (!torchrun_logs.empty())
    also += "; torchrun's log folder" + std::string(torchrun_logs.size() == 1 ? "" : "s") +
            " (torchelastic_*, kept by torchrun's design" +
            (moved.empty() ? std::string(")") : ", moved to the run's logs/)") + " not judged";
  if (other_count)
    also += "; " + std::to_string(other_count) + " other new " + entries(other_count) +
            " reported, not judged";
  if (!outside.empty())
    also += "; " + std::to_string(outside.size()) + " held by processes outside the job";
  if (left.empty()) {
    r.status = CheckStatus::Pass;
    r.reason = "no PyTorch or multiprocessing residue left in the temp dir" + also;
    return r;
  }
  r.status = CheckStatus::Fail;
  std::string list;
  for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 3) list += ", ... (" + std::to_string(names.size()) + " in all)";
  r.reason = std::to_string(left.size()) + " temp-dir " + entries(left.size()) +
             " left behind: " + list + also;
  return r;
}

}  // namespace aftermath
