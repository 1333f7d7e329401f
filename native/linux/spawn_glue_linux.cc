// SPDX-License-Identifier: MIT
// Linux spawn glue: creates the stdio pipes, calls backend::Spawn (spawnAsync and spawnWarm on
// the spawn lane of posix/job_threads.h), and registers the exit watch.
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
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
#include "linux/kernel_compat.h"
#include "linux/launch_send.h"
#include "linux/mount_templates.h"
#include "linux/net_holders.h"
#include "linux/spawn_pipes.h"
#include "posix/job_threads.h"

namespace spawn_glue {

class State {
 public:
  State(Napi::Env env, job_threads::Mailbox* box) : registry(env), mailbox(box) {}
  exit_watcher::Registry registry;
  // The job threads' way back to this environment (null: every spawn takes the libuv pool).
  job_threads::Mailbox* mailbox;
};

State* CreateState(Napi::Env env, job_threads::Mailbox* mailbox) { return new State(env, mailbox); }
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

// A sandbox started for an environment torn down before the start was delivered: killed through
// its pidfd (its init first, so every process of its pid namespace), reaped, and everything it
// held let go of. Safe on any thread; nothing of JavaScript is touched.
void DiscardStarted(backend::SpawnResult* result) {
  if (result->pidfd >= 0) {
    exit_watcher::KillAndReap(result->pidfd);
    close(result->pidfd);
  }
  if (result->report_fd >= 0) close(result->report_fd);
  net_holders::Discard(HolderOf(*result));
  if (result->template_id >= 0) mount_templates::Return(result->template_id);
  *result = backend::SpawnResult();
}

// A spawn's promise and exit callback, held as raw handles (see job_threads::JobPromise).
class JsEnds {
 public:
  JsEnds(Napi::Env env, Napi::Function on_exit) : env_(env), promise_(env) {
    NAPI_THROW_IF_FAILED_VOID(env, napi_create_reference(env, on_exit, 1, &on_exit_));
  }
  // On the JavaScript thread, in the scope the job was made in.
  Napi::Promise Promise() const { return Napi::Promise(env_, promise_.promise); }
  // Settles the promise with `body`'s result (or its error: nothing is thrown) and lets the
  // callback's reference go. On the JavaScript thread, once.
  template <typename Body>
  void Settle(Napi::Env env, Body body) {
    napi_value value = nullptr;
    bool ok = false;
    try {
      napi_value on_exit = nullptr;
      napi_get_reference_value(env, on_exit_, &on_exit);
      Napi::Object out;
      status::Status s = body(Napi::Function(env, on_exit), &out);
      ok = s.ok();
      value = ok ? static_cast<napi_value>(out) : js_errors::FromStatus(env, s).Value();
    } catch (const Napi::Error& error) {
      value = error.Value();
    } catch (...) {
      // the environment is going away, or memory ran out: no one is left to tell
    }
    promise_.Settle(env, value, ok);
    napi_delete_reference(env, on_exit_);
    on_exit_ = nullptr;
  }

 private:
  napi_env env_;
  job_threads::JobPromise promise_;
  napi_ref on_exit_ = nullptr;
};

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

  // On a spawn thread for spawnAsync: the copy of a prepared policy's parts is made here too.
  void Run() {
    args::TakePrepared(&parsed_);
    if (status_.ok()) status_ = backend::Spawn(parsed_.spec, &result_);
  }

  // Its environment is gone: a sandbox it started is killed and let go of.
  void Orphan() { DiscardStarted(&result_); }

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

// spawnAsync's start: Begin on the JavaScript thread, the clone on a spawn thread, Finish back on
// the JavaScript thread. The promise settles with the result or the start's error.
class ColdJob : public job_threads::Job {
 public:
  ColdJob(Napi::Env env, State* state, args::ParsedSpawn parsed, Napi::Function on_exit)
      : state_(state), cold_(std::move(parsed)), js_(env, on_exit) {
    cold_.Begin(state);
  }
  Napi::Promise Promise() const { return js_.Promise(); }
  void Run() override { cold_.Run(); }
  void Deliver(Napi::Env env) override {
    js_.Settle(env, [&](Napi::Function on_exit, Napi::Object* out) {
      return cold_.Finish(env, state_, on_exit, out);
    });
  }
  void Orphan() override { cold_.Orphan(); }

 private:
  State* state_;
  ColdStart cold_;
  JsEnds js_;
};

// Hands `job` to a spawn thread (or else the libuv pool); returns its promise.
template <typename SomeJob>
Napi::Promise Queue(Napi::Env env, State* state, SomeJob* job) {
  Napi::Promise promise = job->Promise();
  job_threads::Queue(env, state->mailbox, job_threads::SpawnLane(), job);
  return promise;
}

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
  return Queue(env, state,
               new ColdJob(env, state, args::ParseSpawnSpec(info[0].As<Napi::Object>()),
                           info[1].As<Napi::Function>()));
}

namespace {

// Sets up a prewarmed sandbox on a spawn thread: the clone and the whole setup happen off the
// JavaScript thread, which only registers the result.
class WarmJob : public job_threads::Job {
 public:
  // `source`: the parsed spec, shared with the prepareWarm handle it may come from (never changed
  // once made); the job copies it on its own thread. `cgroup_procs_fd`, when given, replaces the
  // spec's.
  WarmJob(Napi::Env env, State* state, std::shared_ptr<const args::ParsedSpawn> source,
          std::optional<int> cgroup_procs_fd, Napi::Function on_exit)
      : state_(state),
        source_(std::move(source)),
        cgroup_procs_fd_(cgroup_procs_fd),
        js_(env, on_exit) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      status_ = status::Fail("spawn_failed", errno, "socketpair(launch)");
      return;
    }
    parent_control_ = pair[0];
    child_control_ = pair[1];
    mask_watch_fd_ = state_->registry.MaskWatchFd();
  }

  ~WarmJob() override {
    if (child_control_ >= 0) close(child_control_);
    if (parent_control_ >= 0) close(parent_control_);
  }

  Napi::Promise Promise() const { return js_.Promise(); }

  // The copy of a policy's spec (thousands of mounts and rules for a large one) is made here, off
  // the caller's thread.
  void Run() override {
    if (!status_.ok()) return;
    parsed_ = *source_;
    parsed_.spec.control_fd = child_control_;
    parsed_.spec.linux_spec.mask_watch_fd = mask_watch_fd_;
    if (cgroup_procs_fd_.has_value()) parsed_.spec.linux_spec.cgroup_procs_fd = *cgroup_procs_fd_;
    for (int& fd : parsed_.spec.stdio) fd = -1;
    status_ = backend::Spawn(parsed_.spec, &result_);
  }

  void Deliver(Napi::Env env) override {
    close(child_control_);
    child_control_ = -1;
    js_.Settle(env, [&](Napi::Function on_exit, Napi::Object* out) {
      if (!status_.ok()) return status_;
      exit_watcher::Watch* watch =
          state_->registry.Add(result_.pid, result_.pidfd, result_.report_fd, HolderOf(result_),
                               on_exit, parent_control_);
      watch->mask_wds = std::move(result_.mask_wds);
      watch->template_id = result_.template_id;
      parent_control_ = -1;
      *out = Napi::Object::New(env);
      out->Set("pid", Napi::Number::New(env, static_cast<double>(result_.pid)));
      return status::Ok();
    });
  }

  void Orphan() override { DiscardStarted(&result_); }

 private:
  State* state_;
  std::shared_ptr<const args::ParsedSpawn> source_;
  std::optional<int> cgroup_procs_fd_;
  int mask_watch_fd_ = -1;
  args::ParsedSpawn parsed_;
  JsEnds js_;
  backend::SpawnResult result_;
  status::Status status_;
  int parent_control_ = -1;
  int child_control_ = -1;
};

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
  return Queue(
      env, state,
      new WarmJob(env, state, std::move(source), cgroup_procs_fd, info[1].As<Napi::Function>()));
}

Napi::Value Launch(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsObject()) {
    throw Napi::TypeError::New(env, "launch(pid, launch) expects a number and an object");
  }
  long long pid = info[0].As<Napi::Number>().Int64Value();
  // The strings' buffer of this thread's last launch, reused: a long command (up to the kernel's
  // ~2 MiB of arguments) is then copied onto pages already faulted in, where fresh ones cost
  // several times the copy on some VMs. At most kKeptLaunchBytes stay held between launches.
  constexpr size_t kKeptLaunchBytes = 4u << 20;
  thread_local std::string reused;
  args::ParsedLaunch launch = args::ParseLaunchSpec(info[1].As<Napi::Object>(), std::move(reused));
  struct Keep {
    std::string* from;
    ~Keep() {
      if (from->capacity() <= kKeptLaunchBytes) reused = std::move(*from);
    }
  } keep{&launch.strings};
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
  bool sent = s.ok() && launch_send::Send(watch->control_fd, launch, child_fds);
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
