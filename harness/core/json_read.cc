#include "harness/core/json_read.h"

#include <cmath>

namespace aftermath::json_read {

using nlohmann::json;

void fail(const std::string& path, std::string problem) {
  throw ReadError{path, std::move(problem)};
}

std::string shown(const std::string& s) {
  constexpr std::size_t kMax = 40;
  return "\"" + (s.size() <= kMax ? s : s.substr(0, kMax) + "...") + "\"";
}

void wrong_type(const std::string& path, const char* wanted, const json& v) {
  fail(path, std::string("should be ") + wanted + ", not " + v.type_name());
}

std::string member_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool boolean(const json& v, const std::string& path) {
  if (!v.is_boolean()) wrong_type(path, "true or false", v);
  return v.get<bool>();
}

const std::string& text(const json& v, const std::string& path) {
  if (!v.is_string()) wrong_type(path, "a string", v);
  return v.get_ref<const std::string&>();
}

double number(const json& v, const std::string& path) {
  if (!v.is_number()) wrong_type(path, "a number", v);
  return v.get<double>();
}

std::int64_t millis_to_nanos(const json& v, const std::string& path) {
  const double ms = number(v, path);
  if (!std::isfinite(ms) || std::fabs(ms) > 9.2e12) fail(path, "is out of range");
  return std::llround(ms * 1e6);
}

}  // namespace aftermath::json_read
