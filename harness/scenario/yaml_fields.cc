#include "harness/scenario/yaml_fields.h"

#include <algorithm>
#include <cstdlib>

namespace aftermath {

std::string Diagnostic::to_string() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

bool contains(const Keys& keys, std::string_view k) {
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

std::string join(const Keys& keys) {
  std::string out;
  for (std::string_view k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

std::string child(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string item(const std::string& parent, size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + n.Scalar() + "'";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

void FieldReader::error(const YAML::Mark& mark, std::string field, std::string message) {
  Diagnostic d;
  d.file = file_;
  d.line = mark.line >= 0 ? mark.line + 1 : 0;
  d.column = mark.line >= 0 && mark.column >= 0 ? mark.column + 1 : 0;
  d.field = std::move(field);
  d.message = std::move(message);
  diags_.push_back(std::move(d));
}

void FieldReader::missing(const YAML::Node& map, const std::string& path) {
  error(map.Mark(), path, "missing required field");
}

void FieldReader::wrong_type(const Entry& e, std::string_view expected) {
  error(e.where(), e.path, "expected " + std::string(expected) + ", got " + describe(e.value));
}

std::vector<Diagnostic> FieldReader::take_sorted() {
  // Sections are checked in a fixed order (checks before expect), reported in file order.
  std::stable_sort(diags_.begin(), diags_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  return std::move(diags_);
}

std::vector<Entry> FieldReader::entries(const YAML::Node& map, const std::string& path,
                                        const Keys* accepted, std::string_view noun) {
  std::vector<Entry> out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    YAML::Node key = it->first;
    if (!key.IsScalar()) {
      error(key.Mark(), path, "keys must be strings, got " + describe(key));
      continue;
    }
    const std::string& name = key.Scalar();
    if (accepted != nullptr && !contains(*accepted, name)) {
      std::string list_name = noun == "key" ? "accepted" : "known " + std::string(noun) + "s";
      error(key.Mark(), child(path, name),
            "unknown " + std::string(noun) + " '" + name + "' (" + list_name + ": " +
                join(*accepted) + ")");
      continue;
    }
    auto dup = std::find_if(out.begin(), out.end(), [&](const Entry& e) { return e.name == name; });
    if (dup != out.end()) {
      error(key.Mark(), child(path, name),
            "duplicate key '" + name + "' (first at line " +
                std::to_string(dup->key.Mark().line + 1) + ")");
      continue;
    }
    out.push_back(Entry{name, key, it->second, child(path, name)});
  }
  return out;
}

const Entry* FieldReader::find(const std::vector<Entry>& es, std::string_view name) {
  for (const Entry& e : es)
    if (e.name == name) return &e;
  return nullptr;
}

Entry FieldReader::list_item(const Entry& list, size_t i, const YAML::Node& node) {
  // A null item's mark is unreliable: fall back to the list's key.
  return Entry{"", node.IsNull() || node.Mark().line < 0 ? list.key : node, node,
               item(list.path, i)};
}

std::optional<std::string> FieldReader::string_value(const Entry& e) {
  if (!e.value.IsScalar()) {
    wrong_type(e, "a string");
    return std::nullopt;
  }
  return e.value.Scalar();
}

std::vector<std::pair<std::string, Entry>> FieldReader::string_list(const Entry& e) {
  std::vector<std::pair<std::string, Entry>> out;
  if (!e.value.IsSequence()) {
    wrong_type(e, "a list");
    return out;
  }
  for (size_t i = 0; i < e.value.size(); ++i) {
    Entry it = list_item(e, i, e.value[i]);
    if (auto s = string_value(it)) out.emplace_back(*s, it);
  }
  return out;
}

std::optional<Nanos> FieldReader::duration(const Entry& e) {
  if (!e.value.IsScalar()) {
    wrong_type(e, "a duration like 500ms or 20s");
    return std::nullopt;
  }
  const std::string& s = e.value.Scalar();
  bool bare = !s.empty() && s.find_first_not_of("+-0123456789.") == std::string::npos &&
              s.find_first_of("0123456789") != std::string::npos;
  if (bare) {
    error(e.where(), e.path, "bare number '" + s + "' needs a unit, e.g. 5s");
    return std::nullopt;
  }
  if (!s.empty() && s[0] == '-') {
    error(e.where(), e.path, "duration '" + s + "' must not be negative");
    return std::nullopt;
  }
  std::optional<Nanos> d = parse_duration(s);
  if (!d) {
    error(e.where(), e.path,
          "invalid duration '" + s + "' (a number with a unit: ns, us, ms, s, m, h; e.g. 500ms)");
  }
  return d;
}

std::optional<Nanos> FieldReader::bounded_duration(const Entry& e, bool positive) {
  std::optional<Nanos> d = duration(e);
  if (d && positive && *d <= 0) {
    error(e.where(), e.path, "must be > 0");
    return std::nullopt;
  }
  return d;
}

void FieldReader::grace(const Entry& e, std::optional<Nanos>* all, std::map<Role, Nanos>* by_role) {
  if (e.value.IsScalar()) {
    *all = bounded_duration(e, false);
    return;
  }
  if (!e.value.IsMap()) {
    wrong_type(e, "a duration, or a map of roles to durations like {default: 1s, helper: 3s}");
    return;
  }
  static const Keys kGraceKeys = {"default", "launcher", "rank", "worker", "helper", "unknown"};
  for (const Entry& r : entries(e.value, e.path, &kGraceKeys, "role")) {
    auto d = bounded_duration(r, false);
    if (!d) continue;
    if (r.name == "default")
      *all = *d;
    else
      (*by_role)[*parse_role(r.name)] = *d;
  }
}

std::optional<bool> FieldReader::boolean(const Entry& e, std::string_view expected) {
  bool on = false;
  if (e.value.IsScalar() && YAML::convert<bool>::decode(e.value, on)) return on;
  wrong_type(e, expected);
  return std::nullopt;
}

std::optional<std::string> FieldReader::lookup(const std::string& name) const {
  if (auto it = vars_.find(name); it != vars_.end()) return it->second;
  if (const char* v = std::getenv(name.c_str())) return std::string(v);
  return std::nullopt;
}

std::optional<std::string> FieldReader::expand(const std::string& in, const Entry& e) {
  std::string out;
  bool ok = true;
  size_t i = 0;
  while (i < in.size()) {
    if (in[i] != '$' || i + 1 >= in.size() || in[i + 1] != '{') {
      out += in[i++];
      continue;
    }
    size_t close = in.find('}', i + 2);
    if (close == std::string::npos) {
      error(e.where(), e.path, "unterminated '${' in '" + in + "'");
      return std::nullopt;
    }
    std::string name = in.substr(i + 2, close - i - 2);
    if (name.empty()) {
      error(e.where(), e.path, "empty variable name '${}' in '" + in + "'");
      ok = false;
    } else if (std::optional<std::string> v = lookup(name)) {
      out += *v;
    } else {
      error(e.where(), e.path,
            "unknown variable ${" + name + "} (not a harness variable nor in the environment)");
      ok = false;
    }
    i = close + 1;
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> FieldReader::expanded_string(const Entry& e) {
  std::optional<std::string> s = string_value(e);
  if (!s) return std::nullopt;
  return expand(*s, e);
}

}  // namespace aftermath
