// SPDX-License-Identifier: MIT
// The addon's entry point: one flat object of camelCase verbs (the TypeScript mirror is
// lib/native/types.ts): the probe here, the rest from each glue (spawn_glue.h, fs_glue.h,
// hangup_watch.h), whose implementations binding.gyp picks per OS, and on macOS the run's
// process listing (run_members.h).
#include <napi.h>

#include <memory>

#include "binding/args.h"
#include "binding/backend.h"
#include "binding/fs_glue.h"
#include "binding/hangup_watch.h"
#include "binding/js_errors.h"
#include "binding/run_members.h"
#include "binding/spawn_glue.h"
#if defined(__linux__)
#include "linux/cgroup_calls.h"
#include "linux/environ_read.h"
#include "linux/mount_templates.h"
#endif
#if !defined(_WIN32)
#include "posix/job_threads.h"
#endif

namespace {

Napi::Object ProbeToJs(Napi::Env env, const backend::ProbeResult& r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("platform", r.platform);
  out.Set("arch", r.arch);
  out.Set("release", r.release);
  out.Set("uid", Napi::Number::New(env, static_cast<double>(r.uid)));
  Napi::Object facts = Napi::Object::New(env);
  for (const backend::Fact& f : r.facts) {
    Napi::Object fact = Napi::Object::New(env);
    fact.Set("attempted", f.attempted);
    fact.Set("ok", f.ok);
    fact.Set("errno", Napi::Number::New(env, f.sys_errno));
    if (f.win_kind == status::Status::WinKind::kWin32)
      fact.Set("win32Error", Napi::Number::New(env, f.win_error));
    if (f.win_kind == status::Status::WinKind::kHresult)
      fact.Set("hresult", Napi::Number::New(env, f.win_error));
    if (!f.syscall.empty()) fact.Set("syscall", f.syscall);
    fact.Set("value", Napi::Number::New(env, static_cast<double>(f.value)));
    facts.Set(f.name, fact);
  }
  out.Set("facts", facts);
  return out;
}

// Runs the probe on the libuv thread pool and settles a Promise.
class ProbeWorker : public Napi::AsyncWorker {
 public:
  ProbeWorker(Napi::Env env, Napi::Promise::Deferred deferred)
      : Napi::AsyncWorker(env), deferred_(deferred) {}

  void Execute() override { status_ = backend::Probe(&result_); }

  void OnOK() override {
    Napi::Env env = Env();
    if (!status_.ok()) {
      deferred_.Reject(js_errors::FromStatus(env, status_).Value());
      return;
    }
    deferred_.Resolve(ProbeToJs(env, result_));
  }

 private:
  Napi::Promise::Deferred deferred_;
  backend::ProbeResult result_;
  status::Status status_;
};

#if defined(__linux__)
// mountTemplateCounts() => { built, rested, held, fds, busy } (mount_templates::Counts; tests).
Napi::Value MountTemplateCounts(const Napi::CallbackInfo& info) {
  const mount_templates::Stats stats = mount_templates::Counts();
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("built", Napi::Number::New(info.Env(), static_cast<double>(stats.built)));
  out.Set("rested", Napi::Number::New(info.Env(), static_cast<double>(stats.rested)));
  out.Set("held", Napi::Number::New(info.Env(), static_cast<double>(stats.held)));
  out.Set("fds", Napi::Number::New(info.Env(), static_cast<double>(stats.fds)));
  out.Set("busy", Napi::Number::New(info.Env(), static_cast<double>(stats.busy)));
  return out;
}
#endif

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports)
      : mailbox_(OpenMailbox(env)), spawn_state_(spawn_glue::CreateState(env, mailbox_.get())) {
    DefineAddon(exports, {
                             InstanceMethod("probe", &Addon::Probe),
                             InstanceMethod("probeSync", &Addon::ProbeSync),
                             InstanceMethod("spawn", &Addon::Spawn),
                             InstanceMethod("spawnAsync", &Addon::SpawnAsync),
                             InstanceMethod("prepareWarm", &Addon::PrepareWarm),
                             InstanceMethod("preparePolicy", &Addon::PreparePolicy),
                             InstanceMethod("spawnWarm", &Addon::SpawnWarm),
                             InstanceMethod("launch", &Addon::Launch),
                             InstanceMethod("kill", &Addon::Kill),
                             InstanceMethod("activeCount", &Addon::ActiveCount),
                             InstanceMethod("landlockAbi", &Addon::LandlockAbi),
                             InstanceMethod("watchHangup", &Addon::WatchHangup),
                         });
    fs_glue::Export(env, exports, mailbox_.get());
#if defined(__APPLE__)
    run_members::Export(env, exports);
#endif
#if defined(__linux__)
    cgroup_calls::Export(env, exports, mailbox_.get());
    environ_read::Export(env, exports);
    exports.Set("mountTemplateCounts", Napi::Function::New(env, MountTemplateCounts));
#endif
  }

  // The mailbox closes first: work that ends from here on is orphaned, never delivered into the
  // state being destroyed.
  ~Addon() {
#if !defined(_WIN32)
    if (mailbox_ != nullptr) mailbox_->Close();
#endif
    spawn_glue::DestroyState(spawn_state_);
  }

 private:
  Napi::Value Spawn(const Napi::CallbackInfo& info) {
    return spawn_glue::Spawn(info, spawn_state_);
  }
  Napi::Value SpawnAsync(const Napi::CallbackInfo& info) {
    return spawn_glue::SpawnAsync(info, spawn_state_);
  }
  Napi::Value Kill(const Napi::CallbackInfo& info) { return spawn_glue::Kill(info, spawn_state_); }
  Napi::Value PreparePolicy(const Napi::CallbackInfo& info) { return args::PreparePolicy(info); }
  Napi::Value PrepareWarm(const Napi::CallbackInfo& info) {
    return spawn_glue::PrepareWarm(info, spawn_state_);
  }
  Napi::Value SpawnWarm(const Napi::CallbackInfo& info) {
    return spawn_glue::SpawnWarm(info, spawn_state_);
  }
  Napi::Value Launch(const Napi::CallbackInfo& info) {
    return spawn_glue::Launch(info, spawn_state_);
  }
  Napi::Value ActiveCount(const Napi::CallbackInfo& info) {
    return spawn_glue::ActiveCount(info, spawn_state_);
  }
  Napi::Value LandlockAbi(const Napi::CallbackInfo& info) {
    return spawn_glue::LandlockAbi(info, spawn_state_);
  }

  Napi::Value WatchHangup(const Napi::CallbackInfo& info) {
    return hangup_watch::WatchHangup(info);
  }

  static std::shared_ptr<job_threads::Mailbox> OpenMailbox(Napi::Env env) {
#if defined(_WIN32)
    (void)env;
    return nullptr;
#else
    return job_threads::Mailbox::Open(env);
#endif
  }

  // The environment's way back from the addon's job threads (POSIX; null on Windows).
  std::shared_ptr<job_threads::Mailbox> mailbox_;
  spawn_glue::State* spawn_state_;

  Napi::Value Probe(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
    (new ProbeWorker(env, deferred))->Queue();
    return deferred.Promise();
  }

  Napi::Value ProbeSync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    backend::ProbeResult result;
    status::Status s = backend::Probe(&result);
    if (!s.ok()) throw js_errors::FromStatus(env, s);
    return ProbeToJs(env, result);
  }
};

}  // namespace

NODE_API_ADDON(Addon)
