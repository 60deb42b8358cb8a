#include "harness/observe/proc_events.h"

#include <arpa/inet.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace aftermath {

namespace {

// One control message: netlink header, connector header, the operation.
bool send_op(int fd, proc_cn_mcast_op op, unsigned ack) {
  constexpr size_t kLen = NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_cn_mcast_op));
  alignas(nlmsghdr) char buf[NLMSG_SPACE(sizeof(cn_msg) + sizeof(proc_cn_mcast_op))] = {};
  auto* nl = reinterpret_cast<nlmsghdr*>(buf);
  nl->nlmsg_len = kLen;
  nl->nlmsg_type = NLMSG_DONE;
  cn_msg cn{};
  cn.id.idx = CN_IDX_PROC;
  cn.id.val = CN_VAL_PROC;
  cn.ack = ack;
  cn.len = sizeof(op);
  std::memcpy(NLMSG_DATA(nl), &cn, sizeof cn);
  std::memcpy(static_cast<char*>(NLMSG_DATA(nl)) + sizeof cn, &op, sizeof op);
  return ::send(fd, buf, kLen, MSG_NOSIGNAL) == static_cast<ssize_t>(kLen);
}

long long now_ms() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

// Walks the netlink messages of one datagram; f(event) for each proc event.
template <typename F>
void each_event(const char* buf, size_t len, F&& f) {
  auto* nl = reinterpret_cast<const nlmsghdr*>(buf);
  for (; NLMSG_OK(nl, len); nl = NLMSG_NEXT(nl, len)) {
    if (nl->nlmsg_type == NLMSG_NOOP || nl->nlmsg_type == NLMSG_ERROR) continue;
    if (nl->nlmsg_len < NLMSG_LENGTH(sizeof(cn_msg))) continue;
    cn_msg cn;
    std::memcpy(&cn, NLMSG_DATA(nl), sizeof cn);
    if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC) continue;
    if (nl->nlmsg_len < NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_event))) continue;
    proc_event ev;
    std::memcpy(&ev, static_cast<const char*>(NLMSG_DATA(nl)) + sizeof(cn_msg), sizeof ev);
    f(cn, ev);
  }
}

// A socket filter that keeps only what a tracker reads: a process's fork,
// exec, exit and comm change, and the kernel's acknowledgements. A thread's
// birth and end (most events on a machine running PyTorch, whose processes
// start dozens of threads) and the uid, gid, sid, ptrace and coredump events
// are dropped in the kernel, so they cost neither a wake nor a read here.
// Classic BPF loads are big-endian; the message is in host order, hence the
// htonl on each constant.
bool attach_filter(int fd) {
  constexpr unsigned kEv = NLMSG_LENGTH(0) + sizeof(cn_msg);  // where proc_event starts
  constexpr unsigned kWhat = kEv + offsetof(proc_event, what);
  // fork: child_pid and child_tgid; the others: process_pid and process_tgid.
  constexpr unsigned kChildPid = kEv + offsetof(proc_event, event_data.fork.child_pid);
  constexpr unsigned kChildTgid = kEv + offsetof(proc_event, event_data.fork.child_tgid);
  constexpr unsigned kPid = kEv + offsetof(proc_event, event_data.exit.process_pid);
  constexpr unsigned kTgid = kEv + offsetof(proc_event, event_data.exit.process_tgid);
  static_assert(offsetof(proc_event, event_data.comm.process_tgid) ==
                offsetof(proc_event, event_data.exit.process_tgid));
  static_assert(offsetof(proc_event, event_data.exec.process_tgid) ==
                offsetof(proc_event, event_data.exit.process_tgid));
  const auto be = [](unsigned v) { return static_cast<__u32>(htonl(v)); };
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kWhat),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, be(proc_event::PROC_EVENT_NONE), 14, 0),  // -> keep
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, be(proc_event::PROC_EVENT_FORK), 0, 5),   // -> not a fork
      // A fork: a process when the child is its own thread group's leader.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kChildPid), BPF_STMT(BPF_ST, 0),
      BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 0), BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kChildTgid),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 8, 9),                                // keep : drop
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, be(proc_event::PROC_EVENT_EXEC), 7, 0),  // -> keep
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, be(proc_event::PROC_EVENT_EXIT), 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, be(proc_event::PROC_EVENT_COMM), 0, 6),  // -> drop
      // An exit or a comm change: a process's when it is its leader's.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kPid), BPF_STMT(BPF_ST, 0),
      BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 0), BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kTgid),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),  // keep : drop
      BPF_STMT(BPF_RET | BPF_K, 0xffffffff),         // keep
      BPF_STMT(BPF_RET | BPF_K, 0),                  // drop
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return ::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) == 0;
}

}  // namespace

Expected<std::unique_ptr<ProcEvents>> ProcEvents::open(int ack_timeout_ms) {
  auto fail = [](std::string what) -> Expected<std::unique_ptr<ProcEvents>> {
    return Error{std::move(what)};
  };
  int fd = ::socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
  if (fd < 0) return fail(std::string("no proc connector socket: ") + std::strerror(errno));
  std::unique_ptr<ProcEvents> self(new ProcEvents(fd));
  // Room for bursts (a busy machine forks thousands of times a second); a
  // privileged caller may exceed rmem_max.
  int bytes = 4 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  // Without the filter every event is read and the thread ones skipped here.
  (void)attach_filter(fd);
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = CN_IDX_PROC;
  addr.nl_pid = 0;  // the kernel picks a unique port
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return fail(std::string("cannot join the proc connector group: ") + std::strerror(errno));
  // The acknowledgement is multicast to every subscriber: ours carries our ack + 1.
  static std::atomic<unsigned> counter{0};
  unsigned ack = (static_cast<unsigned>(::getpid()) << 8) ^ ++counter;
  if (!send_op(fd, PROC_CN_MCAST_LISTEN, ack))
    return fail(std::string("cannot subscribe to process events: ") + std::strerror(errno));
  long long deadline = now_ms() + ack_timeout_ms;
  char buf[4096];
  for (;;) {
    long long left = deadline - now_ms();
    if (left <= 0)
      return fail(
          "the kernel did not acknowledge the process-events subscription (not in the "
          "initial PID/user namespace?)");
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno != EINTR) return fail(std::string("poll: ") + std::strerror(errno));
    if (r <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR || errno == ENOBUFS) continue;
      return fail(std::string("recv: ") + std::strerror(errno));
    }
    int err = -1;
    each_event(buf, static_cast<size_t>(n), [&](const cn_msg& cn, const proc_event& ev) {
      if (ev.what == proc_event::PROC_EVENT_NONE && cn.ack == ack + 1)
        err = static_cast<int>(ev.event_data.ack.err);
    });
    if (err == 0) break;
    if (err > 0) return fail(std::string("process events refused: ") + std::strerror(err));
  }
  return self;
}

ProcEvents::~ProcEvents() {
  if (fd_ < 0) return;
  (void)send_op(fd_, PROC_CN_MCAST_IGNORE, 0);
  ::close(fd_);
}

bool ProcEvents::drain(const std::function<void(const ProcEvent&)>& f) {
  bool complete = true;
  constexpr int kBatch = 32;
  static thread_local char bufs[kBatch][512];
  iovec iov[kBatch];
  mmsghdr msgs[kBatch];
  for (;;) {
    for (int i = 0; i < kBatch; ++i) {
      iov[i] = {bufs[i], sizeof bufs[i]};
      std::memset(&msgs[i], 0, sizeof msgs[i]);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int n = ::recvmmsg(fd_, msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ENOBUFS) {  // overrun: some events are gone for good
        complete = false;
        continue;
      }
      return complete;  // EAGAIN: nothing more pending
    }
    for (int i = 0; i < n; ++i) {
      each_event(bufs[i], msgs[i].msg_len, [&](const cn_msg&, const proc_event& ev) {
        ProcEvent e;
        switch (ev.what) {
          case proc_event::PROC_EVENT_FORK:
            e.kind = ProcEvent::Kind::Fork;
            e.pid = ev.event_data.fork.child_pid;
            e.tgid = ev.event_data.fork.child_tgid;
            e.parent_pid = ev.event_data.fork.parent_pid;
            e.parent_tgid = ev.event_data.fork.parent_tgid;
            break;
          case proc_event::PROC_EVENT_EXEC:
            e.kind = ProcEvent::Kind::Exec;
            e.pid = ev.event_data.exec.process_pid;
            e.tgid = ev.event_data.exec.process_tgid;
            break;
          case proc_event::PROC_EVENT_EXIT:
            e.kind = ProcEvent::Kind::Exit;
            e.pid = ev.event_data.exit.process_pid;
            e.tgid = ev.event_data.exit.process_tgid;
            e.exit_status = static_cast<int>(ev.event_data.exit.exit_code);
            break;
          case proc_event::PROC_EVENT_COMM:
            e.kind = ProcEvent::Kind::Comm;
            e.pid = ev.event_data.comm.process_pid;
            e.tgid = ev.event_data.comm.process_tgid;
            break;
          default:
            return;
        }
        f(e);
      });
    }
    if (n < kBatch) return complete;
  }
}

}  // namespace aftermath
