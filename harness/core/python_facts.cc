#include "harness/core/python_facts.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <tuple>

namespace aftermath {

namespace {

// Leading digits of `s` as a number (advancing `i`); -1 when there are none.
int number_at(std::string_view s, size_t& i) {
  size_t start = i;
  long n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 6) {
    n = n * 10 + (s[i] - '0');
    ++i;
  }
  return i == start ? -1 : static_cast<int>(n);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<TorchVersion> parse_torch_version(std::string_view text) {
  text = trim(text);
  TorchVersion v;
  v.text = std::string(text);
  size_t i = 0;
  v.major = number_at(text, i);
  if (v.major < 0 || i >= text.size() || text[i] != '.') return std::nullopt;
  ++i;
  v.minor = number_at(text, i);
  if (v.minor < 0) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    int p = number_at(text, i);
    v.patch = p < 0 ? 0 : p;
  }
  return v;
}

Expected<TorchRange> TorchRange::parse(std::string_view text) {
  TorchRange r;
  r.text_ = std::string(trim(text));
  if (r.text_.empty()) return Error{"an empty version range (e.g. '>=2.2' or '<2.0')"};
  std::string_view rest = r.text_;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view part = trim(rest.substr(0, comma));
    Clause c{Clause::Op::Eq, {}, 0};
    for (auto [sym, op] : {std::pair{">=", Clause::Op::Ge},
                           {"<=", Clause::Op::Le},
                           {"==", Clause::Op::Eq},
                           {"!=", Clause::Op::Ne},
                           {">", Clause::Op::Gt},
                           {"<", Clause::Op::Lt}}) {
      std::string_view s(sym);
      if (part.substr(0, s.size()) == s) {
        c.op = op;
        part = trim(part.substr(s.size()));
        break;
      }
    }
    // Only digits and dots: "2.x" or "2.2rc1" are not versions a range compares.
    bool plain = !part.empty() && part.find_first_not_of("0123456789.") == std::string_view::npos &&
                 part.back() != '.';
    auto v = plain ? parse_torch_version(part) : std::nullopt;
    if (!v)
      return Error{"'" + r.text_ + "': '" + std::string(part) +
                   "' is not a version (MAJOR.MINOR or MAJOR.MINOR.PATCH)"};
    c.v = *v;
    c.parts = static_cast<int>(std::count(part.begin(), part.end(), '.')) + 1;
    if (c.parts > 3)
      return Error{"'" + r.text_ + "': '" + std::string(part) + "' has more than three numbers"};
    r.clauses_.push_back(c);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return r;
}

bool TorchRange::contains(const TorchVersion& v) const {
  for (const auto& c : clauses_) {
    // A version written with two numbers names a whole minor release: "==1.13"
    // holds for 1.13.1, "<2.2" for 2.1.x, ">2.2" only from 2.3.
    auto key = [&](const TorchVersion& x) {
      return std::tuple(x.major, x.minor, c.parts == 3 ? x.patch : 0);
    };
    auto a = key(v), b = key(c.v);
    bool ok = false;
    switch (c.op) {
      case Clause::Op::Ge:
        ok = a >= b;
        break;
      case Clause::Op::Gt:
        ok = a > b;
        break;
      case Clause::Op::Le:
        ok = a <= b;
        break;
      case Clause::Op::Lt:
        ok = a < b;
        break;
      case Clause::Op::Eq:
        ok = a == b;
        break;
      case Clause::Op::Ne:
        ok = a != b;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

std::string PythonFacts::label() const {
  if (torch) return "torch " + torch->text;
  if (!python.empty()) return "no torch (python " + python + ")";
  return "python unknown";
}

TorchBehaviour torch_behaviour(const TorchVersion& v) {
  TorchBehaviour b;
  // torch/lib/libshm/manager.cpp: the manager exits 2000 ms after its last
  // client hung up (unchanged from 1.x to the current sources).
  b.shm_manager_linger = 2000 * kMilli;
  // PR #113231 (2.2): torchrun starts ranks with start_new_session=True and
  // stops them with killpg.
  b.torchrun_signals_sessions = !(v < TorchVersion{2, 2, 0, {}});
  // PR #124692 (2.4): --monitor-interval's default from 5 s to 0.1 s.
  b.torchrun_monitor_interval = v < TorchVersion{2, 4, 0, {}} ? 5 * kSecond : 100 * kMilli;
  return b;
}

PythonFacts default_python_facts() { return PythonFacts{}; }

Nanos helper_grace(const PythonFacts& f) {
  return std::max<Nanos>(5 * kSecond, f.shm_manager_linger + 3 * kSecond);
}

Nanos settle_quiet(const PythonFacts& f) { return f.loader_status_interval + kSecond; }

}  // namespace aftermath
