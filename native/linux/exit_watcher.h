// SPDX-License-Identifier: MIT
// Watches sandboxes on the Node event loop. The exit is decided by the kernel alone: a pidfd on the
// sandbox's init becomes readable once the init has exited, which for the first process of a pid
// namespace means every other process in it has been killed and reaped; the init is then reaped
// with waitid and its exit status is the command's. What the sandbox wrote (the init's report
// pipe, captured output) is read only after that and cannot end a run, keep it going, or stop a
// kill. No threads of its own: one closing thread (namespace_release.h) only closes a sandbox's
// mount namespace once its exit is known (exit_watcher.cc, HoldMountNamespace).
#pragma once

#include <napi.h>
#include <uv.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "linux/capture_buffer.h"
#include "linux/namespace_release.h"
#include "linux/net_holders.h"

namespace exit_watcher {

// Kills the sandbox whose init `pidfd` names (its init first, so every process of its pid
// namespace) and reaps the init; the descriptor stays open. Safe on any thread.
void KillAndReap(int pidfd);

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

// How the sandbox's init ended, from waitid: an exit code, or the signal that killed it.
struct InitEnd {
  bool killed = false;  // by a signal (the host's kill, a timeout, the OOM killer)
  int value = 0;        // exit code, or signal number
};

// What the init's report pipe held once every writer was gone (the last record of each kind).
struct ReportRecords {
  bool has_status = false;
  int status = 0;            // the command's wait status, as the init saw it
  int exec_errno = 0;        // errno of a failed exec or launch, or 0
  int no_route = 0;          // packets the sandbox's network namespace had no route for, or 0
  int full = 0;              // bit 0: the private /tmp ended full, bit 1: the private /dev/shm
  bool process_cap = false;  // the init's probe fork was refused at the PID namespace's pid_max
};

struct Watch {
  uv_poll_t pid_poll;
  Registry* registry = nullptr;
  long long pid = -1;
  int pidfd = -1;
  int report_fd = -1;
  int control_fd = -1;   // prewarmed sandboxes: our end of the launch socket until used
  int mount_ns_fd = -1;  // the sandbox's mount namespace, held until its exit is delivered
  int template_id = -1;  // the mount template it was copied from, returned once it is gone
  bool delivered = false;
  bool reaped = false;
  int open_handles = 0;
  Capture captures[2];         // stdout, stderr
  double max_buffer = 0;       // per captured stream: bytes kept (head and tail)
  bool overflow_kill = false;  // exceeding max_buffer kills the sandbox (opt-in) instead
  int overflow = 0;            // overflow_kill: 1 = stdout, 2 = stderr exceeded max_buffer first
  net_holders::Holder holder;  // network namespace to hand back once the sandbox is gone
  std::vector<int> mask_wds;   // the registry's inotify watch of each file mask, in mount order
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
  // {stdoutTail, stderrTail} (or `overflow` when overflow_kill killed the sandbox), and
  // `spillFailed` when the spill file could not take everything.
  // A prewarmed sandbox also hands over its launch socket and starts unreferenced (idle).
  Watch* Add(long long pid, int pidfd, int report_fd, net_holders::Holder holder,
             Napi::Function callback, int control_fd = -1);
  // The inotify instance every sandbox of this registry watches its file masks on (created on
  // first use; -1 when the kernel refuses one, and then reads of masks go unreported).
  int MaskWatchFd();
  Watch* Find(long long pid);
  // Reads `fds` (stdout, stderr; -1 for a stream not captured) into the watch until EOF. Takes
  // ownership of the descriptors. With `spill_fd` (>= 0, not taken over) every byte also goes to
  // that file as it arrives.
  void StartCapture(Watch* watch, const int* fds, double max_buffer, bool overflow_kill,
                    int spill_fd);
  // Whether the watch keeps the event loop alive (idle prewarmed sandboxes do not).
  void SetRef(Watch* watch, bool ref);
  // Sends a signal through the pidfd (immune to pid reuse). False once the init has been reaped.
  bool Signal(long long pid, int sig);
  // Live watches, and mount namespaces of delivered sandboxes still being let go of.
  size_t Size() const { return watches_.size() + namespace_release::Pending(); }

 private:
  static void OnPidfd(uv_poll_t* handle, int status, int events);
  static void OnCapture(uv_poll_t* handle, int status, int events);
  static void OnClosed(uv_handle_t* handle);
  static void OnCaptureClosed(uv_handle_t* handle);
  static void Release(Watch* watch);
  ReportRecords DrainReport(Watch* watch);
  void DrainMaskOpens();
  void DrainCapture(Watch* watch, Capture* capture);
  void CloseCaptures(Watch* watch);
  void Deliver(Watch* watch, const InitEnd& end, const ReportRecords& report);
  Napi::Object BuildExit(Watch* watch, const InitEnd& end, const ReportRecords& report);
  void Finish(Watch* watch);
  void ReleaseMountNamespace(Watch* watch);

  Napi::Env env_;
  std::map<long long, Watch*> watches_;
  int mask_watch_fd_ = -2;  // -2: not created yet
  // Opens seen, until their sandbox is delivered: {watch, slot} (MaskSlotOf), slot -1 for a
  // watch on one mask file, the slot its name gives for the watch on a staging directory.
  std::set<std::pair<int, int>> opened_masks_;
};

}  // namespace exit_watcher
