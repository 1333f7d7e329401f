// SPDX-License-Identifier: MIT
// Windows spawn glue: copies the JS spec into backend::SpawnSpec, opens the stdio named pipes
// JavaScript listens on, starts the AppContainer process and reports its exit from a waiter thread.
#include <windows.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "binding/backend.h"
#include "binding/js_errors.h"
#include "binding/spawn_glue.h"
#include "windows/wide.h"
#include "windows/win_error.h"

namespace spawn_glue {
namespace {

// One running sandbox. The waiter thread owns the handles; kill() only terminates the job.
struct Sandbox {
  std::mutex mu;
  HANDLE process = nullptr;
  HANDLE job = nullptr;  // kill-on-close: closing it ends every process still in it
  bool done = false;
  bool killed = false;
};

// The sandboxes still running, shared with the waiter threads (which may outlive the State).
struct Registry {
  std::mutex mu;
  std::map<long long, std::shared_ptr<Sandbox>> active;
};

struct ExitReport {
  DWORD exit_code = 0;
  bool killed = false;
};

// Closes the handles it holds when it goes out of scope.
class OwnedHandles {
 public:
  ~OwnedHandles() {
    for (HANDLE h : handles_) CloseHandle(h);
  }
  void Add(HANDLE h) { handles_.push_back(h); }

 private:
  std::vector<HANDLE> handles_;
};

[[noreturn]] void TypeError(Napi::Env env, const std::string& message) {
  throw Napi::TypeError::New(env, message);
}

Napi::Value Field(const Napi::Object& obj, const char* name, const std::string& where) {
  Napi::Value v = obj.Get(name);
  if (v.IsUndefined()) TypeError(obj.Env(), where + "." + name + " is required");
  return v;
}

std::string String(const Napi::Object& obj, const char* name, const std::string& where) {
  Napi::Value v = Field(obj, name, where);
  if (!v.IsString()) TypeError(obj.Env(), where + "." + name + " must be a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.find('\0') != std::string::npos) TypeError(obj.Env(), where + "." + name + " contains NUL");
  return s;
}

double Number(const Napi::Object& obj, const char* name, const std::string& where) {
  Napi::Value v = Field(obj, name, where);
  if (!v.IsNumber()) TypeError(obj.Env(), where + "." + name + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > 9007199254740991.0) {
    TypeError(obj.Env(), where + "." + name + " must be a non-negative integer");
  }
  return d;
}

std::vector<std::string> Strings(const Napi::Object& obj, const char* name,
                                 const std::string& where) {
  Napi::Value v = Field(obj, name, where);
  if (!v.IsArray()) TypeError(obj.Env(), where + "." + name + " must be an array");
  Napi::Array arr = v.As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value item = arr.Get(i);
    std::string at = where + "." + name + "[" + std::to_string(i) + "]";
    if (!item.IsString()) TypeError(obj.Env(), at + " must be a string");
    std::string s = item.As<Napi::String>().Utf8Value();
    if (s.find('\0') != std::string::npos) TypeError(obj.Env(), at + " contains NUL");
    out.push_back(std::move(s));
  }
  return out;
}

// {containerName, displayName, capabilitySids, commandLine, aclKinds, aclPaths, aclRedo,
// jobMemoryBytes, jobProcessLimit}: NativeWindowsSpec of lib/backend/windows/spec.ts.
backend::WindowsSpec ParseWindowsSpec(const Napi::Object& obj) {
  const std::string where = "spec.windows";
  backend::WindowsSpec ws;
  ws.container_name = String(obj, "containerName", where);
  ws.display_name = String(obj, "displayName", where);
  ws.capability_sids = Strings(obj, "capabilitySids", where);
  ws.command_line = String(obj, "commandLine", where);
  ws.acl_kinds = Strings(obj, "aclKinds", where);
  ws.acl_paths = Strings(obj, "aclPaths", where);
  if (ws.acl_kinds.size() != ws.acl_paths.size()) {
    TypeError(obj.Env(), "spec.windows.aclKinds and aclPaths differ in length");
  }
  Napi::Value redo = Field(obj, "aclRedo", where);
  if (!redo.IsBoolean()) TypeError(obj.Env(), where + ".aclRedo must be a boolean");
  ws.acl_redo = redo.As<Napi::Boolean>().Value();
  ws.job_memory_bytes = static_cast<uint64_t>(Number(obj, "jobMemoryBytes", where));
  double processes = Number(obj, "jobProcessLimit", where);
  if (processes > 4294967295.0) TypeError(obj.Env(), "spec.windows.jobProcessLimit is too large");
  ws.job_process_limit = static_cast<uint32_t>(processes);
  return ws;
}

// Opens the client end of a pipe JavaScript listens on, checks that this process is the server
// (nobody squatted the name) and writes the nonce that JavaScript uses to pick this connection.
status::Status OpenPipe(const std::string& name, const std::string& nonce, HANDLE* out) {
  bool ok = true;
  std::wstring wname = wide::FromUtf8(name, &ok);
  if (!ok || wname.rfind(L"\\\\.\\pipe\\", 0) != 0) {
    return status::Fail("invalid_argument", 0, "OpenPipe",
                        "stdio pipe name must be \\\\.\\pipe\\...", "stdio");
  }
  // SECURITY_IDENTIFICATION: a server other than us could not act with our identity.
  HANDLE h = CreateFileW(wname.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                         SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD err = GetLastError();
    return win_error::Win32("spawn_failed", err, "CreateFileW(" + name + ")", "", "stdio");
  }
  ULONG server = 0;
  if (!GetNamedPipeServerProcessId(h, &server) || server != GetCurrentProcessId()) {
    DWORD err = GetLastError();
    CloseHandle(h);
    return win_error::Win32("spawn_failed", err, "GetNamedPipeServerProcessId(" + name + ")",
                            "the pipe is not served by this process", "stdio");
  }
  DWORD written = 0;
  if (!WriteFile(h, nonce.data(), static_cast<DWORD>(nonce.size()), &written, nullptr) ||
      written != nonce.size()) {
    DWORD err = GetLastError();
    CloseHandle(h);
    return win_error::Win32("spawn_failed", err, "WriteFile(" + name + ")", "", "stdio");
  }
  *out = h;
  return status::Ok();
}

// A HANDLE as SpawnSpec::stdio stores it. Handles are 32-bit significant on 64-bit Windows
// (documented for 32/64-bit interop: truncating and sign-extending are safe), so an int holds one.
int HandleValue(HANDLE h) { return static_cast<int>(reinterpret_cast<intptr_t>(h)); }

// One stdio entry: 'ignore' (-1, the NUL device), 0-2 (our own stream), or {pipe, nonce}.
int OpenStdio(Napi::Env env, const Napi::Value& v, int index, OwnedHandles* owned) {
  const std::string where = "spec.stdio[" + std::to_string(index) + "]";
  if (v.IsString() && v.As<Napi::String>().Utf8Value() == "ignore") return -1;
  if (v.IsNumber()) {
    int fd = v.As<Napi::Number>().Int32Value();
    static const DWORD kStd[3] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
    if (fd < 0 || fd > 2) TypeError(env, where + " must be 0, 1 or 2 when a number");
    HANDLE h = GetStdHandle(kStd[fd]);
    return (h == nullptr || h == INVALID_HANDLE_VALUE) ? -1 : HandleValue(h);
  }
  if (!v.IsObject()) TypeError(env, where + " must be 'ignore', 0-2 or {pipe, nonce}");
  Napi::Object obj = v.As<Napi::Object>();
  HANDLE h = nullptr;
  status::Status s = OpenPipe(String(obj, "pipe", where), String(obj, "nonce", where), &h);
  if (!s.ok()) throw js_errors::FromStatus(env, s);
  owned->Add(h);
  return HandleValue(h);
}

// TerminateJobObject only starts the end of the job's processes (as TerminateProcess, it returns
// before they are gone). The exit is reported once the job counts no active process: the host-side
// check of the write roots that follows must not race a process of the sandbox still writing.
// A query that fails is retried like a non-empty job: fail closed, never a report too early.
void WaitForEmptyJob(HANDLE job) {
  for (DWORD round = 0;; ++round) {
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION info = {};
    if (QueryInformationJobObject(job, JobObjectBasicAccountingInformation, &info, sizeof(info),
                                  nullptr) &&
        info.ActiveProcesses == 0) {
      return;
    }
    // A process created in the job while it was being terminated is ended by the next call.
    if (round % 64 == 63) TerminateJobObject(job, 1);
    Sleep(round < 16 ? 0 : 1);
  }
}

// Waits for the first process, ends whatever it left in the job, waits until the job is empty,
// then reports on the JS thread.
void WaitForExit(std::shared_ptr<Registry> registry, long long pid,
                 std::shared_ptr<Sandbox> sandbox, Napi::ThreadSafeFunction tsfn) {
  WaitForSingleObject(sandbox->process, INFINITE);
  auto* report = new ExitReport();
  if (!GetExitCodeProcess(sandbox->process, &report->exit_code)) report->exit_code = 1;
  // Out of the registry while the process handle is still open, so the pid cannot have been
  // reused yet; and only this sandbox's entry: a later sandbox given the same pid stays killable.
  {
    std::lock_guard<std::mutex> lock(registry->mu);
    auto it = registry->active.find(pid);
    if (it != registry->active.end() && it->second == sandbox) registry->active.erase(it);
  }
  {
    std::lock_guard<std::mutex> lock(sandbox->mu);
    TerminateJobObject(sandbox->job, 1);
    WaitForEmptyJob(sandbox->job);
    CloseHandle(sandbox->job);
    CloseHandle(sandbox->process);
    sandbox->job = nullptr;
    sandbox->process = nullptr;
    sandbox->done = true;
    report->killed = sandbox->killed;
  }
  napi_status status =
      tsfn.BlockingCall(report, [](Napi::Env env, Napi::Function callback, ExitReport* r) {
        Napi::Object exit = Napi::Object::New(env);
        exit.Set("exitCode", r->killed ? env.Null()
                                       : Napi::Number::New(env, static_cast<double>(r->exit_code)));
        exit.Set("signal", r->killed ? Napi::Number::New(env, 9) : env.Null());
        exit.Set("execErrno", Napi::Number::New(env, 0));
        exit.Set("commandExited", Napi::Boolean::New(env, !r->killed));
        delete r;
        try {
          callback.Call({exit});
        } catch (const Napi::Error& e) {
          e.ThrowAsJavaScriptException();  // the listener's own error: uncaught, as in JavaScript
        }
      });
  if (status != napi_ok) delete report;
  tsfn.Release();
}

Napi::Error Unsupported(Napi::Env env, const char* what) {
  return js_errors::FromStatus(
      env, status::Fail("sandbox_unavailable", 0, what, "prewarmed sandboxes exist on Linux only",
                        "native"));
}

}  // namespace

class State {
 public:
  std::shared_ptr<Registry> registry = std::make_shared<Registry>();
};

State* CreateState(Napi::Env, job_threads::Mailbox*) { return new State(); }

// The addon is going away with its environment: nothing it started may outlive it.
void DestroyState(State* state) {
  {
    std::lock_guard<std::mutex> lock(state->registry->mu);
    for (auto& entry : state->registry->active) {
      std::lock_guard<std::mutex> inner(entry.second->mu);
      if (!entry.second->done) TerminateJobObject(entry.second->job, 1);
    }
  }
  delete state;
}

// spawn({env, cwd, stdio, windows}, onExit) => { pid }.
Napi::Value Spawn(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsFunction()) {
    TypeError(env, "spawn(spec, onExit): spec must be an object and onExit a function");
  }
  Napi::Object obj = info[0].As<Napi::Object>();
  backend::SpawnSpec spec;
  spec.envp = Strings(obj, "env", "spec");
  spec.cwd = String(obj, "cwd", "spec");
  Napi::Value windows = Field(obj, "windows", "spec");
  if (!windows.IsObject()) TypeError(env, "spec.windows must be an object");
  spec.windows_spec = ParseWindowsSpec(windows.As<Napi::Object>());
  Napi::Value stdio = Field(obj, "stdio", "spec");
  if (!stdio.IsArray() || stdio.As<Napi::Array>().Length() != 3)
    TypeError(env, "spec.stdio must have 3 entries");
  // Our ends of the pipes close when this returns: the child holds its own inherited copies.
  OwnedHandles owned;
  for (uint32_t i = 0; i < 3; ++i) {
    spec.stdio[i] = OpenStdio(env, stdio.As<Napi::Array>().Get(i), static_cast<int>(i), &owned);
  }
  backend::SpawnResult result;
  status::Status s = backend::Spawn(spec, &result);
  if (!s.ok()) throw js_errors::FromStatus(env, s);
  auto sandbox = std::make_shared<Sandbox>();
  sandbox->process = static_cast<HANDLE>(result.process_handle);
  sandbox->job = static_cast<HANDLE>(result.job_handle);
  Napi::ThreadSafeFunction tsfn;
  try {
    tsfn =
        Napi::ThreadSafeFunction::New(env, info[1].As<Napi::Function>(), "zero-sandbox-exit", 0, 1);
  } catch (...) {
    CloseHandle(sandbox->job);  // kill-on-close: the command does not outlive a failed spawn
    CloseHandle(sandbox->process);
    throw;
  }
  {
    std::lock_guard<std::mutex> lock(state->registry->mu);
    state->registry->active[result.pid] = sandbox;
  }
  std::thread(WaitForExit, state->registry, result.pid, sandbox, tsfn).detach();
  Napi::Object out = Napi::Object::New(env);
  out.Set("pid", Napi::Number::New(env, static_cast<double>(result.pid)));
  return out;
}

Napi::Value SpawnAsync(const Napi::CallbackInfo& info, State*) {
  throw Unsupported(info.Env(), "spawnAsync");
}

Napi::Value PrepareWarm(const Napi::CallbackInfo& info, State*) {
  throw Unsupported(info.Env(), "prepareWarm");
}

Napi::Value SpawnWarm(const Napi::CallbackInfo& info, State*) {
  throw Unsupported(info.Env(), "spawnWarm");
}

Napi::Value Launch(const Napi::CallbackInfo& info, State*) { return info.Env().Null(); }

// kill(pid, signal): every signal terminates the job (Windows has no signals to choose from).
Napi::Value Kill(const Napi::CallbackInfo& info, State* state) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber())
    TypeError(env, "kill(pid, signal): pid must be a number");
  long long pid = info[0].As<Napi::Number>().Int64Value();
  std::shared_ptr<Sandbox> sandbox;
  {
    std::lock_guard<std::mutex> lock(state->registry->mu);
    auto it = state->registry->active.find(pid);
    if (it != state->registry->active.end()) sandbox = it->second;
  }
  if (!sandbox) return Napi::Boolean::New(env, false);
  std::lock_guard<std::mutex> lock(sandbox->mu);
  if (sandbox->done) return Napi::Boolean::New(env, false);
  sandbox->killed = true;
  return Napi::Boolean::New(env, TerminateJobObject(sandbox->job, 1) != 0);
}

Napi::Value ActiveCount(const Napi::CallbackInfo& info, State* state) {
  std::lock_guard<std::mutex> lock(state->registry->mu);
  return Napi::Number::New(info.Env(), static_cast<double>(state->registry->active.size()));
}

Napi::Value LandlockAbi(const Napi::CallbackInfo& info, State*) {
  return Napi::Number::New(info.Env(), 0);
}

}  // namespace spawn_glue
