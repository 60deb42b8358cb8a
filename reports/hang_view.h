// A scenario's hang diagnosis as the reports show it (the run's
// RunFacts::diagnosis, in the lanes' order), plus the few words the renderers share: a state letter
// spelled out, a Python frame as one line, and which frame is the user's own
// code rather than Python's or an installed package's.
//
// Rendered by report.html (hang_section.h) and summary.md (hang_summary.h);
// nothing here decides that a run hung: the diagnosis is there because the
// harness took one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/timeline.h"

namespace aftermath::report {

// One frame of a process's Python stack.
struct PyFrame {
  std::string file;
  long long line = 0;  // 0: unknown
  std::string function;
  std::string code;  // the source line, stripped; may be empty
};

// One diagnosed process.
struct DiagnosedProcess {
  long long pid = 0;
  std::string role = "unknown";
  std::optional<long long> rank, worker;  // nullopt: not announced
  char state = '?';
  std::string wchan, waiting_in;
  std::string kernel_stack, user_stacks, python_stacks, python_note;
  std::vector<PyFrame> frames;    // innermost first
  std::optional<double> took_ms;  // nullopt when not measured (absent or 0)
};

struct HangDiagnosis {
  // In the lanes' order: role (role_rank), then rank, worker and pid.
  std::vector<DiagnosedProcess> processes;
  std::string note;               // about the diagnosis as a whole, e.g. "gdb not installed: ..."
  std::optional<double> took_ms;  // nullopt when not measured (absent or 0)
};

// The scenario's diagnosis, or nullopt when it has none to show: neither a
// process nor a note (every run that did not hang).
std::optional<HangDiagnosis> hang_diagnosis(const RunFacts& facts);

// A /proc state letter spelled out: "S sleeping", "T stopped",
// "D uninterruptible (disk/driver)", "R running", "Z zombie", ...; an
// unknown letter is "X ?"-like: the letter and "unknown state".
std::string state_text(char state);

// The role with what the job announced: "rank 1", "worker 3 of rank 0",
// "launcher".
std::string process_name(const DiagnosedProcess& p);

// True for a file of Python itself or of an installed package: under a
// site-packages or dist-packages folder, or under a lib/python3* folder
// (/usr/lib/python3.11/threading.py, a venv's or conda's lib/python3.10/),
// and the pseudo-files "<frozen ...>", "<string>". Everything else is taken
// to be the user's own code.
bool library_file(std::string_view file);

// The innermost frame in the user's own code (not library_file), or nullptr.
const PyFrame* innermost_user_frame(const DiagnosedProcess& p);

// A frame's file as a reader wants it: inside site-/dist-packages the path
// from the package on ("torch/distributed/distributed_c10d.py"), inside a
// lib/python3* folder the path from there ("threading.py"), otherwise the
// file name ("train.py"). The full path stays in result.json.
std::string short_file(std::string_view file);

// "train.py:42 in step" (short_file).
std::string frame_where(const PyFrame& f);
// "train.py:42 in step — dist.all_reduce(t)"; without the dash when the
// frame has no code.
std::string frame_text(const PyFrame& f);

}  // namespace aftermath::report
