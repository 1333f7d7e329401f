// SPDX-License-Identifier: MIT
// macOS probe: is /usr/bin/sandbox-exec there, does it apply a profile (it fails when this process
// is already sandboxed), does a deny rule really deny, and is sandbox_init exported by libSystem.
// Plain POSIX apart from the sandbox calls, so it passes `g++ -fsyntax-only` on Linux too.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "binding/backend.h"

extern char** environ;

namespace backend {
namespace {

const char kSandboxExec[] = "/usr/bin/sandbox-exec";

// Runs argv with stdio on /dev/null; returns the exit status or -1 with *err set.
int RunQuiet(const char* const argv[], int* err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd < 3; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *err = rc;
    return -1;
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) {
      *err = errno;
      return -1;
    }
  }
  if (!WIFEXITED(wstatus)) {
    *err = 0;
    return 128 + (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
  }
  return WEXITSTATUS(wstatus);
}

Fact RunFact(const char* name, const char* const argv[], int expect_zero, const char* call) {
  Fact f;
  f.name = name;
  f.attempted = true;
  int err = 0;
  int code = RunQuiet(argv, &err);
  f.value = code;
  f.ok = code >= 0 && ((code == 0) == (expect_zero != 0));
  if (!f.ok) {
    f.sys_errno = code < 0 ? err : 0;
    f.syscall = std::string(call) + (code < 0 ? "" : " exit " + std::to_string(code));
  }
  return f;
}

}  // namespace

status::Status Probe(ProbeResult* out) {
  struct utsname uts;
  if (uname(&uts) != 0) return status::Fail("internal_error", errno, "uname");
  out->platform = "darwin";
  out->arch = uts.machine;
  out->release = uts.release;
  out->uid = static_cast<long long>(geteuid());

  Fact init;
  init.name = "sandboxInit";
  init.attempted = true;
  // sandbox_init is deprecated in the SDK headers but still exported; look it up rather than link.
  init.ok = dlsym(RTLD_DEFAULT, "sandbox_init") != nullptr;
  if (!init.ok) init.syscall = "dlsym(sandbox_init)";
  out->facts.push_back(init);

  if (access(kSandboxExec, X_OK) != 0) {
    Fact missing;
    missing.name = "sandboxExec";
    missing.attempted = false;
    missing.sys_errno = errno;
    missing.syscall = "access(/usr/bin/sandbox-exec)";
    out->facts.push_back(missing);
    Fact enforced;
    enforced.name = "seatbeltEnforced";
    out->facts.push_back(enforced);
    return status::Ok();
  }
  // Applying any profile fails with EPERM inside an existing sandbox: this is the usable check.
  const char* const allow[] = {kSandboxExec, "-p", "(version 1)(allow default)", "/usr/bin/true",
                               nullptr};
  Fact exec = RunFact("sandboxExec", allow, 1, "sandbox-exec");
  out->facts.push_back(exec);
  // A profile that denies reading one file must make cat fail: the rules are really enforced.
  const char* const deny[] = {
      kSandboxExec,
      "-p",
      "(version 1)(allow default)(deny file-read* (literal \"/private/etc/hosts\"))",
      "/bin/cat",
      "/private/etc/hosts",
      nullptr};
  Fact enforced = exec.ok ? RunFact("seatbeltEnforced", deny, 0, "sandbox-exec deny") : Fact{};
  if (!exec.ok) enforced.name = "seatbeltEnforced";
  out->facts.push_back(enforced);
  return status::Ok();
}

}  // namespace backend
