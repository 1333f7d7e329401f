// SPDX-License-Identifier: MIT
// The addon's entry point: the only translation unit (with js_errors.cc) that includes <napi.h>.
// Exports one flat object of camelCase verbs; the TypeScript mirror is lib/native/types.ts.
#include <napi.h>

#include "binding/backend.h"
#include "binding/hangup_watch.h"
#include "binding/js_errors.h"
#include "binding/spawn_glue.h"
#ifndef _WIN32
#include "posix/fs_beneath.h"
#include "posix/git_scan.h"
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

#ifndef _WIN32
// Paths cross as byte strings: each JS char code 0-255 is one byte (TypeScript converts), so any
// name the file system holds, valid UTF-8 or not, round-trips.
bool Bytes(const Napi::Value& value, std::string* out) {
  if (!value.IsString()) return false;
  std::u16string wide = value.As<Napi::String>().Utf16Value();
  out->clear();
  out->reserve(wide.size());
  for (char16_t c : wide) {
    if (c > 0xFF) return false;
    out->push_back(static_cast<char>(c));
  }
  return true;
}

Napi::String FromBytes(Napi::Env env, const std::string& bytes) {
  std::u16string wide;
  wide.reserve(bytes.size());
  for (char c : bytes) wide.push_back(static_cast<char16_t>(static_cast<unsigned char>(c)));
  return Napi::String::New(env, wide);
}

// Every fs verb answers with a value and never throws: failures are { errno } results, so a call
// made while a sandbox's exit is delivered cannot escape into V8 (catch-all included).
Napi::Value FsCall(const Napi::CallbackInfo& info,
                   Napi::Value (*body)(const Napi::CallbackInfo&, const std::string&,
                                       const std::string&)) {
  Napi::Env env = info.Env();
  try {
    std::string root;
    std::string rel;
    if (info.Length() < 2 || !Bytes(info[0], &root) || !Bytes(info[1], &rel)) {
      Napi::Object bad = Napi::Object::New(env);
      bad.Set("kind", "e");
      bad.Set("errno", Napi::Number::New(env, 22));
      return bad;
    }
    return body(info, root, rel);
  } catch (...) {
    return env.Null();
  }
}

Napi::Value FsInspectBody(const Napi::CallbackInfo& info, const std::string& root,
                          const std::string& rel) {
  fs_beneath::Info r = fs_beneath::Inspect(root, rel);
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("kind", std::string(1, static_cast<char>(r.kind)));
  out.Set("errno", Napi::Number::New(info.Env(), r.err));
  out.Set("size", Napi::Number::New(info.Env(), static_cast<double>(r.size)));
  out.Set("stamp", r.stamp);
  return out;
}

Napi::Value FsReadBody(const Napi::CallbackInfo& info, const std::string& root,
                       const std::string& rel) {
  double max =
      info.Length() > 2 && info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : 0;
  std::string data;
  int err = 0;
  if (max < 0 || !fs_beneath::ReadFile(root, rel, static_cast<size_t>(max), &data, &err)) {
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("errno", Napi::Number::New(info.Env(), err));
    return out;
  }
  return Napi::Buffer<char>::Copy(info.Env(), data.data(), data.size());
}

Napi::Value FsListBody(const Napi::CallbackInfo& info, const std::string& root,
                       const std::string& rel) {
  double max =
      info.Length() > 2 && info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : 0;
  std::vector<std::pair<std::string, fs_beneath::Kind>> entries;
  int err = 0;
  Napi::Env env = info.Env();
  if (max < 0 || !fs_beneath::List(root, rel, static_cast<size_t>(max), &entries, &err)) {
    Napi::Object out = Napi::Object::New(env);
    out.Set("errno", Napi::Number::New(env, err));
    return out;
  }
  Napi::Array out = Napi::Array::New(env, entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, FromBytes(env, entries[i].first));
    pair.Set(1u, std::string(1, static_cast<char>(entries[i].second)));
    out.Set(static_cast<uint32_t>(i), pair);
  }
  return out;
}

Napi::Value FsRemoveBody(const Napi::CallbackInfo& info, const std::string& root,
                         const std::string& rel) {
  fs_beneath::RemoveResult r = fs_beneath::Remove(root, rel);
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("ok", r.ok);
  out.Set("errno", Napi::Number::New(info.Env(), r.err));
  out.Set("removed", Napi::Number::New(info.Env(), static_cast<double>(r.removed)));
  return out;
}

// fsReplace(root, rel, data, mode): a new regular file in place of whatever is at rel.
Napi::Value FsReplaceBody(const Napi::CallbackInfo& info, const std::string& root,
                          const std::string& rel) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  if (info.Length() < 4 || !info[2].IsBuffer() || !info[3].IsNumber()) {
    out.Set("ok", false);
    out.Set("errno", Napi::Number::New(env, 22));
    return out;
  }
  Napi::Buffer<char> data = info[2].As<Napi::Buffer<char>>();
  int err = 0;
  bool ok = fs_beneath::Replace(root, rel, std::string(data.Data(), data.Length()),
                                info[3].As<Napi::Number>().Uint32Value(), &err);
  out.Set("ok", ok);
  out.Set("errno", Napi::Number::New(env, err));
  return out;
}

Napi::Array ToArray(Napi::Env env, const std::vector<std::string>& items) {
  Napi::Array out = Napi::Array::New(env, items.size());
  for (size_t i = 0; i < items.size(); ++i)
    out.Set(static_cast<uint32_t>(i), FromBytes(env, items[i]));
  return out;
}

// fsScanGit(root, '', maxDirs, maxRepos): every repository under root (see git_scan.h).
Napi::Value FsScanGitBody(const Napi::CallbackInfo& info, const std::string& root,
                          const std::string& /*rel*/) {
  Napi::Env env = info.Env();
  double max_dirs =
      info.Length() > 2 && info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : 0;
  double max_repos =
      info.Length() > 3 && info[3].IsNumber() ? info[3].As<Napi::Number>().DoubleValue() : 0;
  if (max_dirs < 0 || max_repos < 0) max_dirs = max_repos = 0;
  git_scan::Result r =
      git_scan::Scan(root, static_cast<uint64_t>(max_dirs), static_cast<uint64_t>(max_repos));
  Napi::Object out = Napi::Object::New(env);
  out.Set("worktrees", ToArray(env, r.worktrees));
  out.Set("gitDirs", ToArray(env, r.git_dirs));
  out.Set("dirs", Napi::Number::New(env, static_cast<double>(r.dirs)));
  out.Set("truncated", r.truncated);
  out.Set("errno", Napi::Number::New(env, r.err));
  return out;
}
#endif

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) : spawn_state_(spawn_glue::CreateState(env)) {
    DefineAddon(exports, {
                             InstanceMethod("probe", &Addon::Probe),
                             InstanceMethod("probeSync", &Addon::ProbeSync),
                             InstanceMethod("spawn", &Addon::Spawn),
                             InstanceMethod("prepareWarm", &Addon::PrepareWarm),
                             InstanceMethod("spawnWarm", &Addon::SpawnWarm),
                             InstanceMethod("launch", &Addon::Launch),
                             InstanceMethod("kill", &Addon::Kill),
                             InstanceMethod("activeCount", &Addon::ActiveCount),
                             InstanceMethod("landlockAbi", &Addon::LandlockAbi),
                             InstanceMethod("watchHangup", &Addon::WatchHangup),
#ifndef _WIN32
                             InstanceMethod("fsInspect", &Addon::FsInspect),
                             InstanceMethod("fsRead", &Addon::FsRead),
                             InstanceMethod("fsList", &Addon::FsList),
                             InstanceMethod("fsRemove", &Addon::FsRemove),
                             InstanceMethod("fsScanGit", &Addon::FsScanGit),
                             InstanceMethod("fsReplace", &Addon::FsReplace),
#endif
                         });
  }

  ~Addon() { spawn_glue::DestroyState(spawn_state_); }

 private:
  Napi::Value Spawn(const Napi::CallbackInfo& info) {
    return spawn_glue::Spawn(info, spawn_state_);
  }
  Napi::Value Kill(const Napi::CallbackInfo& info) { return spawn_glue::Kill(info, spawn_state_); }
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

  spawn_glue::State* spawn_state_;

#ifndef _WIN32
  Napi::Value FsInspect(const Napi::CallbackInfo& info) { return FsCall(info, FsInspectBody); }
  Napi::Value FsRead(const Napi::CallbackInfo& info) { return FsCall(info, FsReadBody); }
  Napi::Value FsList(const Napi::CallbackInfo& info) { return FsCall(info, FsListBody); }
  Napi::Value FsRemove(const Napi::CallbackInfo& info) { return FsCall(info, FsRemoveBody); }
  Napi::Value FsScanGit(const Napi::CallbackInfo& info) { return FsCall(info, FsScanGitBody); }
  Napi::Value FsReplace(const Napi::CallbackInfo& info) { return FsCall(info, FsReplaceBody); }
#endif

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
