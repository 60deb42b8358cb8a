// The reaper link: starting aftermath-reaper with the job behind it, reading
// its records, and ending it (reaper_protocol.h has the wire format).
//
// The reaper gets two pipe ends across exec: the write end of its records
// and the read end of our lifeline. Its parent-death signal is armed between
// fork and exec, and the race in which we die before that is closed there
// too. Records arrive on the supervisor's loop in order; what they mean for
// the run is the supervisor's business, except the words on containment,
// which are pure functions here.
#pragma once

#include <array>
#include <boost/asio.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/timeline.h"
#include "harness/os/expected.h"
#include "harness/os/pidfd.h"
#include "harness/supervise/reaper_protocol.h"

namespace aftermath {

// Splits a byte stream into whole records (a read may end mid-record).
class RecordStream {
 public:
  void append(const char* data, size_t n) { pending_.append(data, n); }
  // The next whole record, or nullopt until more bytes come.
  std::optional<reaper::Record> next();
  size_t buffered() const { return pending_.size(); }

 private:
  std::string pending_;
};

// What the reaper is started with.
struct ReaperLaunch {
  std::string reaper_path;  // aftermath-reaper
  std::string stdout_path;  // the job's output
  std::string stderr_path;
  std::string containment;            // auto | pidns | subreaper
  std::string shm;                    // auto | private | host
  std::uint64_t ignored_signals = 0;  // bit sig-1: the job starts with these ignored
  int watch_forks_ms = 0;         // >0: pid 1 of a PID namespace reports the job's forks (Forked)
  std::string cwd;                // empty: ours
  std::vector<std::string> argv;  // the job
  std::map<std::string, std::string> env;  // the job's whole environment
};

// The reaper's command line for `l` (fd numbers of its two pipe ends).
std::vector<std::string> reaper_args(const ReaperLaunch& l, int events_fd, int lifeline_fd);

// The reaper's word for how it contains the job, as the result says it.
JobContainment job_containment(reaper::Containment c);
// Why the job is held by a subreaper (Mode record's b: errno of the PID-namespace try, 0: asked).
std::string subreaper_note(int errnum);
// Why a job in a PID namespace sees the host's /proc (a ProcView record with pid != 1).
std::string proc_view_note(const reaper::Record& r);

class ReaperLink {
 public:
  explicit ReaperLink(boost::asio::io_context& ctx);
  ~ReaperLink();
  ReaperLink(const ReaperLink&) = delete;
  ReaperLink& operator=(const ReaperLink&) = delete;

  // Starts the reaper; each record it writes is passed to on_record on the
  // loop, in order. Errors: a pipe, the reaper missing, or its spawn failing.
  Status start(const ReaperLaunch& launch, std::function<void(const reaper::Record&)> on_record);
  int pid() const { return pid_; }
  // Every record it wrote has been read (its end of the pipe closed).
  bool eof() const { return eof_; }
  // Closing the lifeline ends the reaper (and, as pid 1, its namespace).
  void close_lifeline() { (void)lifeline_.close(); }
  // Calls done() on the loop once the reaper has exited and been reaped.
  void async_wait(std::function<void()> done);
  // SIGKILL to a reaper that did not go by itself (its namespace goes with it).
  void terminate();

 private:
  void read_more();

  boost::asio::io_context& ctx_;
  int pid_ = 0;
  UniqueFd pidfd_;
  bool reaped_ = false;
  std::unique_ptr<boost::asio::posix::stream_descriptor> exit_watch_;
  UniqueFd lifeline_;  // our end
  std::unique_ptr<boost::asio::posix::stream_descriptor> events_;
  std::array<char, 4096> buf_{};
  RecordStream stream_;
  bool eof_ = false;
  std::function<void(const reaper::Record&)> on_record_;
};

}  // namespace aftermath
