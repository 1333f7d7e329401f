// SPDX-License-Identifier: MIT
// The file verbs on Windows (see binding/fs_glue.h): the handle-relative walks of
// binding/fs_beneath.h (fs_walk_windows.cc, fs_remove_windows.cc; glued in binding/), and one verb
// of its own, windowsAcl: applying and reverting a container's ACL plan and
// deleting its profile, on the thread pool, because setting an inheritable ACE on a large tree
// propagates it to every file below and can take long.
#include <windows.h>

#include <sddl.h>

#include <memory>
#include <string>
#include <vector>

#include "binding/fs_glue.h"
#include "binding/js_errors.h"
#include "windows/app_container.h"
#include "windows/wide.h"
#include "windows/win_acl.h"
#include "windows/win_error.h"

namespace fs_glue {
namespace {

enum class Op { kApply, kRevert, kDeleteProfile };

// What one windowsAcl call does, copied out of JavaScript values on the JavaScript thread.
struct AclRequest {
  Op op = Op::kApply;
  std::string container;
  std::string sid;  // empty: derived from `container`
  std::vector<std::string> kinds;
  std::vector<std::string> paths;
  bool redo = false;
};

// Owns a SID from either source: ConvertStringSidToSidW (LocalFree) or userenv (FreeSid).
struct OwnedSid {
  PSID sid = nullptr;
  bool local = false;
  ~OwnedSid() {
    if (sid == nullptr) return;
    if (local) {
      LocalFree(sid);
    } else {
      FreeSid(sid);
    }
  }
};

// True for "S-1-15-2-" followed by decimal sub-authorities: an AppContainer SID. Nothing else may
// be given ACEs through this verb (a slip must not grant Everyone or the user).
bool IsAppContainerSid(const std::string& text) {
  const std::string prefix = "S-1-15-2-";
  if (text.rfind(prefix, 0) != 0 || text.size() == prefix.size() || text.back() == '-') {
    return false;
  }
  for (size_t i = prefix.size(); i < text.size(); ++i) {
    char c = text[i];
    if (!(c >= '0' && c <= '9') && !(c == '-' && text[i - 1] != '-')) return false;
  }
  return true;
}

status::Status ResolveSid(const AclRequest& r, OwnedSid* out) {
  if (r.sid.empty()) return app_container::DeriveSid(wide::FromUtf8(r.container), &out->sid);
  if (!IsAppContainerSid(r.sid)) {
    return status::Fail("invalid_argument", 0, "windowsAcl",
                        "sid " + r.sid + " is not an AppContainer SID (S-1-15-2-...)", "acl");
  }
  std::wstring wsid = wide::FromUtf8(r.sid);
  if (!ConvertStringSidToSidW(wsid.c_str(), &out->sid)) {
    DWORD err = GetLastError();
    out->sid = nullptr;
    return win_error::Win32("invalid_argument", err, "ConvertStringSidToSidW(" + r.sid + ")", "",
                            "acl");
  }
  out->local = true;
  return status::Ok();
}

status::Status Run(const AclRequest& r, size_t* changed) {
  *changed = 0;
  if (r.op == Op::kDeleteProfile) return app_container::DeleteProfile(wide::FromUtf8(r.container));
  OwnedSid sid;
  status::Status s = ResolveSid(r, &sid);
  if (!s.ok()) return s;
  if (r.op == Op::kRevert) return win_acl::RevertAclPlan(sid.sid, r.paths, changed);
  s = win_acl::ApplyAclPlan(sid.sid, r.kinds, r.paths, r.redo);
  if (s.ok()) *changed = r.paths.size();
  return s;
}

// Runs one request on the thread pool; no JavaScript is touched off the JavaScript thread, and the
// outcome settles the promise there (errors through js_errors, the one chokepoint).
class AclWorker : public Napi::AsyncWorker {
 public:
  AclWorker(Napi::Env env, Napi::Promise::Deferred deferred, AclRequest request)
      : Napi::AsyncWorker(env), deferred_(deferred), request_(std::move(request)) {}

  void Execute() override { status_ = Run(request_, &changed_); }

  void OnOK() override {
    Napi::Env env = Env();
    if (!status_.ok()) {
      deferred_.Reject(js_errors::FromStatus(env, status_).Value());
      return;
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("changed", Napi::Number::New(env, static_cast<double>(changed_)));
    deferred_.Resolve(out);
  }

 private:
  Napi::Promise::Deferred deferred_;
  AclRequest request_;
  status::Status status_;
  size_t changed_ = 0;
};

[[noreturn]] void TypeError(Napi::Env env, const std::string& message) {
  throw Napi::TypeError::New(env, message);
}

std::string Text(const Napi::Object& obj, const char* name) {
  Napi::Value v = obj.Get(name);
  if (!v.IsString()) TypeError(obj.Env(), std::string("windowsAcl: ") + name + " must be a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.find('\0') != std::string::npos) {
    TypeError(obj.Env(), std::string("windowsAcl: ") + name + " contains NUL");
  }
  return s;
}

std::vector<std::string> Texts(const Napi::Object& obj, const char* name) {
  Napi::Value v = obj.Get(name);
  if (!v.IsArray()) TypeError(obj.Env(), std::string("windowsAcl: ") + name + " must be an array");
  Napi::Array arr = v.As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value item = arr.Get(i);
    if (!item.IsString()) {
      TypeError(obj.Env(), std::string("windowsAcl: ") + name + " must hold strings only");
    }
    std::string s = item.As<Napi::String>().Utf8Value();
    if (s.find('\0') != std::string::npos) {
      TypeError(obj.Env(), std::string("windowsAcl: ") + name + " contains NUL");
    }
    out.push_back(std::move(s));
  }
  return out;
}

// windowsAcl({op: 'apply'|'revert'|'delete-profile', container, sid?, kinds, paths, redo})
// => Promise<{changed}>. Arguments are checked here, on the JavaScript thread (TypeError).
Napi::Value WindowsAcl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) TypeError(env, "windowsAcl(request): an object");
  Napi::Object obj = info[0].As<Napi::Object>();
  AclRequest r;
  std::string op = Text(obj, "op");
  if (op == "apply") {
    r.op = Op::kApply;
  } else if (op == "revert") {
    r.op = Op::kRevert;
  } else if (op == "delete-profile") {
    r.op = Op::kDeleteProfile;
  } else {
    TypeError(env, "windowsAcl: op must be apply, revert or delete-profile");
  }
  r.container = Text(obj, "container");
  if (!obj.Get("sid").IsUndefined()) r.sid = Text(obj, "sid");
  r.kinds = Texts(obj, "kinds");
  r.paths = Texts(obj, "paths");
  if (r.op == Op::kApply && r.kinds.size() != r.paths.size()) {
    TypeError(env, "windowsAcl: kinds and paths differ in length");
  }
  Napi::Value redo = obj.Get("redo");
  if (!redo.IsBoolean()) TypeError(env, "windowsAcl: redo must be a boolean");
  r.redo = redo.As<Napi::Boolean>().Value();
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  (new AclWorker(env, deferred, std::move(r)))->Queue();
  return deferred.Promise();
}

}  // namespace

void Export(Napi::Env env, Napi::Object exports, job_threads::Mailbox* /*mailbox*/) {
  ExportVerbs(env, exports);
  exports.Set("windowsAcl", Napi::Function::New(env, WindowsAcl, "windowsAcl"));
}

}  // namespace fs_glue
