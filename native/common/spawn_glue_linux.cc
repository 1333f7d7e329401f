// SPDX-License-Identifier: MIT
// Linux spawn glue: creates the stdio pipes, calls backend::Spawn, and registers the exit watch.
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/args.h"
#include "common/backend.h"
#include "common/exit_watcher.h"
#include "common/js_errors.h"
#include "common/spawn_glue.h"

namespace spawn_glue {

class State {
 public:
  explicit State(Napi::Env env) : registry(env) {}
  exit_watcher::Registry registry;
};

State* CreateState(Napi::Env env) { return new State(env); }
void DestroyState(State* state) { delete state; }

namespace {

// Pipes for the three streams: child_ends go to the sandbox, parent_ends back to JavaScript.
struct Pipes {
  int child_ends[3] = {-1, -1, -1};
  int parent_ends[3] = {-1, -1, -1};
  void CloseChildEnds() {
    for (int& fd : child_ends) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }
  void CloseAll() {
    CloseChildEnds();
    for (int& fd : parent_ends) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }
};

status::Status MakePipes(const args::ParsedSpawn& parsed, Pipes* pipes, int* child_fds) {
  for (int i = 0; i < 3; ++i) {
    const args::StdioMode& mode = parsed.stdio[i];
    child_fds[i] = -1;
    if (mode.kind == args::StdioMode::kFd) {
      child_fds[i] = mode.fd;
    } else if (mode.kind == args::StdioMode::kPipe) {
      int fds[2];
      if (pipe2(fds, O_CLOEXEC) != 0) return status::Fail("spawn_failed", errno, "pipe2(stdio)");
      // stdin: the child reads; stdout/stderr: the child writes.
      pipes->child_ends[i] = i == 0 ? fds[0] : fds[1];
      pipes->parent_ends[i] = i == 0 ? fds[1] : fds[0];
      child_fds[i] = pipes->child_ends[i];
    }
  }
  return status::Ok();
}

}  // namespace

Napi::Value Spawn(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    throw Napi::TypeError::New(env, "spawn(spec, onExit) expects an object and a function");
  }
  args::ParsedSpawn parsed = args::ParseSpawnSpec(info[0].As<Napi::Object>());
  Pipes pipes;
  status::Status s = MakePipes(parsed, &pipes, parsed.spec.stdio);
  if (!s.ok()) {
    pipes.CloseAll();
    throw js_errors::FromStatus(env, s);
  }
  backend::SpawnResult result;
  s = backend::Spawn(parsed.spec, &result);
  pipes.CloseChildEnds();
  if (!s.ok()) {
    pipes.CloseAll();
    throw js_errors::FromStatus(env, s);
  }
  state->registry.Add(result.pid, result.pidfd, result.report_fd, info[1].As<Napi::Function>());
  Napi::Object out = Napi::Object::New(env);
  out.Set("pid", Napi::Number::New(env, static_cast<double>(result.pid)));
  const char* names[3] = {"stdin", "stdout", "stderr"};
  for (int i = 0; i < 3; ++i) {
    if (pipes.parent_ends[i] >= 0) out.Set(names[i], Napi::Number::New(env, pipes.parent_ends[i]));
  }
  return out;
}

Napi::Value Kill(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    throw Napi::TypeError::New(env, "kill(pid, signal) expects two numbers");
  }
  long long pid = info[0].As<Napi::Number>().Int64Value();
  int sig = info[1].As<Napi::Number>().Int32Value();
  return Napi::Boolean::New(env, state->registry.Signal(pid, sig));
}

Napi::Value ActiveCount(const Napi::CallbackInfo& info, State* state) {
  return Napi::Number::New(info.Env(), static_cast<double>(state->registry.Size()));
}

}  // namespace spawn_glue
