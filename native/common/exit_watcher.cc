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
    net_holders::Discard(watch->holder);
    CloseCaptures(watch);
    uv_close(reinterpret_cast<uv_handle_t*>(&watch->report_poll), OnClosed);
    uv_close(reinterpret_cast<uv_handle_t*>(&watch->pid_poll), OnClosed);
  }
  watches_.clear();
}

void Registry::Add(long long pid, int pidfd, int report_fd, net_holders::Holder holder, Napi::Function callback,
                   int control_fd) {
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env_, &loop);
  Watch* watch = new Watch();
  watch->registry = this;
  watch->pid = pid;
  watch->pidfd = pidfd;
  watch->report_fd = report_fd;
  watch->control_fd = control_fd;
  watch->holder = holder;
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

void Registry::StartCapture(Watch* watch, const int* fds, double max_buffer, bool overflow_kill) {
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env_, &loop);
  watch->max_buffer = max_buffer;
  watch->overflow_kill = overflow_kill;
  for (int i = 0; i < 2; ++i) {
    if (fds[i] < 0) continue;
    Capture* capture = &watch->captures[i];
    capture->watch = watch;
    capture->fd = fds[i];
    capture->eof = false;
    capture->buffer.SetCap(overflow_kill ? 0 : static_cast<size_t>(max_buffer));
    fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    uv_poll_init(loop, &capture->poll, fds[i]);
    capture->poll.data = capture;
    ++watch->open_handles;
    uv_poll_start(&capture->poll, UV_READABLE, OnCapture);
  }
}

void Registry::DrainCapture(Watch* watch, Capture* capture) {
  char buf[65536];
  while (!capture->eof) {
    ssize_t n = read(capture->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      capture->eof = true;  // EOF, or a read error that ends the stream all the same
      uv_poll_stop(&capture->poll);
      return;
    }
    if (watch->overflow != 0) continue;  // the sandbox is being killed: discard the rest
    if (watch->overflow_kill && watch->max_buffer > 0 && capture->buffer.total() + n > watch->max_buffer) {
      watch->overflow = capture == &watch->captures[0] ? 1 : 2;
      syscall(SYS_pidfd_send_signal, watch->pidfd, SIGKILL, nullptr, 0);
      continue;
    }
    capture->buffer.Append(buf, static_cast<size_t>(n));
  }
}

bool Registry::CapturesDone(const Watch* watch) const {
  return watch->captures[0].eof && watch->captures[1].eof;
}

void Registry::CloseCaptures(Watch* watch) {
  for (Capture& capture : watch->captures) {
    if (capture.fd < 0) continue;
    uv_poll_stop(&capture.poll);
    close(capture.fd);
    capture.fd = -1;
    uv_close(reinterpret_cast<uv_handle_t*>(&capture.poll), OnCaptureClosed);
  }
}

void Registry::OnCapture(uv_poll_t* handle, int, int) {
  Capture* capture = static_cast<Capture*>(handle->data);
  Watch* watch = capture->watch;
  Registry* self = watch->registry;
  self->DrainCapture(watch, capture);
  // The command has exited and its output is complete.
  if (watch->command_exited && watch->report_done && self->CapturesDone(watch)) {
    self->Deliver(watch, 0, false);
    self->MaybeFinish(watch);
  }
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
  // than after the kernel has torn the namespaces down, once captured output has reached EOF
  // (every writer is dead, so what is left sits in the pipes).
  for (Capture& capture : watch->captures) self->DrainCapture(watch, &capture);
  if (watch->command_exited && self->CapturesDone(watch)) self->Deliver(watch, 0, false);
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
  // Every process of the sandbox is gone: take what the pipes hold without waiting for EOF (a
  // descriptor stuck in flight could otherwise hold a pipe open).
  for (Capture& capture : watch->captures) {
    self->DrainCapture(watch, &capture);
    if (!capture.eof) {
      capture.eof = true;
      uv_poll_stop(&capture.poll);
    }
  }
  self->Deliver(watch, init_status, true);
  self->MaybeFinish(watch);
}

// {exitCode, signal, execErrno, commandExited, stdout?, stderr?, <stream>Bytes?, <stream>Tail?,
// overflow?} for JavaScript.
Napi::Object Registry::BuildExit(Watch* watch, int init_status, bool init_reaped) {
  Napi::Env env = env_;
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
  const char* names[2] = {"stdout", "stderr"};
  for (int i = 0; i < 2; ++i) {
    Capture& capture = watch->captures[i];
    if (capture.watch == nullptr) continue;
    const std::string name = names[i];
    result.Set(name, Napi::String::New(env, capture.buffer.head_data(), capture.buffer.HeadSize()));
    result.Set(name + "Bytes", Napi::Number::New(env, capture.buffer.total()));
    if (capture.buffer.truncated()) result.Set(name + "Tail", Napi::String::New(env, capture.buffer.Tail()));
    capture.buffer.Clear();
  }
  if (watch->overflow != 0) result.Set("overflow", Napi::String::New(env, names[watch->overflow - 1]));
  return result;
}

void Registry::Deliver(Watch* watch, int init_status, bool init_reaped) {
  if (watch->delivered) return;
  watch->delivered = true;
  Napi::FunctionReference callback = std::move(watch->callback);
  Napi::AsyncContext* context = watch->context;
  watch->context = nullptr;
  // A libuv callback has no JavaScript frame above it, so nothing may escape as a C++ exception:
  // a JavaScript error is surfaced as uncaught, and while the environment is being torn down
  // (where every call fails) there is no one left to tell.
  try {
    Napi::HandleScope scope(env_);
    Napi::Object result = BuildExit(watch, init_status, init_reaped);
    callback.MakeCallback(env_.Global(), {result}, *context);
  } catch (const Napi::Error& error) {
    try {
      napi_value value = error.Value();
      if (value != nullptr) napi_fatal_exception(env_, value);
    } catch (...) {
      // the environment is gone: nothing can be reported
    }
  } catch (...) {
    // not a JavaScript error (e.g. out of memory building the result): the exit cannot be delivered
  }
  delete context;
}

void Registry::MaybeFinish(Watch* watch) {
  if (!watch->report_done || !watch->reaped) return;
  close(watch->report_fd);
  close(watch->pidfd);
  if (watch->control_fd >= 0) close(watch->control_fd);
  watch->control_fd = -1;
  // Init has been reaped, so every process of the sandbox is gone: its network namespace is free.
  net_holders::Release(watch->holder);
  watch->holder = net_holders::Holder();
  CloseCaptures(watch);
  watches_.erase(watch->pid);
  uv_close(reinterpret_cast<uv_handle_t*>(&watch->report_poll), OnClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&watch->pid_poll), OnClosed);
}

void Registry::OnClosed(uv_handle_t* handle) {
  Release(static_cast<Watch*>(handle->data));
}

void Registry::OnCaptureClosed(uv_handle_t* handle) {
  Release(static_cast<Capture*>(handle->data)->watch);
}

void Registry::Release(Watch* watch) {
  if (--watch->open_handles == 0) {
    delete watch->context;
    delete watch;
  }
}

}  // namespace exit_watcher
