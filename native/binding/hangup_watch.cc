// SPDX-License-Identifier: MIT
// Hangup watch on an output descriptor (see hangup_watch.h): a libuv poll that asks for no
// readiness at all, so it wakes only on the error or hangup the kernel always reports (a pipe
// whose last reader closed, a socket whose peer shut down). It never keeps the loop alive.
#include "binding/hangup_watch.h"

#ifndef _WIN32
#include <unistd.h>
#include <uv.h>
#endif

namespace hangup_watch {

#ifndef _WIN32
namespace {

struct Watch {
  uv_poll_t poll;
  int fd = -1;
  napi_env env = nullptr;
  Napi::FunctionReference callback;
};

void OnClosed(uv_handle_t* handle) { delete static_cast<Watch*>(handle->data); }

// No readiness was asked for, so any wakeup is the end of the reader: an error (a pipe without
// readers), a hangup (a terminal gone, a socket closed) or the peer shutting down. The poll is
// stopped in every case, since the kernel keeps reporting such a state.
void OnPoll(uv_poll_t* handle, int, int) {
  Watch* watch = static_cast<Watch*>(handle->data);
  uv_poll_stop(handle);
  Napi::FunctionReference callback = std::move(watch->callback);
  // A libuv callback has no JavaScript frame above it: nothing may escape as a C++ exception. A
  // JavaScript error becomes an uncaught exception, read while the handle scope is still open.
  try {
    Napi::Env env(watch->env);
    Napi::HandleScope scope(env);
    try {
      Napi::AsyncContext context(env, "zero-sandbox:hangup");
      callback.MakeCallback(env.Global(), {}, context);
    } catch (const Napi::Error& error) {
      napi_value value = error.Value();
      if (value != nullptr) napi_fatal_exception(watch->env, value);
    }
  } catch (...) {
    // the environment is going away: nobody is left to tell
  }
  close(watch->fd);
  uv_close(reinterpret_cast<uv_handle_t*>(handle), OnClosed);
}

}  // namespace
#endif

Napi::Value WatchHangup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsFunction()) {
    throw Napi::TypeError::New(env, "watchHangup(fd, callback) expects a number and a function");
  }
#ifdef _WIN32
  return Napi::Boolean::New(env, false);
#else
  // Our own descriptor for the same pipe: the stream object that writes to `fd` keeps its own.
  int fd = dup(info[0].As<Napi::Number>().Int32Value());
  if (fd < 0) return Napi::Boolean::New(env, false);
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env, &loop);
  Watch* watch = new Watch();
  watch->fd = fd;
  watch->env = env;
  if (uv_poll_init(loop, &watch->poll, fd) != 0) {
    close(fd);
    delete watch;
    return Napi::Boolean::New(env, false);
  }
  watch->poll.data = watch;
  watch->callback = Napi::Persistent(info[1].As<Napi::Function>());
  if (uv_poll_start(&watch->poll, UV_DISCONNECT, OnPoll) != 0) {
    watch->callback.Reset();
    close(fd);
    uv_close(reinterpret_cast<uv_handle_t*>(&watch->poll), OnClosed);
    return Napi::Boolean::New(env, false);
  }
  uv_unref(reinterpret_cast<uv_handle_t*>(&watch->poll));
  return Napi::Boolean::New(env, true);
#endif
}

}  // namespace hangup_watch
