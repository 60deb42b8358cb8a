// A temporary folder for one test, removed with everything in it at scope
// end; write() plants files (fake /proc and cgroup trees, scripts, configs).
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace aftermath::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "aftermath-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (tag + "-XXXXXX")).string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (char* p = ::mkdtemp(buf.data())) path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

  // Writes `content` to path()/rel (folders made as needed); the file's path.
  std::string write(const std::string& rel, const std::string& content, mode_t mode = 0644) const {
    std::string file = path_ + "/" + rel;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
    ::chmod(file.c_str(), mode);
    return file;
  }

 private:
  std::string path_;
};

}  // namespace aftermath::testing
