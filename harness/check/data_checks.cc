#include "harness/check/data_checks.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace aftermath {

using nlohmann::json;

namespace {

// A number from an event field that may have been sent as a number, a
// boolean (Python's True) or text.
std::optional<std::int64_t> field_int(const json& f, const char* key) {
  if (!f.is_object() || !f.contains(key)) return std::nullopt;
  const json& v = f[key];
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) return static_cast<std::int64_t>(v.get<double>());
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    char* end = nullptr;
    long long x = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && *end == 0) return x;
  }
  return std::nullopt;
}

std::string field_str(const json& f, const char* key) {
  if (!f.is_object() || !f.contains(key)) return {};
  return f[key].is_string() ? f[key].get<std::string>() : f[key].dump();
}

// "3,17,42" -> {3, 17, 42}; false on anything that is not a list of integers.
bool parse_indices(const std::string& text, std::vector<std::int64_t>* out) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != 0) return false;
    out->push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

// pid -> rank, from the processes that announced themselves as ranks.
std::map<int, int> rank_pids(const CheckInput& in) {
  std::map<int, int> m;
  for (const auto& p : in.processes)
    if (p.role == Role::Rank && p.rank >= 0) m[p.pid] = p.rank;
  return m;
}

// The rank an event speaks for: its sender's announced rank, else the field.
std::optional<int> event_rank(const obs::Event& e, const json& f, const std::map<int, int>& pids) {
  if (auto it = pids.find(e.pid); it != pids.end()) return it->second;
  if (auto r = field_int(f, "rank")) return static_cast<int>(*r);
  return std::nullopt;
}

std::string join_list(const std::vector<std::string>& items, size_t n) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < n; ++i) s += (i ? ", " : "") + items[i];
  if (items.size() > n) s += ", ... (" + std::to_string(items.size()) + " in all)";
  return s;
}

std::int64_t num_samples(std::int64_t size, std::int64_t world, bool drop_last) {
  if (drop_last && size % world != 0)
    return std::max<std::int64_t>(0, (size - world + world - 1) / world);
  return (size + world - 1) / world;
}

struct EpochSamples {
  std::map<int, std::vector<std::int64_t>> by_rank;
  std::set<int> finished;  // ranks that sent last=1
};

}  // namespace

// Long: one pass reads the events, one judges each epoch; the measured JSON is built alongside.
CheckResult data_partition(const CheckInput& in) {
  CheckResult r;
  auto pids = rank_pids(in);
  std::optional<std::int64_t> size, world;
  bool drop_last = false;
  std::vector<std::string> problems;
  std::map<std::int64_t, EpochSamples> epochs;
  int sample_events = 0;
  for (const auto& o : in.timeline.observations) {
    const auto* e = o.as<obs::Event>();
    if (!e || (e->name != "dataset" && e->name != "rank.samples")) continue;
    json f = json::parse(e->fields_json, nullptr, false);
    if (e->name == "dataset") {
      auto n = field_int(f, "size");
      auto w = field_int(f, "world");
      if (!n || !w || *n < 0 || *w < 1) {
        problems.push_back("a \"dataset\" event without a valid size and world: " + e->fields_json);
        continue;
      }
      if (size && (*size != *n || *world != *w)) {
        problems.push_back("ranks disagree on the dataset: size " + std::to_string(*size) +
                           " world " + std::to_string(*world) + " vs size " + std::to_string(*n) +
                           " world " + std::to_string(*w));
        continue;
      }
      size = n;
      world = w;
      drop_last = field_int(f, "drop_last").value_or(0) != 0;
      continue;
    }
    ++sample_events;
    auto rank = event_rank(*e, f, pids);
    std::vector<std::int64_t> idx;
    if (!rank || !parse_indices(field_str(f, "indices"), &idx)) {
      problems.push_back("a malformed \"rank.samples\" event from pid " + std::to_string(e->pid));
      continue;
    }
    EpochSamples& epoch = epochs[field_int(f, "epoch").value_or(0)];
    auto& v = epoch.by_rank[*rank];
    v.insert(v.end(), idx.begin(), idx.end());
    if (field_int(f, "last").value_or(0) != 0) epoch.finished.insert(*rank);
  }
  if (!size && sample_events == 0) {
    r.status = CheckStatus::Skipped;
    r.reason = "the job reported no \"dataset\" or \"rank.samples\" events";
    return r;
  }
  if (!size) {
    r.status = CheckStatus::Skipped;
    r.reason = "\"rank.samples\" events without a \"dataset\" event: the dataset size is unknown";
    return r;
  }
  if (sample_events == 0) {
    r.status = CheckStatus::Skipped;
    r.reason = "no rank reported the samples it consumed (no \"rank.samples\" events)";
    return r;
  }
  const std::int64_t n = *size, w = *world;
  const std::int64_t total = num_samples(n, w, drop_last) * w;
  const std::int64_t allowed_dup = drop_last ? 0 : std::max<std::int64_t>(0, total - n);
  const std::int64_t allowed_missing = drop_last ? std::max<std::int64_t>(0, n - total) : 0;
  r.measured["size"] = n;
  r.measured["world"] = w;
  r.measured["drop_last"] = drop_last;
  r.measured["allowed_duplicates"] = allowed_dup;
  r.measured["allowed_missing"] = allowed_missing;
  json per_epoch = json::array();
  std::vector<std::string> unjudged;
  for (const auto& [epoch, e] : epochs) {
    std::map<std::int64_t, std::vector<int>> who;  // index -> ranks (with repeats)
    std::int64_t consumed = 0;
    json per_rank = json::object();
    std::vector<std::string> out_of_range;
    for (const auto& [rank, idx] : e.by_rank) {
      per_rank[std::to_string(rank)] = idx.size();
      consumed += static_cast<std::int64_t>(idx.size());
      if (rank < 0 || rank >= w)
        problems.push_back("epoch " + std::to_string(epoch) + ": rank " + std::to_string(rank) +
                           " reported samples but the world has " + std::to_string(w) + " ranks");
      for (std::int64_t i : idx) {
        if (i < 0 || i >= n)
          out_of_range.push_back(std::to_string(i) + " (rank " + std::to_string(rank) + ")");
        else
          who[i].push_back(rank);
      }
    }
    const std::int64_t distinct = static_cast<std::int64_t>(who.size());
    const std::int64_t dup = consumed - static_cast<std::int64_t>(out_of_range.size()) - distinct;
    bool complete = true;
    std::vector<std::string> unfinished;
    for (int k = 0; k < w; ++k)
      if (!e.finished.count(k)) {
        complete = false;
        unfinished.push_back(std::to_string(k));
      }
    std::vector<std::string> dup_examples, missing_examples;
    for (const auto& [i, ranks] : who) {
      if (ranks.size() < 2) continue;
      std::string rs;
      for (size_t k = 0; k < ranks.size(); ++k) rs += (k ? ", " : "") + std::to_string(ranks[k]);
      dup_examples.push_back("index " + std::to_string(i) + " by ranks " + rs);
      if (dup_examples.size() >= 3) break;
    }
    const std::int64_t missing = n - distinct;
    if (complete)
      for (std::int64_t i = 0; i < n && missing_examples.size() < 5; ++i)
        if (!who.count(i)) missing_examples.push_back(std::to_string(i));
    std::string ep = "epoch " + std::to_string(epoch) + ": ";
    if (!out_of_range.empty())
      problems.push_back(ep + std::to_string(out_of_range.size()) + " index(es) outside [0, " +
                         std::to_string(n) + "): " + join_list(out_of_range, 3));
    if (dup > allowed_dup)
      problems.push_back(ep + "overlap: " + std::to_string(dup) +
                         " repeated consumption(s), padding allows " + std::to_string(allowed_dup) +
                         "; e.g. " + join_list(dup_examples, 3));
    if (complete && missing > allowed_missing)
      problems.push_back(
          ep + "incomplete: " + std::to_string(missing) + " index(es) never consumed, " +
          (drop_last ? "drop_last allows " : "no drop_last: ") + std::to_string(allowed_missing) +
          "; e.g. " + join_list(missing_examples, 5));
    if (!complete)
      unjudged.push_back(ep + "rank(s) " + join_list(unfinished, 8) + " did not finish");
    per_epoch.push_back(json{{"epoch", epoch},
                             {"consumed_per_rank", per_rank},
                             {"consumed", consumed},
                             {"distinct", distinct},
                             {"duplicates", dup},
                             {"missing", complete ? json(missing) : json(nullptr)},
                             {"complete", complete},
                             {"duplicate_examples", dup_examples},
                             {"missing_examples", missing_examples}});
  }
  r.measured["epochs"] = per_epoch;
  if (!problems.empty()) {
    r.status = CheckStatus::Fail;
    r.reason = join_list(problems, 3);
    return r;
  }
  r.status = CheckStatus::Pass;
  r.reason = std::to_string(w) + " rank(s), " + std::to_string(n) + " samples, " +
             std::to_string(epochs.size()) + " epoch(s): disjoint";
  if (allowed_dup > 0) r.reason += " up to " + std::to_string(allowed_dup) + " padded repeat(s)";
  if (unjudged.empty())
    r.reason += ", complete";
  else
    r.reason += "; completeness not judged (" + join_list(unjudged, 3) + ")";
  return r;
}

// Long: matching sequences per group and wording each kind of mismatch are one story.
CheckResult collectives_matched(const CheckInput& in) {
  CheckResult r;
  auto pids = rank_pids(in);
  struct RankColl {
    std::vector<std::string> ops;  // op of each begun collective, in order
    std::string open;              // "barrier #232": begun, not ended
    std::optional<std::int64_t> reported;
  };
  std::map<int, RankColl> ranks;
  bool any = false;
  for (const auto& o : in.timeline.observations) {
    const auto* e = o.as<obs::Event>();
    if (!e || (e->name != "collective" && e->name != "rank.collectives")) continue;
    json f = json::parse(e->fields_json, nullptr, false);
    auto rank = event_rank(*e, f, pids);
    if (!rank) continue;
    any = true;
    RankColl& rc = ranks[*rank];
    if (e->name == "rank.collectives") {
      rc.reported = field_int(f, "count");
      continue;
    }
    std::string state = field_str(f, "state");
    std::string op =
        f.is_object() && f.contains("op") && f["op"].is_string() ? f["op"].get<std::string>() : "?";
    if (state == "begin") {
      rc.ops.push_back(op);
      auto seq = field_int(f, "seq");
      rc.open = op + " #" + (seq ? std::to_string(*seq) : std::to_string(rc.ops.size()));
    } else if (state == "end") {
      rc.open.clear();
    }
  }
  if (!any) {
    r.status = CheckStatus::Skipped;
    r.reason = "the job reported no collectives (no \"collective\" or \"rank.collectives\" events)";
    return r;
  }
  // Ranks that stopped early are not compared: those that ended before the
  // teardown without reporting their count. (A launcher that reaps its
  // ranks hides their outcome from the harness, so a reported count, not
  // exited(0), is what marks a rank that finished.)
  std::map<int, std::string> stopped;
  for (const auto& p : in.processes) {
    if (p.role != Role::Rank || p.rank < 0 || !ranks.count(p.rank) || ranks[p.rank].reported)
      continue;
    auto end = p.end();
    if (!end || *end > in.teardown_at) continue;
    stopped[p.rank] = p.outcome ? p.outcome->to_string() : "ended without reporting its count";
  }
  json measured = json::array();
  std::vector<std::pair<int, std::int64_t>> counts;
  std::vector<std::string> left_out, waiting;
  for (const auto& [rank, rc] : ranks) {
    std::int64_t count = rc.reported.value_or(static_cast<std::int64_t>(rc.ops.size()));
    json j{{"rank", rank},
           {"count", count},
           {"source", rc.reported ? "rank.collectives" : "collective events"},
           {"open", rc.open.empty() ? json(nullptr) : json(rc.open)},
           {"stopped_early", stopped.count(rank) ? json(stopped[rank]) : json(nullptr)}};
    measured.push_back(j);
    if (stopped.count(rank)) {
      left_out.push_back("rank " + std::to_string(rank) + " " + stopped[rank]);
      continue;
    }
    counts.emplace_back(rank, count);
    if (!rc.open.empty())
      waiting.push_back("rank " + std::to_string(rank) + " waits in " + rc.open);
  }
  r.measured["ranks"] = measured;
  if (counts.size() < 2) {
    r.status = CheckStatus::Skipped;
    r.reason =
        "fewer than two ranks to compare" +
        (left_out.empty() ? std::string() : " (stopped early: " + join_list(left_out, 4) + ")");
    return r;
  }
  std::vector<std::string> problems;
  bool same = std::all_of(counts.begin(), counts.end(),
                          [&](const auto& c) { return c.second == counts.front().second; });
  if (!same) {
    std::vector<std::string> each;
    for (const auto& [rank, c] : counts)
      each.push_back("rank " + std::to_string(rank) + " ran " + std::to_string(c));
    problems.push_back("unequal collective counts: " + join_list(each, 8));
  }
  // The first sequence number where the compared ranks ran different ops.
  const auto& ref = ranks[counts.front().first].ops;
  for (size_t k = 1; k < counts.size(); ++k) {
    const auto& other = ranks[counts[k].first].ops;
    size_t n = std::min(ref.size(), other.size());
    for (size_t i = 0; i < n; ++i) {
      if (ref[i] == other[i]) continue;
      problems.push_back("collective #" + std::to_string(i + 1) + " is " + ref[i] + " on rank " +
                         std::to_string(counts.front().first) + " but " + other[i] + " on rank " +
                         std::to_string(counts[k].first));
      r.measured["first_divergence"] = i + 1;
      break;
    }
  }
  if (!problems.empty()) {
    r.status = CheckStatus::Fail;
    r.reason = join_list(problems, 2);
    if (!waiting.empty()) r.reason += "; " + join_list(waiting, 4);
    return r;
  }
  r.status = CheckStatus::Pass;
  r.reason = std::to_string(counts.size()) + " ranks ran " + std::to_string(counts.front().second) +
             " collectives each";
  if (!left_out.empty()) r.reason += " (not compared: " + join_list(left_out, 4) + ")";
  return r;
}

}  // namespace aftermath
