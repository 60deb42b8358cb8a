// Reading typed fields out of YAML with diagnostics that name file:line:field.
//
// Every parser of scenario text (the scenario's own sections, its faults, and
// the check layer's per-check parameters) reads through a FieldReader, so a
// bad value gets the same message shape everywhere and every problem is
// collected, not just the first. Nothing here touches the file system.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/core/types.h"
#include "harness/scenario/diagnostic.h"

namespace aftermath {

using Keys = std::vector<std::string_view>;

bool contains(const Keys& keys, std::string_view k);
// "a, b, c"
std::string join(const Keys& keys);
// The dotted path of a map's child ("checks" + "job_exit") and of a list's item ("args[2]").
std::string child(const std::string& parent, std::string_view key);
std::string item(const std::string& parent, size_t i);
// What a node is, for "expected X, got Y" messages: "a map", "a list", "'text'", "nothing".
std::string describe(const YAML::Node& n);

// One key/value pair of a YAML map, with the dotted path of the value.
struct Entry {
  std::string name;
  YAML::Node key;
  YAML::Node value;
  std::string path;

  // A null value's own mark points at whatever token follows it (often the next
  // line), so problems with an empty value are reported at its key.
  YAML::Mark where() const {
    if (value.IsNull() || value.Mark().line < 0) return key.Mark();
    return value.Mark();
  }
};

// Collects diagnostics for one file while fields are read. Not thread-safe.
class FieldReader {
 public:
  // `vars`: the values ${NAME} expands to (the process environment is the fallback).
  explicit FieldReader(std::string file, std::map<std::string, std::string> vars = {})
      : file_(std::move(file)), vars_(std::move(vars)) {}

  const std::string& file() const { return file_; }
  std::map<std::string, std::string>& vars() { return vars_; }

  void error(const YAML::Mark& mark, std::string field, std::string message);
  void missing(const YAML::Node& map, const std::string& path);
  void wrong_type(const Entry& e, std::string_view expected);
  // How many diagnostics so far (a parser compares counts to tell whether its part failed).
  size_t error_count() const { return diags_.size(); }
  // The diagnostics in file order (stable: same-place ones keep their order).
  std::vector<Diagnostic> take_sorted();
  std::vector<Diagnostic> take() { return std::move(diags_); }

  // The entries of `map` in document order. Non-string and duplicate keys are
  // reported and dropped; so are keys outside `accepted` when it is given
  // ("unknown key 'x' (accepted: ...)", or with `noun` "check": "unknown check
  // 'x' (known checks: ...)").
  std::vector<Entry> entries(const YAML::Node& map, const std::string& path, const Keys* accepted,
                             std::string_view noun = "key");
  static const Entry* find(const std::vector<Entry>& es, std::string_view name);
  // A list item as an Entry, so items share the scalar/duration helpers.
  static Entry list_item(const Entry& list, size_t i, const YAML::Node& node);

  std::optional<std::string> string_value(const Entry& e);
  // Each item of a list of strings, with its Entry. Non-scalar items are reported.
  std::vector<std::pair<std::string, Entry>> string_list(const Entry& e);
  // A duration (harness/core/duration.h); a bare number, a negative one or an
  // unknown unit is reported.
  std::optional<Nanos> duration(const Entry& e);
  // Duration with a lower bound (`positive`: > 0, else >= 0).
  std::optional<Nanos> bounded_duration(const Entry& e, bool positive);
  // `grace:` as one duration, or a map of roles: {default: 1s, helper: 3s}.
  void grace(const Entry& e, std::optional<Nanos>* all, std::map<Role, Nanos>* by_role);
  // true / false.
  std::optional<bool> boolean(const Entry& e, std::string_view expected);
  // Expands every ${NAME}; each unknown name is its own diagnostic.
  std::optional<std::string> expand(const std::string& in, const Entry& e);
  std::optional<std::string> expanded_string(const Entry& e);

 private:
  std::optional<std::string> lookup(const std::string& name) const;

  std::string file_;
  std::map<std::string, std::string> vars_;
  std::vector<Diagnostic> diags_;
};

}  // namespace aftermath
