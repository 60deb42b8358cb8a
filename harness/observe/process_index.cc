#include "harness/observe/process_index.h"

#include <charconv>

namespace aftermath {

int ProcInfo::pid_at(int level) const {
  if (level < 0 || static_cast<size_t>(level) >= nspid.size()) return 0;
  return nspid[static_cast<size_t>(level)];
}

std::optional<unsigned> parse_status_uid(std::string_view c) {
  size_t pos = 0;
  while (pos < c.size()) {
    size_t eol = c.find('\n', pos);
    if (eol == std::string_view::npos) eol = c.size();
    auto line = c.substr(pos, eol - pos);
    if (line.rfind("Uid:", 0) == 0) {
      line.remove_prefix(4);
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      unsigned v = 0;
      auto r = std::from_chars(line.data(), line.data() + line.size(), v);
      if (r.ec != std::errc() || r.ptr == line.data()) return std::nullopt;
      return v;
    }
    pos = eol + 1;
  }
  return std::nullopt;
}

namespace {
std::optional<ProcInfo> make_info(const ProcReader& proc, const ProcStat& st) {
  auto status = read_small_file(proc.root() + "/" + std::to_string(st.pid) + "/status");
  if (!status) return std::nullopt;  // gone between the two reads
  ProcInfo p;
  p.pid = st.pid;
  p.ppid = st.ppid;
  p.state = st.state;
  p.comm = st.comm;
  p.start_ticks = st.starttime;
  p.uid = parse_status_uid(*status).value_or(0);
  p.nspid = parse_status_nspid(*status);
  if (p.nspid.empty()) p.nspid = {p.pid};
  return p;
}
}  // namespace

std::optional<ProcInfo> read_proc_info(const ProcReader& proc, int pid) {
  auto st = proc.stat(pid);
  if (!st) return std::nullopt;
  return make_info(proc, *st);
}

ProcessIndex ProcessIndex::scan(const ProcReader& proc) {
  ProcessIndex idx;
  for (auto& [pid, st] : proc.scan())
    if (auto p = make_info(proc, st)) idx.add(std::move(*p));
  return idx;
}

void ProcessIndex::add(ProcInfo p) {
  if (p.nspid.empty()) p.nspid = {p.pid};
  procs_[p.pid] = std::move(p);
}

const ProcInfo* ProcessIndex::get(int pid) const {
  auto it = procs_.find(pid);
  return it == procs_.end() ? nullptr : &it->second;
}

const ProcInfo* ProcessIndex::find_at_level(int pid, int level) const {
  if (level == 0) return get(pid);
  const ProcInfo* found = nullptr;
  for (const auto& [_, p] : procs_) {
    if (p.pid_at(level) != pid) continue;
    if (found) return nullptr;  // two namespaces at this level: ambiguous
    found = &p;
  }
  return found;
}

std::vector<int> ProcessIndex::ancestors(int pid) const {
  std::vector<int> out;
  std::set<int> seen{pid};
  const ProcInfo* p = get(pid);
  while (p && p->ppid > 0 && seen.insert(p->ppid).second) {
    out.push_back(p->ppid);
    p = get(p->ppid);
  }
  return out;
}

}  // namespace aftermath
