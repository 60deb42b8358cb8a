#include "harness/observe/creators.h"

#include <fcntl.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aftermath {

Status CreatorWatch::watch(const std::string& dir) {
  fd_ = UniqueFd();
  // The name of the entry with its directory's handle (FAN_REPORT_DFID_NAME,
  // Linux 5.9): an event per entry, never merged with another's.
  UniqueFd fd(::fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_NONBLOCK | FAN_CLOEXEC,
                              O_RDONLY | O_CLOEXEC));
  if (!fd) return sys_error("cannot ask the kernel who creates entries in " + dir + " (fanotify)");
  if (::fanotify_mark(fd.get(), FAN_MARK_ADD | FAN_MARK_ONLYDIR,
                      FAN_CREATE | FAN_MOVED_TO | FAN_ONDIR, AT_FDCWD, dir.c_str()) != 0)
    return sys_error("cannot watch who creates entries in " + dir + " (fanotify)");
  fd_ = std::move(fd);
  return {};
}

bool CreatorWatch::read(std::vector<CreatedEntry>* out) {
  if (!fd_) return false;
  alignas(fanotify_event_metadata) char buf[16384];
  bool complete = true;
  for (;;) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return complete;  // EAGAIN: drained
    }
    if (n == 0) return complete;
    auto* m = reinterpret_cast<fanotify_event_metadata*>(buf);
    for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
      if (m->vers != FANOTIFY_METADATA_VERSION) return false;
      if (m->mask & FAN_Q_OVERFLOW) {
        complete = false;
        continue;
      }
      // The info records after the metadata: the one with the name.
      const char* p = reinterpret_cast<const char*>(m) + m->metadata_len;
      const char* end = reinterpret_cast<const char*>(m) + m->event_len;
      while (p + sizeof(fanotify_event_info_header) <= end) {
        auto* h = reinterpret_cast<const fanotify_event_info_header*>(p);
        if (h->len == 0 || p + h->len > end) break;
        if (h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
          auto* fid = reinterpret_cast<const fanotify_event_info_fid*>(h);
          auto* fh = reinterpret_cast<const file_handle*>(fid->handle);
          const char* name = reinterpret_cast<const char*>(fh->f_handle) + fh->handle_bytes;
          if (name < p + h->len)
            out->push_back(
                CreatedEntry{std::string(name, ::strnlen(name, p + h->len - name)), m->pid});
        }
        p += h->len;
      }
    }
  }
}

}  // namespace aftermath
