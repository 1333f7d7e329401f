// SPDX-License-Identifier: MIT
// Watches sandboxes on the Node event loop: the init helper's report pipe says when the command
// has exited (after init killed and reaped everything else), and a pidfd says when init itself is
// gone (so it is reaped; also the fallback when init was killed before reporting). No threads.
#pragma once

#include <napi.h>
#include <uv.h>

#include <map>
#include <string>

#include "common/capture_buffer.h"
#include "linux/net_holders.h"

namespace exit_watcher {

class Registry;
struct Watch;

// One stream the addon reads itself (runSandboxed's stdout/stderr): no JavaScript stream per
// run. Delivered with the exit, once the stream has reached EOF or the sandbox is gone. Past
// max_buffer bytes only its head and tail are kept (the command keeps running).
struct Capture {
  uv_poll_t poll;
  Watch* watch = nullptr;
  int fd = -1;
  bool eof = true;
  capture_buffer::BoundedBuffer buffer;
};

struct Watch {
  uv_poll_t report_poll;
  uv_poll_t pid_poll;
  Registry* registry = nullptr;
  long long pid = -1;
  int pidfd = -1;
  int report_fd = -1;
  int control_fd = -1;       // prewarmed sandboxes: our end of the launch socket until used
  bool delivered = false;
  bool report_done = false;   // EOF or final record seen on the report pipe
  bool reaped = false;
  int open_handles = 0;
  int exec_errno = 0;
  bool command_exited = false;
  int command_status = 0;
  Capture captures[2];        // stdout, stderr
  double max_buffer = 0;      // per captured stream: bytes kept (head and tail)
  bool overflow_kill = false; // exceeding max_buffer kills the sandbox (opt-in) instead
  int overflow = 0;           // overflow_kill: 1 = stdout, 2 = stderr exceeded max_buffer first
  net_holders::Holder holder; // network namespace to hand back once the sandbox is gone
  Napi::FunctionReference callback;
  Napi::AsyncContext* context = nullptr;
};

// Owns every live Watch of one addon instance (one Node environment).
class Registry {
 public:
  explicit Registry(Napi::Env env) : env_(env) {}
  ~Registry();

  // Starts watching; `callback` receives {exitCode, signal, execErrno, commandExited} once, plus
  // for captured streams {stdout, stderr, stdoutBytes, stderrBytes} and, when cut,
  // {stdoutTail, stderrTail} (or `overflow` when overflow_kill killed the sandbox).
  // A prewarmed sandbox also hands over its launch socket and starts unreferenced (idle).
  void Add(long long pid, int pidfd, int report_fd, net_holders::Holder holder, Napi::Function callback,
           int control_fd = -1);
  Watch* Find(long long pid);
  // Reads `fds` (stdout, stderr; -1 for a stream not captured) into the watch until EOF. Takes
  // ownership of the descriptors.
  void StartCapture(Watch* watch, const int* fds, double max_buffer, bool overflow_kill);
  // Whether the watch keeps the event loop alive (idle prewarmed sandboxes do not).
  void SetRef(Watch* watch, bool ref);
  // Sends a signal through the pidfd (immune to pid reuse). False once the sandbox has reported.
  bool Signal(long long pid, int sig);
  size_t Size() const { return watches_.size(); }

 private:
  static void OnReport(uv_poll_t* handle, int status, int events);
  static void OnPidfd(uv_poll_t* handle, int status, int events);
  static void OnCapture(uv_poll_t* handle, int status, int events);
  static void OnClosed(uv_handle_t* handle);
  static void OnCaptureClosed(uv_handle_t* handle);
  static void Release(Watch* watch);
  void DrainReport(Watch* watch);
  void DrainCapture(Watch* watch, Capture* capture);
  bool CapturesDone(const Watch* watch) const;
  void CloseCaptures(Watch* watch);
  void Deliver(Watch* watch, int init_status, bool init_reaped);
  Napi::Object BuildExit(Watch* watch, int init_status, bool init_reaped);
  void MaybeFinish(Watch* watch);

  Napi::Env env_;
  std::map<long long, Watch*> watches_;
};

}  // namespace exit_watcher
