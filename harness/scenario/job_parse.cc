#include "harness/scenario/job_parse.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <system_error>
#include <vector>

#include "harness/os/expected.h"
#include "harness/os/find_program.h"

namespace aftermath {

namespace fs = std::filesystem;

std::string absolute_normal(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  std::string s = abs.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

namespace {

const Keys kJobKeys = {"command", "args", "env", "cwd", "signals"};

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// The absolute path of an existing executable for `cmd`.
Expected<std::string> resolve(const std::string& cmd, const std::string& base_dir,
                              bool string_command) {
  if (cmd.find('/') == std::string::npos) {
    if (std::optional<std::string> found = find_program(cmd)) return absolute_normal(*found);
    std::string hint;
    if (string_command && cmd.find_first_of(" \t") != std::string::npos) {
      hint = " (a string command is one program; put its arguments in a list or in job.args)";
    }
    return Error{"command '" + cmd + "' not found in PATH" + hint};
  }
  fs::path p(cmd);
  std::string abs = absolute_normal(p.is_relative() ? fs::path(base_dir) / p : p);
  struct stat st;
  if (::stat(abs.c_str(), &st) != 0) {
    int err = errno;
    return Error{"command not found: " + abs + ": " + errno_text(err), err};
  }
  if (!S_ISREG(st.st_mode)) return Error{"command is not a regular file: " + abs};
  if (::access(abs.c_str(), X_OK) != 0) return Error{"command is not executable: " + abs, errno};
  return abs;
}

// An existing directory, or why not.
Status check_directory(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    int err = errno;
    return Error{dir + ": " + errno_text(err), err};
  }
  if (!S_ISDIR(st.st_mode)) return Error{dir + ": not a directory"};
  return {};
}

// `command:` as a string (one program) or a list [program, arg, ...], expanded.
struct Command {
  std::vector<std::string> argv;
  bool ok = true;
  std::optional<Entry> prog;  // where argv[0] came from, for lookup errors
  bool string_command = false;
};

Command parse_command(FieldReader& r, const Entry* cmd, const Entry& je) {
  Command c;
  if (cmd == nullptr) {
    r.missing(je.value, child(je.path, "command"));
    c.ok = false;
  } else if (cmd->value.IsScalar()) {
    c.string_command = true;
    c.prog = *cmd;
    if (std::optional<std::string> v = r.expand(cmd->value.Scalar(), *cmd)) {
      if (v->empty()) {
        r.error(cmd->where(), cmd->path, "must not be empty");
        c.ok = false;
      }
      c.argv.push_back(*v);
    } else {
      c.ok = false;
    }
  } else if (cmd->value.IsSequence()) {
    if (cmd->value.size() == 0) {
      r.error(cmd->where(), cmd->path, "must not be empty: a list [program, arg, ...]");
      c.ok = false;
    }
    for (size_t i = 0; i < cmd->value.size(); ++i) {
      Entry it = FieldReader::list_item(*cmd, i, cmd->value[i]);
      if (i == 0) c.prog = it;
      std::optional<std::string> v = r.expanded_string(it);
      if (!v) {
        c.ok = false;
        continue;
      }
      if (i == 0 && v->empty()) {
        r.error(it.where(), it.path, "the program must not be empty");
        c.ok = false;
      }
      c.argv.push_back(*v);
    }
  } else {
    r.wrong_type(*cmd, "a string or a list [program, arg, ...]");
    c.ok = false;
  }
  return c;
}

void parse_env(FieldReader& r, const Entry& env, Job* job) {
  if (!env.value.IsMap()) {
    r.wrong_type(env, "a map of NAME: value");
    return;
  }
  for (const Entry& var : r.entries(env.value, env.path, nullptr)) {
    if (var.name.empty() || var.name.find('=') != std::string::npos) {
      r.error(var.key.Mark(), var.path, "invalid environment variable name '" + var.name + "'");
      continue;
    }
    if (var.value.IsNull()) {
      r.error(var.where(), var.path, "expected a value (write \"\" for an empty one)");
      continue;
    }
    if (std::optional<std::string> v = r.expanded_string(var)) job->env[var.name] = *v;
  }
}

}  // namespace

void parse_job(FieldReader& r, const Entry& je, const std::string& base_dir, bool check_command,
               Job* job) {
  if (!je.value.IsMap()) {
    r.wrong_type(je, "a map");
    return;
  }
  std::vector<Entry> es = r.entries(je.value, je.path, &kJobKeys);
  Command c = parse_command(r, FieldReader::find(es, "command"), je);

  if (const Entry* args = FieldReader::find(es, "args")) {
    if (!args->value.IsSequence()) {
      r.wrong_type(*args, "a list");
    } else {
      for (size_t i = 0; i < args->value.size(); ++i) {
        Entry it = FieldReader::list_item(*args, i, args->value[i]);
        if (std::optional<std::string> v = r.expanded_string(it)) c.argv.push_back(*v);
      }
    }
  }
  if (const Entry* env = FieldReader::find(es, "env")) parse_env(r, *env, job);

  if (const Entry* cwd = FieldReader::find(es, "cwd")) {
    if (std::optional<std::string> v = r.expanded_string(*cwd)) {
      if (v->empty()) {
        r.error(cwd->where(), cwd->path, "must not be empty");
      } else {
        fs::path p(*v);
        job->cwd = absolute_normal(p.is_relative() ? fs::path(base_dir) / p : p);
        if (check_command) {
          if (Status st = check_directory(job->cwd); !st) {
            r.error(cwd->where(), cwd->path, st.error().what);
          }
        }
      }
    }
  }

  if (const Entry* sig = FieldReader::find(es, "signals")) {
    if (std::optional<std::string> v = r.string_value(*sig)) {
      if (*v == "inherited")
        job->inherit_ignored_signals = true;
      else if (*v != "default")
        r.error(sig->where(), sig->path,
                "unknown value '" + *v +
                    "' (default: every signal at its default disposition; inherited: those "
                    "aftermath's caller left ignored)");
    }
  }

  if (c.ok && !c.argv.empty() && check_command) {
    Expected<std::string> resolved = resolve(c.argv[0], base_dir, c.string_command);
    if (resolved) {
      c.argv[0] = *resolved;
    } else {
      r.error(c.prog->where(), c.prog->path, resolved.error().what);
    }
  }
  job->argv = std::move(c.argv);
}

}  // namespace aftermath
