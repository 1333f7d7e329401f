// SPDX-License-Identifier: MIT
// macosRunMembers: the processes of one seatbelt run, told by their profile, not their ancestry
// (a process that called setsid() and was reparented to launchd has no link left to the run).
// Every run's profile allows reading one random path and denies another (profile.ts); among the
// processes of this user, those that are sandboxed, allowed the first and denied the second run
// under that profile: an unsandboxed process is allowed both, any other profile treats the two
// alike. The answers come from the kernel's sandbox (sandbox_check), which the processes asked
// about cannot influence. Plain C++ apart from libproc and the sandbox call, so it passes the
// g++ -fsyntax-only check on Linux too (with the declarations below standing in for libproc.h).
#include <dlfcn.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#if defined(__APPLE__)
#include <libproc.h>
#else
// Only the syntax check compiles this off macOS: libproc's calls, the constants and the one field
// used here (the real layout is the SDK's).
extern "C" int proc_listpids(uint32_t type, uint32_t typeinfo, void* buffer, int buffersize);
extern "C" int proc_pidinfo(int pid, int flavor, uint64_t arg, void* buffer, int buffersize);
struct proc_bsdinfo {
  uint32_t pbi_flags;
  uint32_t pbi_status;
};
#define PROC_UID_ONLY 4
#define PROC_PIDTBSDINFO 3
#endif

#include "binding/js_errors.h"
#include "binding/run_members.h"
#include "binding/status.h"

namespace run_members {
namespace {

// sandbox_check is private API of libsystem_sandbox (part of libSystem): no SDK header declares
// it. Its prototype: int sandbox_check(pid_t, const char* operation, enum sandbox_filter_type,
// ...), returning 0 when the operation would be allowed, 1 when denied, -1 with errno on
// failure; with no operation and SANDBOX_FILTER_NONE, nonzero when the process is sandboxed.
// It is looked up at run time (as the probe looks up sandbox_init), so a system without it
// fails the call, never the load of the addon. The call is variadic: the pointer type must be.
using SandboxCheck = int (*)(pid_t pid, const char* operation, int type, ...);
// enum sandbox_filter_type: SANDBOX_FILTER_NONE is 0, SANDBOX_FILTER_PATH is 1 (the path is the
// one variadic argument).
constexpr int kFilterNone = 0;
constexpr int kFilterPath = 1;
// SANDBOX_CHECK_NO_REPORT, or'ed into the type: a denied check is not logged as a violation.
constexpr int kCheckNoReport = 0x40000000;
// The operation asked about: reading a file's contents (the profile's file-read* covers it).
const char kReadData[] = "file-read-data";

// 1: under the run's profile; 0: not; -1: undecided (a check failed, *err holds its errno).
int Classify(SandboxCheck check, pid_t pid, const char* allowed, const char* denied, int* err) {
  errno = 0;
  int sandboxed = check(pid, nullptr, kFilterNone);
  if (sandboxed == 0) return 0;
  if (sandboxed < 0) {
    *err = errno;
    return -1;
  }
  int on_allowed = check(pid, kReadData, kFilterPath | kCheckNoReport, allowed);
  if (on_allowed < 0) {
    *err = errno;
    return -1;
  }
  int on_denied = check(pid, kReadData, kFilterPath | kCheckNoReport, denied);
  if (on_denied < 0) {
    *err = errno;
    return -1;
  }
  return on_allowed == 0 && on_denied > 0 ? 1 : 0;
}

// SZOMB of <sys/proc.h>: the process state of a zombie (pbi_status).
constexpr uint32_t kZombie = 5;

// A zombie has exited: it runs no code and holds only its exit status until its parent reaps it.
bool IsZombie(pid_t pid) {
  struct proc_bsdinfo info;
  int bytes = proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, static_cast<int>(sizeof info));
  return bytes == static_cast<int>(sizeof info) && info.pbi_status == kZombie;
}

// The pids of the processes whose effective uid is ours (what PROC_UID_ONLY filters on: the
// sandboxed processes of a run have the uid of the process that started them). A listing that
// fills the buffer may be cut short, so it is taken again with more room; never a partial one.
status::Status ListOwnPids(std::vector<pid_t>* out) {
  const uint32_t uid = static_cast<uint32_t>(geteuid());
  for (int attempt = 0; attempt < 8; ++attempt) {
    int estimate = proc_listpids(PROC_UID_ONLY, uid, nullptr, 0);
    if (estimate <= 0)
      return status::Fail("internal_error", errno, "proc_listpids(PROC_UID_ONLY)", "", "seatbelt");
    size_t room =
        static_cast<size_t>(estimate) / sizeof(pid_t) + 256 * static_cast<size_t>(attempt + 1);
    out->assign(room, 0);
    int bytes =
        proc_listpids(PROC_UID_ONLY, uid, out->data(), static_cast<int>(room * sizeof(pid_t)));
    if (bytes <= 0)
      return status::Fail("internal_error", errno, "proc_listpids(PROC_UID_ONLY)", "", "seatbelt");
    size_t count = static_cast<size_t>(bytes) / sizeof(pid_t);
    if (count < room) {
      out->resize(count);
      return status::Ok();
    }
  }
  return status::Fail("internal_error", 0, "proc_listpids(PROC_UID_ONLY)",
                      "the list of processes kept filling its buffer", "seatbelt");
}

struct Listing {
  std::vector<pid_t> members;
  int undecided = 0;
  int undecided_errno = 0;
};

status::Status ListMembers(const std::string& allowed, const std::string& denied, Listing* out) {
  SandboxCheck check = reinterpret_cast<SandboxCheck>(dlsym(RTLD_DEFAULT, "sandbox_check"));
  if (check == nullptr) {
    return status::Fail("sandbox_unavailable", 0, "dlsym(sandbox_check)",
                        "this macOS does not export sandbox_check", "seatbelt");
  }
  std::vector<pid_t> pids;
  status::Status s = ListOwnPids(&pids);
  if (!s.ok()) return s;
  const pid_t self = getpid();
  for (pid_t pid : pids) {
    // pid 0 is no process to ask about; this process is never sandboxed (we run sandbox-exec).
    if (pid <= 0 || pid == self) continue;
    int err = 0;
    int verdict = Classify(check, pid, allowed.c_str(), denied.c_str(), &err);
    // A zombie of the run (killed, not reaped yet) is no member left to kill.
    if (verdict > 0 && !IsZombie(pid)) {
      out->members.push_back(pid);
    } else if (verdict < 0 && !IsZombie(pid)) {
      // Not a zombie that outlived its checks: it may have been a member that forked and exited
      // between the listing and the check, so the round does not count as empty.
      out->undecided++;
      if (out->undecided_errno == 0) out->undecided_errno = err;
    }
  }
  return status::Ok();
}

// A path argument: a string with no NUL (c_str() would cut it short and name another path).
bool PathArg(const Napi::Value& value, std::string* out) {
  if (!value.IsString()) return false;
  *out = value.As<Napi::String>().Utf8Value();
  return !out->empty() && out->find('\0') == std::string::npos;
}

Napi::Value RunMembers(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string allowed;
  std::string denied;
  if (info.Length() != 2 || !PathArg(info[0], &allowed) || !PathArg(info[1], &denied) ||
      allowed == denied) {
    throw Napi::TypeError::New(env,
                               "macosRunMembers(allowedPath, deniedPath): two different paths");
  }
  Listing listing;
  status::Status s = ListMembers(allowed, denied, &listing);
  if (!s.ok()) throw js_errors::FromStatus(env, s);
  Napi::Array members = Napi::Array::New(env, listing.members.size());
  for (size_t i = 0; i < listing.members.size(); ++i) {
    members.Set(static_cast<uint32_t>(i), Napi::Number::New(env, listing.members[i]));
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("members", members);
  out.Set("undecided", Napi::Number::New(env, listing.undecided));
  out.Set("undecidedErrno", Napi::Number::New(env, listing.undecided_errno));
  return out;
}

}  // namespace

void Export(Napi::Env env, Napi::Object exports) {
  exports.Set("macosRunMembers", Napi::Function::New(env, RunMembers, "macosRunMembers"));
}

}  // namespace run_members
