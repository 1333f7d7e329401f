// SPDX-License-Identifier: MIT
// Exit watching with a pidfd polled by libuv (see exit_watcher.h for why only the kernel decides).
// The init's report records are defined in init_wire.h; the capture of stdout and stderr is in
// exit_capture.cc.
#include "linux/exit_watcher.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <limits>
#include <string>

#include "linux/init_wire.h"
#include "linux/kernel_compat.h"
#include "linux/mount_templates.h"

#ifndef PIDFD_GET_MNT_NAMESPACE
#define PIDFD_GET_MNT_NAMESPACE _IO(0xFF, 3)
#endif

namespace exit_watcher {
namespace {

using namespace init_wire;

// The init's exit code for a wait status (init_main.cc ExitCodeFor): the code, or 128+N.
int ExitCodeFor(int status) {
  if (WIFSIGNALED(status)) return (128 + WTERMSIG(status)) & 0xff;
  return WEXITSTATUS(status);
}

// The mask slot an open names: -1 for a watch on the mask file itself (no name), the slot of a
// staging name "m<slot>" for the watch on the staging directory, -2 for any other name.
int MaskSlotOf(const struct inotify_event* event) {
  if (event->len == 0 || event->name[0] == '\0') return -1;
  if (event->name[0] != 'm' || event->name[1] == '\0') return -2;
  int slot = 0;
  for (const char* c = event->name + 1; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || slot > 100000000) return -2;
    slot = slot * 10 + (*c - '0');
  }
  return slot;
}

// The sandbox's mount namespace, held by the host, or -1. While the sandbox runs its init holds
// it too, so this changes nothing there; what it changes is who tears it down. Without it the
// init's exit unmounts every mount of the sandbox (and waits for an RCU grace period) before the
// kernel reports the exit; with it the init's exit only drops a reference, the exit is reported
// sooner, and the unmounts happen when this descriptor is closed, off the event loop's thread,
// once the exit is known (ReleaseMountNamespace). Which processes exist is not affected: the
// namespace holds mounts, not processes, and nothing can enter it but through this descriptor.
int HoldMountNamespace(int pidfd, long long pid) {
  int fd = ioctl(pidfd, PIDFD_GET_MNT_NAMESPACE, 0);
  if (fd >= 0) return fd;
  // Before Linux 6.11: the init is our unreaped child, so its pid still names it.
  const std::string path = "/proc/" + std::to_string(pid) + "/ns/mnt";
  return open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

}  // namespace

void KillAndReap(int pidfd) {
  syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  siginfo_t info;
  for (;;) {
    if (waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED) == 0)
      return;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return;  // reaped already
    // The pidfds are non-blocking (the watcher polls them): waitid answers EAGAIN until the exit
    // makes the pidfd readable.
    struct pollfd ready = {pidfd, POLLIN, 0};
    poll(&ready, 1, -1);
  }
}

Registry::~Registry() {
  for (auto& entry : watches_) {
    Watch* watch = entry.second;
    // Reaped here: nothing else of this process waits for it (a zombie per sandbox otherwise).
    // Then it is gone with every process of its pid namespace, and its template is free again.
    if (!watch->reaped) KillAndReap(watch->pidfd);
    watch->reaped = true;
    if (watch->template_id >= 0) mount_templates::Return(watch->template_id);
    watch->callback.Reset();
    // The environment is being torn down: its async context must not be destroyed from the close
    // callback, which runs after the environment is gone. Leak it (one small object per sandbox
    // still alive at teardown) rather than touch a dead environment.
    watch->context = nullptr;
    uv_poll_stop(&watch->pid_poll);
    close(watch->pidfd);
    close(watch->report_fd);
    if (watch->control_fd >= 0) close(watch->control_fd);
    if (watch->mount_ns_fd >= 0) close(watch->mount_ns_fd);
    net_holders::Discard(watch->holder);
    CloseCaptures(watch);
    uv_close(reinterpret_cast<uv_handle_t*>(&watch->pid_poll), OnClosed);
  }
  watches_.clear();
  if (mask_watch_fd_ >= 0) close(mask_watch_fd_);
}

int Registry::MaskWatchFd() {
  if (mask_watch_fd_ == -2) mask_watch_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  return mask_watch_fd_;
}

// Moves every queued open of a file mask into opened_masks_. The kernel queues the event inside
// the open itself, so once a sandbox is reaped every open its processes made is queued. Events of
// sandboxes still running are kept for their own exit; an overflowed queue loses some (the kernel
// then queues IN_Q_OVERFLOW), which only means fewer reports, never a wrong one.
void Registry::DrainMaskOpens() {
  if (mask_watch_fd_ < 0) return;
  alignas(struct inotify_event) char buf[4096];
  for (;;) {
    ssize_t n = read(mask_watch_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(struct inotify_event)) <= n;) {
      const struct inotify_event* event = reinterpret_cast<const struct inotify_event*>(buf + at);
      if ((event->mask & IN_OPEN) != 0 && event->wd >= 0)
        opened_masks_.insert({event->wd, MaskSlotOf(event)});
      at += static_cast<ssize_t>(sizeof(struct inotify_event) + event->len);
    }
  }
}

Watch* Registry::Add(long long pid, int pidfd, int report_fd, net_holders::Holder holder,
                     Napi::Function callback, int control_fd) {
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env_, &loop);
  Watch* watch = new Watch();
  watch->registry = this;
  watch->pid = pid;
  watch->pidfd = pidfd;
  watch->report_fd = report_fd;
  watch->control_fd = control_fd;
  watch->holder = holder;
  watch->mount_ns_fd = HoldMountNamespace(pidfd, pid);
  watch->callback = Napi::Persistent(callback);
  watch->context = new Napi::AsyncContext(env_, "zero-sandbox:exit");
  // Read only once the init is reaped, when every writer is gone: never wait on it.
  fcntl(report_fd, F_SETFL, fcntl(report_fd, F_GETFL) | O_NONBLOCK);
  uv_poll_init(loop, &watch->pid_poll, pidfd);
  watch->pid_poll.data = watch;
  watch->open_handles = 1;
  uv_poll_start(&watch->pid_poll, UV_READABLE, OnPidfd);
  watches_[pid] = watch;
  if (control_fd >= 0) SetRef(watch, false);
  return watch;
}

Watch* Registry::Find(long long pid) {
  auto it = watches_.find(pid);
  return it == watches_.end() ? nullptr : it->second;
}

void Registry::SetRef(Watch* watch, bool ref) {
  uv_handle_t* handle = reinterpret_cast<uv_handle_t*>(&watch->pid_poll);
  if (ref)
    uv_ref(handle);
  else
    uv_unref(handle);
}

bool Registry::Signal(long long pid, int sig) {
  auto it = watches_.find(pid);
  if (it == watches_.end() || it->second->reaped) return false;
  return syscall(SYS_pidfd_send_signal, it->second->pidfd, sig, nullptr, 0) == 0;
}

// Every writer of the pipe is gone when this runs, so it reads what is there and stops at EOF.
// Records are data: a torn or unknown one is skipped, the last of each kind wins.
ReportRecords Registry::DrainReport(Watch* watch) {
  ReportRecords records;
  ReportRecord record;
  for (;;) {
    ssize_t n = read(watch->report_fd, &record, sizeof record);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof record)) break;  // EOF, EAGAIN or a torn record
    if (record.type == kReportExecFailed || record.type == kReportLaunchFailed)
      records.exec_errno = record.value;
    if (record.type == kReportNoRoute && record.value > 0) records.no_route = record.value;
    if (record.type == kReportFull && record.value >= 0 && record.value < kWatchSlots)
      records.full |= 1 << record.value;
    if (record.type == kReportProcessCap) records.process_cap = true;
    if (record.type == kReportExited) {
      records.has_status = true;
      records.status = record.value;
    }
  }
  return records;
}

void Registry::OnPidfd(uv_poll_t* handle, int, int) {
  Watch* watch = static_cast<Watch*>(handle->data);
  Registry* self = watch->registry;
  siginfo_t info;
  memset(&info, 0, sizeof info);
  int rc;
  do {
    rc = waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(watch->pidfd), &info,
                WEXITED | WNOHANG);
  } while (rc < 0 && errno == EINTR);
  // Still running (a readable pidfd means it has exited, so this is only a spurious wake-up).
  if (rc == 0 && info.si_pid == 0) return;
  uv_poll_stop(&watch->pid_poll);
  watch->reaped = true;
  InitEnd end;
  if (rc != 0) {
    end.value = 125;  // reaped by someone else: the pidfd proves it is gone, its status is lost
  } else if (info.si_code == CLD_EXITED) {
    end.value = info.si_status;
  } else {
    end.killed = true;
    end.value = info.si_status;
  }
  // Every process of the sandbox is gone: only now is what it wrote read. Take what the pipes
  // hold without waiting for EOF (a descriptor stuck in flight could otherwise hold one open).
  ReportRecords report = self->DrainReport(watch);
  self->DrainMaskOpens();
  for (Capture& capture : watch->captures) {
    self->DrainCapture(watch, &capture);
    if (!capture.eof) {
      capture.eof = true;
      uv_poll_stop(&capture.poll);
    }
  }
  // Torn down beside the work after the exit rather than ahead of it.
  self->ReleaseMountNamespace(watch);
  self->Deliver(watch, end, report);
  self->Finish(watch);
}

// {exitCode, signal, execErrno, commandExited, stdout?, stderr?, <stream>Bytes?, <stream>Tail?,
// overflow?} for JavaScript. The kernel's word decides: a killed init is the whole sandbox killed;
// an exiting init's code is the command's. The report may only refine that code (exit status
// versus signal) when it agrees with it, and an exec errno counts only with the codes a failed
// exec or launch produces.
Napi::Object Registry::BuildExit(Watch* watch, const InitEnd& end, const ReportRecords& report) {
  Napi::Env env = env_;
  Napi::Object result = Napi::Object::New(env);
  bool agrees = !end.killed && report.has_status && ExitCodeFor(report.status) == end.value;
  int exec_errno = !end.killed && end.value >= 125 && end.value <= 127 ? report.exec_errno : 0;
  if (end.killed || (agrees && WIFSIGNALED(report.status))) {
    result.Set("exitCode", env.Null());
    result.Set("signal", Napi::Number::New(env, end.killed ? end.value : WTERMSIG(report.status)));
  } else {
    result.Set("exitCode", Napi::Number::New(env, end.value));
    result.Set("signal", env.Null());
  }
  result.Set("execErrno", Napi::Number::New(env, exec_errno));
  result.Set("commandExited", Napi::Boolean::New(env, agrees));
  // Written by the init (the command cannot reach the pipe); a count, believed as such.
  if (report.no_route > 0) result.Set("noRouteSends", Napi::Number::New(env, report.no_route));
  // Also the init's: the kernel's numbers once every other process was gone (tmpfs) or its own
  // refused fork (the process cap), never anything the command wrote.
  if ((report.full & 1) != 0) result.Set("tmpFull", Napi::Boolean::New(env, true));
  if ((report.full & 2) != 0) result.Set("shmFull", Napi::Boolean::New(env, true));
  if (report.process_cap) result.Set("processCapHit", Napi::Boolean::New(env, true));
  const char* names[2] = {"stdout", "stderr"};
  for (int i = 0; i < 2; ++i) {
    Capture& capture = watch->captures[i];
    if (capture.watch == nullptr) continue;
    const std::string name = names[i];
    result.Set(name, Napi::String::New(env, capture.buffer.head_data(), capture.buffer.HeadSize()));
    result.Set(name + "Bytes", Napi::Number::New(env, capture.buffer.total()));
    if (capture.buffer.truncated())
      result.Set(name + "Tail", Napi::String::New(env, capture.buffer.Tail()));
    if (capture.buffer.spill_failed()) result.Set("spillFailed", Napi::Boolean::New(env, true));
    capture.buffer.Clear();
  }
  if (watch->overflow != 0)
    result.Set("overflow", Napi::String::New(env, names[watch->overflow - 1]));
  // The kernel's record of opens of the masks (the command cannot write to our inotify instance):
  // the indices, in mount order, of the file masks a process of the sandbox opened.
  Napi::Array masked = Napi::Array::New(env);
  for (size_t i = 0; i < watch->mask_wds.size(); ++i) {
    int wd = watch->mask_wds[i];
    if (wd >= 0 && (opened_masks_.count({wd, -1}) != 0 ||
                    opened_masks_.count({wd, static_cast<int>(i)}) != 0)) {
      masked.Set(masked.Length(), Napi::Number::New(env, static_cast<double>(i)));
    }
  }
  if (masked.Length() > 0) result.Set("maskedReads", masked);
  return result;
}

void Registry::Deliver(Watch* watch, const InitEnd& end, const ReportRecords& report) {
  if (watch->delivered) return;
  watch->delivered = true;
  Napi::FunctionReference callback = std::move(watch->callback);
  Napi::AsyncContext* context = watch->context;
  watch->context = nullptr;
  // A libuv callback has no JavaScript frame above it, so nothing may escape it as a C++
  // exception. A JavaScript error thrown by the callback (a listener of the exit) becomes an
  // uncaught exception, as for any event Node itself emits; the handle scope stays open while the
  // error is read. While the environment is torn down (every call fails) no one is left to tell.
  try {
    Napi::HandleScope scope(env_);
    try {
      Napi::Object result = BuildExit(watch, end, report);
      callback.MakeCallback(env_.Global(), {result}, *context);
    } catch (const Napi::Error& error) {
      napi_value value = error.Value();
      if (value != nullptr) napi_fatal_exception(env_, value);
    }
  } catch (...) {
    // the environment is gone, or memory ran out: the exit cannot be delivered
  }
  delete context;
}

void Registry::Finish(Watch* watch) {
  for (int wd : watch->mask_wds) {
    opened_masks_.erase(opened_masks_.lower_bound({wd, -2}),
                        opened_masks_.upper_bound({wd, std::numeric_limits<int>::max()}));
  }
  close(watch->report_fd);
  close(watch->pidfd);
  if (watch->control_fd >= 0) close(watch->control_fd);
  watch->control_fd = -1;
  // Init has been reaped, so every process of the sandbox is gone: its network namespace is free,
  // and so is its mount template (the opens of its masks were taken above).
  net_holders::Release(watch->holder);
  if (watch->template_id >= 0) mount_templates::Return(watch->template_id);
  watch->template_id = -1;
  watch->holder = net_holders::Holder();
  CloseCaptures(watch);
  watches_.erase(watch->pid);
  uv_close(reinterpret_cast<uv_handle_t*>(&watch->pid_poll), OnClosed);
}

// Closes the held mount namespace off the event loop's thread (namespace_release.h).
void Registry::ReleaseMountNamespace(Watch* watch) {
  int fd = watch->mount_ns_fd;
  watch->mount_ns_fd = -1;
  namespace_release::Release(fd);
}

void Registry::OnClosed(uv_handle_t* handle) { Release(static_cast<Watch*>(handle->data)); }

void Registry::Release(Watch* watch) {
  if (--watch->open_handles == 0) {
    delete watch->context;
    delete watch;
  }
}

}  // namespace exit_watcher
