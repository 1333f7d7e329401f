// SPDX-License-Identifier: MIT
// Exit watching with pidfd + uv_poll. The init helper reports on its pipe {type, value} records:
// 1 = exec of the command failed (errno), 2 = the command exited (wait status).
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

void CloseHandle(uv_handle_t* handle) {
  Watch* watch = static_cast<Watch*>(handle->data);
  delete watch->context;
  delete watch;
}

}  // namespace

Registry::~Registry() {
  for (auto& entry : watches_) {
    Watch* watch = entry.second;
    syscall(SYS_pidfd_send_signal, watch->pidfd, SIGKILL, nullptr, 0);
    uv_poll_stop(&watch->poll);
    close(watch->pidfd);
    close(watch->report_fd);
    watch->callback.Reset();
    uv_close(reinterpret_cast<uv_handle_t*>(&watch->poll), CloseHandle);
  }
  watches_.clear();
}

void Registry::Add(long long pid, int pidfd, int report_fd, Napi::Function callback) {
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env_, &loop);
  Watch* watch = new Watch();
  watch->registry = this;
  watch->pid = pid;
  watch->pidfd = pidfd;
  watch->report_fd = report_fd;
  watch->callback = Napi::Persistent(callback);
  watch->context = new Napi::AsyncContext(env_, "zero-sandbox:exit");
  uv_poll_init(loop, &watch->poll, pidfd);
  watch->poll.data = watch;
  uv_poll_start(&watch->poll, UV_READABLE, OnReadable);
  watches_[pid] = watch;
}

bool Registry::Signal(long long pid, int sig) {
  auto it = watches_.find(pid);
  if (it == watches_.end()) return false;
  return syscall(SYS_pidfd_send_signal, it->second->pidfd, sig, nullptr, 0) == 0;
}

void Registry::OnReadable(uv_poll_t* handle, int, int) {
  Watch* watch = static_cast<Watch*>(handle->data);
  watch->registry->Finish(watch);
}

void Registry::Finish(Watch* watch) {
  uv_poll_stop(&watch->poll);
  int init_status = 0;
  pid_t reaped;
  do {
    reaped = waitpid(static_cast<pid_t>(watch->pid), &init_status, 0);
  } while (reaped < 0 && errno == EINTR);

  // Everything init wrote is in the pipe now: it has exited.
  int flags = fcntl(watch->report_fd, F_GETFL);
  fcntl(watch->report_fd, F_SETFL, flags | O_NONBLOCK);
  bool exited = false;
  int command_status = 0;
  int exec_errno = 0;
  int32_t record[2];
  for (;;) {
    ssize_t n = read(watch->report_fd, record, sizeof record);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof record)) break;
    if (record[0] == kReportExecFailed) exec_errno = record[1];
    if (record[0] == kReportExited) {
      exited = true;
      command_status = record[1];
    }
  }
  close(watch->report_fd);
  close(watch->pidfd);
  watches_.erase(watch->pid);

  Napi::Env env = env_;
  Napi::HandleScope scope(env);
  Napi::Object result = Napi::Object::New(env);
  // The command's own status when init saw it exit; otherwise init itself was killed (timeout,
  // abort, kill()), and its status stands for the whole sandbox.
  int status = exited ? command_status : init_status;
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
  result.Set("execErrno", Napi::Number::New(env, exec_errno));
  result.Set("commandExited", Napi::Boolean::New(env, exited));
  Napi::FunctionReference callback = std::move(watch->callback);
  Napi::AsyncContext* context = watch->context;
  watch->context = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&watch->poll), CloseHandle);
  try {
    callback.MakeCallback(env.Global(), {result}, *context);
  } catch (const Napi::Error& error) {
    // We are in a libuv callback with no JavaScript frame above: surface it as uncaught.
    napi_fatal_exception(env, error.Value());
  }
  delete context;
}

}  // namespace exit_watcher
