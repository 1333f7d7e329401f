// SPDX-License-Identifier: MIT
// Watches sandboxed processes for exit on the Node event loop (a pidfd polled by libuv: no thread
// per child), collects the init helper's report, and calls back into JavaScript once.
#pragma once

#include <napi.h>
#include <uv.h>

#include <map>

namespace exit_watcher {

class Registry;

struct Watch {
  uv_poll_t poll;
  Registry* registry = nullptr;
  long long pid = -1;
  int pidfd = -1;
  int report_fd = -1;
  Napi::FunctionReference callback;
  Napi::AsyncContext* context = nullptr;
};

// Owns every live Watch of one addon instance (one Node environment).
class Registry {
 public:
  explicit Registry(Napi::Env env) : env_(env) {}
  ~Registry();

  // Starts watching; `callback` receives {exitCode, signal, execErrno, status} once.
  void Add(long long pid, int pidfd, int report_fd, Napi::Function callback);
  // Sends a signal through the pidfd (immune to pid reuse). False when the process is gone.
  bool Signal(long long pid, int sig);
  size_t Size() const { return watches_.size(); }

 private:
  static void OnReadable(uv_poll_t* handle, int status, int events);
  void Finish(Watch* watch);

  Napi::Env env_;
  std::map<long long, Watch*> watches_;
};

}  // namespace exit_watcher
