// Small reads the tests make of files and of /proc.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <sstream>
#include <string>

namespace aftermath::testing {

// The whole file, bytes as they are; empty when it cannot be read.
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Whether `pid` still names a live process: not gone, not a zombie, not dead.
inline bool alive(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(f, s)) return false;
  auto close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() && s[close + 2] != 'Z' &&
         s[close + 2] != 'X';
}

// Its state letter from /proc/PID/stat ('S', 'T', 'Z', ...); '?' when gone.
inline char proc_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(in, s)) return '?';
  auto close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() ? s[close + 2] : '?';
}

// Non-overlapping occurrences of a non-empty `needle` in `hay`.
inline size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); !needle.empty() && p != std::string::npos;
       p = hay.find(needle, p + needle.size())) {
    ++n;
  }
  return n;
}

// Creates (or empties) the file at `path`.
inline void touch(const std::string& path) { std::ofstream(path).flush(); }

}  // namespace aftermath::testing
