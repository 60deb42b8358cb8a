#include "reports/hang_view.h"

#include <algorithm>
#include <tuple>

#include "reports/view.h"

namespace aftermath::report {

namespace {

// The offset just past the first "/lib/python3" folder (python3, python3.11,
// ...), or npos.
size_t past_python_lib(std::string_view file) {
  for (size_t at = file.find("/lib/python3"); at != std::string_view::npos;
       at = file.find("/lib/python3", at + 1)) {
    size_t slash = file.find('/', at + 5);  // the slash after "python3..."
    if (slash == std::string_view::npos) return std::string_view::npos;
    std::string_view name = file.substr(at + 5, slash - at - 5);  // "python3.11"
    bool version = std::all_of(name.begin() + 7, name.end(),
                               [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
    if (version) return slash + 1;
  }
  return std::string_view::npos;
}

// The offset just past a "/site-packages/" or "/dist-packages/" folder, or npos.
size_t past_packages(std::string_view file) {
  for (std::string_view dir : {"/site-packages/", "/dist-packages/"}) {
    size_t at = file.rfind(dir);
    if (at != std::string_view::npos) return at + dir.size();
  }
  return std::string_view::npos;
}

// In the lanes' order; nullopt when there is nothing to show.
std::optional<HangDiagnosis> ordered(HangDiagnosis out) {
  if (out.processes.empty() && out.note.empty()) return std::nullopt;
  std::stable_sort(out.processes.begin(), out.processes.end(),
                   [](const DiagnosedProcess& a, const DiagnosedProcess& b) {
                     return std::make_tuple(role_rank(a.role), a.role, a.rank.value_or(-1),
                                            a.worker.value_or(-1), a.pid) <
                            std::make_tuple(role_rank(b.role), b.role, b.rank.value_or(-1),
                                            b.worker.value_or(-1), b.pid);
                   });
  return out;
}

}  // namespace

std::optional<HangDiagnosis> hang_diagnosis(const RunFacts& facts) {
  HangDiagnosis out;
  out.note = facts.diagnosis_note;
  if (facts.diagnosis_took > 0) out.took_ms = to_ms(facts.diagnosis_took);
  for (const ProcessDiagnosis& d : facts.diagnosis) {
    DiagnosedProcess v;
    v.pid = d.pid;
    v.role = std::string(to_string(d.role));
    if (d.rank >= 0) v.rank = d.rank;
    if (d.worker >= 0) v.worker = d.worker;
    v.state = d.state;
    v.wchan = d.wchan;
    v.waiting_in = d.waiting_in;
    v.kernel_stack = d.kernel_stack;
    v.user_stacks = d.user_stacks;
    v.python_stacks = d.python_stacks;
    v.python_note = d.python_note;
    if (d.took > 0) v.took_ms = to_ms(d.took);
    for (const PythonFrame& f : d.python_frames)
      v.frames.push_back({f.file, f.line, f.function, f.code});
    out.processes.push_back(std::move(v));
  }
  return ordered(std::move(out));
}

std::string state_text(char state) {
  switch (state) {
    case 'R':
      return "R running";
    case 'S':
      return "S sleeping";
    case 'D':
      return "D uninterruptible (disk/driver)";
    case 'T':
      return "T stopped";
    case 't':
      return "t stopped (traced)";
    case 'Z':
      return "Z zombie";
    case 'X':
      return "X dead";
    case 'I':
      return "I idle";
    case 'W':
      return "W paging";
    case 'P':
      return "P parked";
    default:
      break;
  }
  return std::string(1, state) + " unknown state";
}

std::string process_name(const DiagnosedProcess& p) {
  std::string out = p.role;
  if (p.worker) {
    out = "worker " + std::to_string(*p.worker);
    if (p.rank) out += " of rank " + std::to_string(*p.rank);
    if (p.role != "worker") out = p.role + " (" + out + ")";
  } else if (p.rank) {
    out = p.role == "rank" ? "rank " + std::to_string(*p.rank)
                           : p.role + " (rank " + std::to_string(*p.rank) + ")";
  }
  return out;
}

bool library_file(std::string_view file) {
  if (!file.empty() && file.front() == '<') return true;  // <frozen importlib._bootstrap>, <string>
  return past_packages(file) != std::string_view::npos ||
         past_python_lib(file) != std::string_view::npos;
}

const PyFrame* innermost_user_frame(const DiagnosedProcess& p) {
  for (const auto& f : p.frames)
    if (!f.file.empty() && !library_file(f.file)) return &f;
  return nullptr;
}

std::string short_file(std::string_view file) {
  size_t from = past_packages(file);
  if (from == std::string_view::npos) from = past_python_lib(file);
  if (from == std::string_view::npos) {
    size_t slash = file.rfind('/');
    from = slash == std::string_view::npos ? 0 : slash + 1;
  }
  std::string_view out = file.substr(from);
  return std::string(out.empty() ? file : out);
}

std::string frame_where(const PyFrame& f) {
  std::string out = f.file.empty() ? "?" : short_file(f.file);
  if (f.line > 0) out += ":" + std::to_string(f.line);
  if (!f.function.empty()) out += " in " + f.function;
  return out;
}

std::string frame_text(const PyFrame& f) {
  std::string out = frame_where(f);
  if (!f.code.empty()) out += " \u2014 " + f.code;
  return out;
}

}  // namespace aftermath::report
