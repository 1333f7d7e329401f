// SPDX-License-Identifier: MIT
// Linux spawn glue: creates the stdio pipes, calls backend::Spawn, and registers the exit watch.
#include <errno.h>
#include <linux/landlock.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "binding/args.h"
#include "binding/backend.h"
#include "linux/exit_watcher.h"
#include "binding/js_errors.h"
#include "binding/spawn_glue.h"
#include "linux/launch_message.h"
#include "linux/spawn_pipes.h"

namespace spawn_glue {

class State {
 public:
  explicit State(Napi::Env env) : registry(env) {}
  exit_watcher::Registry registry;
};

State* CreateState(Napi::Env env) { return new State(env); }
void DestroyState(State* state) { delete state; }

namespace {

// { pid, stdin?, stdout?, stderr? }: the parent-side descriptors of the streams spawned as pipes.
Napi::Object SpawnedToJs(Napi::Env env, long long pid, const spawn_pipes::Pipes& pipes) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("pid", Napi::Number::New(env, static_cast<double>(pid)));
  const char* names[3] = {"stdin", "stdout", "stderr"};
  for (int i = 0; i < 3; ++i) {
    if (pipes.parent_ends[i] >= 0) out.Set(names[i], Napi::Number::New(env, pipes.parent_ends[i]));
  }
  return out;
}

net_holders::Holder HolderOf(const backend::SpawnResult& result) {
  net_holders::Holder holder;
  holder.userns_fd = result.net_userns_fd;
  holder.netns_fd = result.net_netns_fd;
  return holder;
}

// A cold start in three steps, so that the clone (which holds its thread until the sandbox's
// first process has set up its mounts, Landlock and seccomp and executed the init) can run off the
// JavaScript thread: Begin on the JavaScript thread (the pipes, the script file), Run on any
// thread (the clone and the setup report), Finish on the JavaScript thread (the exit watch
// registered, our ends of the pipes handed over). Every descriptor it made is closed unless
// Finish handed it over.
class ColdStart {
 public:
  explicit ColdStart(args::ParsedSpawn parsed) : parsed_(std::move(parsed)) {}
  ~ColdStart() { pipes_.CloseAll(); }
  ColdStart(const ColdStart&) = delete;
  ColdStart& operator=(const ColdStart&) = delete;

  void Begin(State* state) {
    status_ = spawn_pipes::MakePipes(parsed_.stdio, &pipes_, parsed_.spec.stdio);
    if (status_.ok() && parsed_.has_script) {
      status_ = spawn_pipes::ScriptFile(parsed_.script, &pipes_.script);
      parsed_.spec.script_fd = pipes_.script;
    }
    parsed_.spec.linux_spec.mask_watch_fd = state->registry.MaskWatchFd();
  }

  // On the thread pool for spawnAsync: the copy of a prepared policy's parts is made here too.
  void Run() {
    args::TakePrepared(&parsed_);
    if (status_.ok()) status_ = backend::Spawn(parsed_.spec, &result_);
  }

  // The failure, if any (then nothing is registered); else the result for JavaScript.
  status::Status Finish(Napi::Env env, State* state, Napi::Function on_exit, Napi::Object* out) {
    pipes_.CloseChildEnds();
    if (!status_.ok()) return status_;
    exit_watcher::Watch* watch = state->registry.Add(result_.pid, result_.pidfd, result_.report_fd,
                                                     HolderOf(result_), on_exit);
    watch->mask_wds = std::move(result_.mask_wds);
    watch->template_id = result_.template_id;
    state->registry.StartCapture(watch, pipes_.capture_ends, parsed_.max_buffer,
                                 parsed_.overflow_kill, parsed_.spill_fd);
    pipes_.capture_ends[0] = pipes_.capture_ends[1] = -1;
    *out = SpawnedToJs(env, result_.pid, pipes_);
    for (int& fd : pipes_.parent_ends) fd = -1;  // now JavaScript's
    return status::Ok();
  }

 private:
  args::ParsedSpawn parsed_;
  spawn_pipes::Pipes pipes_;
  backend::SpawnResult result_;
  status::Status status_;
};

// A cold start on the libuv thread pool: the JavaScript thread converts the spec and makes the
// pipes, a pool thread clones, and the JavaScript thread registers the result. The promise
// settles with the result or the start's error; nothing is thrown out of the callback.
class ColdWorker : public Napi::AsyncWorker {
 public:
  ColdWorker(Napi::Env env, State* state, args::ParsedSpawn parsed, Napi::Function on_exit)
      : Napi::AsyncWorker(env),
        state_(state),
        cold_(std::move(parsed)),
        deferred_(Napi::Promise::Deferred::New(env)),
        on_exit_(Napi::Persistent(on_exit)) {
    cold_.Begin(state);
  }

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override { cold_.Run(); }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Object out;
    status::Status s = cold_.Finish(env, state_, on_exit_.Value(), &out);
    if (!s.ok()) {
      deferred_.Reject(js_errors::FromStatus(env, s).Value());
      return;
    }
    deferred_.Resolve(out);
  }

 private:
  State* state_;
  ColdStart cold_;
  Napi::Promise::Deferred deferred_;
  Napi::FunctionReference on_exit_;
};

}  // namespace

Napi::Value Spawn(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    throw Napi::TypeError::New(env, "spawn(spec, onExit) expects an object and a function");
  }
  ColdStart cold(args::ParseSpawnSpec(info[0].As<Napi::Object>()));
  cold.Begin(state);
  cold.Run();
  Napi::Object out;
  status::Status s = cold.Finish(env, state, info[1].As<Napi::Function>(), &out);
  if (!s.ok()) throw js_errors::FromStatus(env, s);
  return out;
}

Napi::Value SpawnAsync(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    throw Napi::TypeError::New(env, "spawnAsync(spec, onExit) expects an object and a function");
  }
  ColdWorker* worker = new ColdWorker(env, state, args::ParseSpawnSpec(info[0].As<Napi::Object>()),
                                      info[1].As<Napi::Function>());
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

namespace {

// Sets up a prewarmed sandbox on the libuv thread pool: the clone and the whole setup happen off
// the JavaScript thread, which only registers the result.
class WarmWorker : public Napi::AsyncWorker {
 public:
  // `source`: the parsed spec, shared with the prepareWarm handle it may come from (never changed
  // once made); the worker copies it on its own thread. `cgroup_procs_fd`, when given, replaces the
  // spec's.
  WarmWorker(Napi::Env env, State* state, std::shared_ptr<const args::ParsedSpawn> source,
             std::optional<int> cgroup_procs_fd, Napi::Function on_exit)
      : Napi::AsyncWorker(env),
        state_(state),
        source_(std::move(source)),
        cgroup_procs_fd_(cgroup_procs_fd),
        deferred_(Napi::Promise::Deferred::New(env)),
        on_exit_(Napi::Persistent(on_exit)) {}

  ~WarmWorker() override {
    if (child_control_ >= 0) close(child_control_);
    if (parent_control_ >= 0) close(parent_control_);
  }

  Napi::Promise Promise() { return deferred_.Promise(); }

  bool Prepare() {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      status_ = status::Fail("spawn_failed", errno, "socketpair(launch)");
      return false;
    }
    parent_control_ = pair[0];
    child_control_ = pair[1];
    mask_watch_fd_ = state_->registry.MaskWatchFd();
    return true;
  }

  // The copy of a policy's spec (thousands of mounts and rules for a large one) is made here, on
  // the pool's thread, not on the caller's.
  void Execute() override {
    if (!status_.ok()) return;
    parsed_ = *source_;
    parsed_.spec.control_fd = child_control_;
    parsed_.spec.linux_spec.mask_watch_fd = mask_watch_fd_;
    if (cgroup_procs_fd_.has_value()) parsed_.spec.linux_spec.cgroup_procs_fd = *cgroup_procs_fd_;
    for (int& fd : parsed_.spec.stdio) fd = -1;
    status_ = backend::Spawn(parsed_.spec, &result_);
  }

  void OnOK() override {
    Napi::Env env = Env();
    close(child_control_);
    child_control_ = -1;
    if (!status_.ok()) {
      deferred_.Reject(js_errors::FromStatus(env, status_).Value());
      return;
    }
    exit_watcher::Watch* watch =
        state_->registry.Add(result_.pid, result_.pidfd, result_.report_fd, HolderOf(result_),
                             on_exit_.Value(), parent_control_);
    watch->mask_wds = std::move(result_.mask_wds);
    watch->template_id = result_.template_id;
    parent_control_ = -1;
    Napi::Object out = Napi::Object::New(env);
    out.Set("pid", Napi::Number::New(env, static_cast<double>(result_.pid)));
    deferred_.Resolve(out);
  }

 private:
  State* state_;
  std::shared_ptr<const args::ParsedSpawn> source_;
  std::optional<int> cgroup_procs_fd_;
  int mask_watch_fd_ = -1;
  args::ParsedSpawn parsed_;
  Napi::Promise::Deferred deferred_;
  Napi::FunctionReference on_exit_;
  backend::SpawnResult result_;
  status::Status status_;
  int parent_control_ = -1;
  int child_control_ = -1;
};

bool SendAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// Sends the launch message: header, limits and strings in one buffer, with the three descriptors
// attached to its first byte. One sendmsg wakes the waiting command process once.
bool SendLaunch(int socket_fd, const args::ParsedLaunch& launch, const int* fds) {
  launch_message::Header header;
  header.magic = launch_message::kMagic;
  header.argc = static_cast<uint32_t>(launch.argv.size());
  header.envc = static_cast<uint32_t>(launch.envp.size());
  header.rlimit_count = static_cast<uint32_t>(launch.rlimits.size());
  size_t payload_len = launch.cwd.size() + 1;
  for (const std::string& arg : launch.argv) payload_len += arg.size() + 1;
  for (const std::string& var : launch.envp) payload_len += var.size() + 1;
  if (payload_len > launch_message::kMaxPayload) return false;
  header.payload_len = static_cast<uint32_t>(payload_len);
  std::string message(reinterpret_cast<const char*>(&header), sizeof header);
  message.reserve(sizeof header + launch.rlimits.size() * sizeof(launch_message::Rlimit) +
                  payload_len);
  for (const backend::ResourceLimit& l : launch.rlimits) {
    launch_message::Rlimit record = {static_cast<uint64_t>(l.resource), l.soft, l.hard};
    message.append(reinterpret_cast<const char*>(&record), sizeof record);
  }
  for (const std::string& arg : launch.argv) message.append(arg).push_back('\0');
  for (const std::string& var : launch.envp) message.append(var).push_back('\0');
  message.append(launch.cwd).push_back('\0');

  struct iovec iov = {message.data(), message.size()};
  char cbuf[CMSG_SPACE(3 * sizeof(int))];
  memset(cbuf, 0, sizeof cbuf);
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof cbuf;
  struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(3 * sizeof(int));
  memcpy(CMSG_DATA(cmsg), fds, 3 * sizeof(int));
  ssize_t n;
  do {
    n = sendmsg(socket_fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  // A message larger than the socket buffer goes out in more sends.
  return SendAll(socket_fd, message.data() + n, message.size() - static_cast<size_t>(n));
}

}  // namespace

Napi::Value PrepareWarm(const Napi::CallbackInfo& info, State*) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject())
    throw Napi::TypeError::New(env, "prepareWarm(spec) expects an object");
  using Shared = std::shared_ptr<const args::ParsedSpawn>;
  auto* parsed = new Shared(
      std::make_shared<args::ParsedSpawn>(args::ParseSpawnSpec(info[0].As<Napi::Object>())));
  return Napi::External<Shared>::New(env, parsed, [](Napi::Env, Shared* p) { delete p; });
}

Napi::Value SpawnWarm(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !(info[0].IsObject() || info[0].IsExternal()) || !info[1].IsFunction() ||
      (info.Length() > 2 && !info[2].IsUndefined() && !info[2].IsNumber())) {
    throw Napi::TypeError::New(env,
                               "spawnWarm(specOrHandle, onExit, cgroupProcsFd?) expects a spec or "
                               "a prepareWarm handle, a function and an optional descriptor");
  }
  // A handle from prepareWarm is shared with the worker (which copies it on its thread); a spec is
  // converted here.
  std::shared_ptr<const args::ParsedSpawn> source =
      info[0].IsExternal()
          ? *info[0].As<Napi::External<std::shared_ptr<const args::ParsedSpawn>>>().Data()
          : std::make_shared<args::ParsedSpawn>(args::ParseSpawnSpec(info[0].As<Napi::Object>()));
  // The sandbox's own pids cgroup (one per prewarmed sandbox): its first process joins it before
  // anything else, as in a cold start. The caller keeps the descriptor open until the promise
  // settles.
  std::optional<int> cgroup_procs_fd;
  if (info.Length() > 2 && info[2].IsNumber())
    cgroup_procs_fd = info[2].As<Napi::Number>().Int32Value();
  WarmWorker* worker =
      new WarmWorker(env, state, std::move(source), cgroup_procs_fd, info[1].As<Napi::Function>());
  Napi::Promise promise = worker->Promise();
  worker->Prepare();
  worker->Queue();
  return promise;
}

Napi::Value Launch(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsObject()) {
    throw Napi::TypeError::New(env, "launch(pid, launch) expects a number and an object");
  }
  long long pid = info[0].As<Napi::Number>().Int64Value();
  args::ParsedLaunch launch = args::ParseLaunchSpec(info[1].As<Napi::Object>());
  exit_watcher::Watch* watch = state->registry.Find(pid);
  if (watch == nullptr || watch->control_fd < 0 || watch->delivered) return env.Null();
  spawn_pipes::Pipes pipes;
  int child_fds[3];
  status::Status s = spawn_pipes::MakePipes(launch.stdio, &pipes, child_fds);
  // The init needs a real descriptor for every stream: /dev/null stands for 'ignore'.
  int devnull = -1;
  for (int i = 0; s.ok() && i < 3; ++i) {
    if (child_fds[i] >= 0) continue;
    if (devnull < 0) devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) s = status::Fail("spawn_failed", errno, "open(/dev/null)");
    child_fds[i] = devnull;
  }
  bool sent = s.ok() && SendLaunch(watch->control_fd, launch, child_fds);
  if (devnull >= 0) close(devnull);
  pipes.CloseChildEnds();
  close(watch->control_fd);
  watch->control_fd = -1;
  if (!sent) {
    pipes.CloseAll();
    return env.Null();
  }
  state->registry.SetRef(watch, true);
  state->registry.StartCapture(watch, pipes.capture_ends, launch.max_buffer, launch.overflow_kill,
                               launch.spill_fd);
  pipes.capture_ends[0] = pipes.capture_ends[1] = -1;
  return SpawnedToJs(env, pid, pipes);
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

Napi::Value LandlockAbi(const Napi::CallbackInfo& info, State*) {
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return Napi::Number::New(info.Env(), abi < 0 ? 0 : static_cast<double>(abi));
}

Napi::Value ActiveCount(const Napi::CallbackInfo& info, State* state) {
  return Napi::Number::New(info.Env(), static_cast<double>(state->registry.Size()));
}

}  // namespace spawn_glue
