// SPDX-License-Identifier: MIT
// Exit watching with a pidfd and the init helper's report pipe, both polled by libuv. Report
// records are {type, value}: 1 = exec of the command failed (errno), 2 = the command exited (wait
// status), sent only after init has killed and reaped every other process in the sandbox.
#include "common/exit_watcher.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

namespace exit_watcher {
namespace {

constexpr int32_t kReportExecFailed = 1;
constexpr int32_t kReportExited = 2;
constexpr int32_t kReportLaunchFailed = 3;

}  // namespace

Registry::~Registry() {
  for (auto& entry : watches_) {
    Watch* watch = entry.second;
    syscall(SYS_pidfd_send_signal, watch->pidfd, SIGKILL, nullptr, 0);
    watch->callback.Reset();
    // The environment is being torn down: its async context must not be destroyed from the close
    // callback, which runs after the environment is gone. Leak it (one small object per sandbox
    // still alive at teardown) rather than touch a dead environment.
    watch->context = nullptr;
    if (!watch->report_done) uv_poll_stop(&watch->report_poll);
    if (!watch->reaped) uv_poll_stop(&watch->pid_poll);
    close(watch->pidfd);
    close(watch->report_fd);
    if (watch->control_fd >= 0) close(watch->control_fd);
    uv_close(reinterpret_cast<uv_handle_t*>(&watch->report_poll), OnClosed);
    uv_close(reinterpret_cast<uv_handle_t*>(&watch->pid_poll), OnClosed);
  }
  watches_.clear();
}

void Registry::Add(long long pid, int pidfd, int report_fd, Napi::Function callback, int control_fd) {
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env_, &loop);
  Watch* watch = new Watch();
  watch->registry = this;
  watch->pid = pid;
  watch->pidfd = pidfd;
  watch->report_fd = report_fd;
  watch->control_fd = control_fd;
  watch->callback = Napi::Persistent(callback);
  watch->context = new Napi::AsyncContext(env_, "zero-sandbox:exit");
  int flags = fcntl(report_fd, F_GETFL);
  fcntl(report_fd, F_SETFL, flags | O_NONBLOCK);
  uv_poll_init(loop, &watch->report_poll, report_fd);
  uv_poll_init(loop, &watch->pid_poll, pidfd);
  watch->report_poll.data = watch;
  watch->pid_poll.data = watch;
  watch->open_handles = 2;
  uv_poll_start(&watch->report_poll, UV_READABLE, OnReport);
  uv_poll_start(&watch->pid_poll, UV_READABLE, OnPidfd);
  watches_[pid] = watch;
  if (control_fd >= 0) SetRef(watch, false);
}

Watch* Registry::Find(long long pid) {
  auto it = watches_.find(pid);
  return it == watches_.end() ? nullptr : it->second;
}

void Registry::SetRef(Watch* watch, bool ref) {
  uv_handle_t* handles[2] = {reinterpret_cast<uv_handle_t*>(&watch->report_poll),
                             reinterpret_cast<uv_handle_t*>(&watch->pid_poll)};
  for (uv_handle_t* handle : handles) {
    if (ref) uv_ref(handle);
    else uv_unref(handle);
  }
}

bool Registry::Signal(long long pid, int sig) {
  auto it = watches_.find(pid);
  if (it == watches_.end() || it->second->delivered) return false;
  return syscall(SYS_pidfd_send_signal, it->second->pidfd, sig, nullptr, 0) == 0;
}

void Registry::DrainReport(Watch* watch) {
  int32_t record[2];
  for (;;) {
    ssize_t n = read(watch->report_fd, record, sizeof record);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // EAGAIN: nothing more for now
    if (n != static_cast<ssize_t>(sizeof record)) {
      watch->report_done = true;  // EOF (init is gone) or a torn record
      return;
    }
    if (record[0] == kReportExecFailed || record[0] == kReportLaunchFailed) watch->exec_errno = record[1];
    if (record[0] == kReportExited) {
      watch->command_exited = true;
      watch->command_status = record[1];
      watch->report_done = true;
      return;
    }
  }
}

void Registry::OnReport(uv_poll_t* handle, int, int) {
  Watch* watch = static_cast<Watch*>(handle->data);
  Registry* self = watch->registry;
  self->DrainReport(watch);
  if (!watch->report_done) return;
  uv_poll_stop(&watch->report_poll);
  // The command exited and everything else in the sandbox is dead: tell JavaScript now rather
  // than after the kernel has torn the namespaces down.
  if (watch->command_exited) self->Deliver(watch, 0, false);
  self->MaybeFinish(watch);
}

void Registry::OnPidfd(uv_poll_t* handle, int, int) {
  Watch* watch = static_cast<Watch*>(handle->data);
  Registry* self = watch->registry;
  uv_poll_stop(&watch->pid_poll);
  int init_status = 0;
  pid_t reaped;
  do {
    reaped = waitpid(static_cast<pid_t>(watch->pid), &init_status, 0);
  } while (reaped < 0 && errno == EINTR);
  watch->reaped = true;
  if (!watch->report_done) {
    self->DrainReport(watch);
    watch->report_done = true;
    uv_poll_stop(&watch->report_poll);
  }
  self->Deliver(watch, init_status, true);
  self->MaybeFinish(watch);
}

void Registry::Deliver(Watch* watch, int init_status, bool init_reaped) {
  if (watch->delivered) return;
  watch->delivered = true;
  Napi::Env env = env_;
  Napi::HandleScope scope(env);
  Napi::Object result = Napi::Object::New(env);
  // The command's own status when init saw it exit; otherwise init itself was killed (timeout,
  // abort, kill()), and its status stands for the whole sandbox.
  int status = watch->command_exited ? watch->command_status : init_status;
  if (!watch->command_exited && !init_reaped) status = 0;
  if (WIFEXITED(status)) {
    result.Set("exitCode", Napi::Number::New(env, WEXITSTATUS(status)));
    result.Set("signal", env.Null());
  } else if (WIFSIGNALED(status)) {
    result.Set("exitCode", env.Null());
    result.Set("signal", Napi::Number::New(env, WTERMSIG(status)));
  } else {
    result.Set("exitCode", Napi::Number::New(env, 125));
    result.Set("signal", env.Null());
  }
  result.Set("execErrno", Napi::Number::New(env, watch->exec_errno));
  result.Set("commandExited", Napi::Boolean::New(env, watch->command_exited));
  Napi::FunctionReference callback = std::move(watch->callback);
  Napi::AsyncContext* context = watch->context;
  watch->context = nullptr;
  try {
    callback.MakeCallback(env.Global(), {result}, *context);
  } catch (const Napi::Error& error) {
    // We are in a libuv callback with no JavaScript frame above: surface it as uncaught.
    napi_fatal_exception(env, error.Value());
  }
  delete context;
}

void Registry::MaybeFinish(Watch* watch) {
  if (!watch->report_done || !watch->reaped) return;
  close(watch->report_fd);
  close(watch->pidfd);
  if (watch->control_fd >= 0) close(watch->control_fd);
  watch->control_fd = -1;
  watches_.erase(watch->pid);
  uv_close(reinterpret_cast<uv_handle_t*>(&watch->report_poll), OnClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&watch->pid_poll), OnClosed);
}

void Registry::OnClosed(uv_handle_t* handle) {
  Watch* watch = static_cast<Watch*>(handle->data);
  if (--watch->open_handles == 0) {
    delete watch->context;
    delete watch;
  }
}

}  // namespace exit_watcher
