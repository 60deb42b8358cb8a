// A tree of idle processes for benchmarks: a root with `ranks` children,
// each with `workers` children (8 x 16 + 1 = the 136-process job), or any
// flat size. Every process blocks on a pipe and bounds its own life; the
// tree is torn down (killed and reaped) by the destructor.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace bench {

class ProcessTree {
 public:
  // Total processes = 1 + ranks + ranks * workers.
  ProcessTree(int ranks, int workers) {
    int ready[2];
    if (pipe(ready) != 0) return;
    int hold[2];
    if (pipe(hold) != 0) return;
    int total = 1 + ranks + ranks * workers;
    root_ = fork();
    if (root_ == 0) {
      close(ready[0]);
      close(hold[1]);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      alarm(600);
      std::vector<pid_t> kids;
      for (int r = 0; r < ranks; ++r) {
        pid_t p = fork();
        if (p == 0) {
          prctl(PR_SET_PDEATHSIG, SIGKILL);
          alarm(600);
          std::vector<pid_t> ws;
          for (int w = 0; w < workers; ++w) {
            pid_t q = fork();
            if (q == 0) {
              prctl(PR_SET_PDEATHSIG, SIGKILL);
              alarm(600);
              if (write(ready[1], "w", 1) != 1) _exit(1);
              char c;
              while (read(hold[0], &c, 1) > 0) {
              }
              _exit(0);
            }
            ws.push_back(q);
          }
          if (write(ready[1], "r", 1) != 1) _exit(1);
          char c;
          while (read(hold[0], &c, 1) > 0) {
          }
          for (pid_t q : ws) waitpid(q, nullptr, 0);
          _exit(0);
        }
        kids.push_back(p);
      }
      if (write(ready[1], "t", 1) != 1) _exit(1);
      char c;
      while (read(hold[0], &c, 1) > 0) {
      }
      for (pid_t p : kids) waitpid(p, nullptr, 0);
      _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    hold_ = hold[1];
    char c;
    for (int i = 0; i < total; ++i)
      if (read(ready[0], &c, 1) != 1) break;
    close(ready[0]);
    size_ = total;
  }
  ~ProcessTree() {
    if (hold_ >= 0) close(hold_);  // EOF: every process in the tree exits
    if (root_ > 0) waitpid(root_, nullptr, 0);
  }
  pid_t root() const { return root_; }
  int size() const { return size_; }

 private:
  pid_t root_ = -1;
  int hold_ = -1;
  int size_ = 0;
};

}  // namespace bench
