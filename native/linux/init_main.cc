// SPDX-License-Identifier: MIT
// zero-sandbox-init: the first process of every Linux sandbox (pid 1 of its pid namespace), exec'd
// by the addon once the namespaces, mounts, Landlock and seccomp are in place. It starts the
// command in a new session, forwards termination signals to it, reaps orphans, and once every
// other process in the sandbox is dead and reaped, exits with the command's status (its exit code,
// or 128+N for signal N). The host takes that from the kernel when it reaps this process; the
// records on fd 3 (exec errno, the full wait status) are details it reads only afterwards and
// believes only where they agree with the exit code.
//
// The init is not dumpable, so no process of the sandbox can open its descriptors
// (/proc/1/fd/3), take them (pidfd_getfd) or trace it: all three need ptrace access, which an
// undumpable process grants only to holders of CAP_SYS_PTRACE in its user namespace, and the
// sandbox has no capabilities.
//
// `zero-sandbox-init CMD ARGS...` runs the command at once. `zero-sandbox-init --warm` is a
// prewarmed sandbox: its command process is forked at once and waits on fd 4 for exactly one
// launch message (argv, envp, cwd, resource limits and three stdio descriptors), then execs.
// A leading `--probe-forks` says the process cap is this PID namespace's pid_max (a root caller
// without a pids cgroup) or RLIMIT_NPROC (an ordinary caller), neither of which counts refused
// forks: the init then tries one fork of its own every 200 ms while the command runs, and reports
// the cap hit when the kernel refuses it.
//
// Fds 5 and 6, when present, are the roots of the size-capped private /tmp and /dev/shm: once
// every other process is gone, one that is full (no inode left, or free space within 1/64 of its
// size, at most 2 MiB, as large folios allocate in steps) is reported as its cap hit. These are
// the kernel's numbers, read after the command can change nothing; a command that removed what
// filled it before it ended, or a sandbox killed (timeout, abort) before this, reports nothing.
//
// It makes only system calls (init_sys.h): signals are blocked and read from a signalfd, so there
// are no handlers, and memory comes from mmap.
#include <fcntl.h>
#include <linux/wait.h>

#include "linux/cap_checks.h"
#include "linux/init_command.h"
#include "linux/init_sys.h"
#include "linux/init_wire.h"
#include "linux/net_counters.h"

namespace {

using namespace init_wire;
using namespace init_command;

constexpr long kProbeIntervalUs = 200000;

constexpr int kSigkill = 9, kSigchld = 17, kSigalrm = 14;
constexpr int kPrSetDumpable = 4;
const int kForwarded[] = {15 /*TERM*/, 2 /*INT*/,   1 /*HUP*/,    3 /*QUIT*/,
                          10 /*USR1*/, 12 /*USR2*/, 28 /*WINCH*/, 18 /*CONT*/};

constexpr Mask Bit(int sig) { return 1UL << (sig - 1); }
// struct signalfd_siginfo: 128 bytes, the signal number first.
struct SignalInfo {
  uint32_t signo;
  uint8_t rest[124];
};

// The exit code that stands for a wait status: the exit code, or 128+N for signal N (the
// shell's convention). The host decodes it the same way (native/linux/exit_watcher.cc).
int ExitCodeFor(int status) {
  int signal = status & 0x7f;
  if (signal == 0) return (status >> 8) & 0xff;
  return (128 + signal) & 0xff;
}

bool Equal(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

// What the init was asked for on its command line.
struct Mode {
  char** command = nullptr;  // the command, or "--warm"
  bool probe = false;        // --probe-forks
  bool warm = false;
};

// Reads the command line, makes the init undumpable and its report pipe non-blocking, starts a
// new session and blocks every signal; the ones it acts on come from the returned signalfd.
// Returns -1 after reporting why it cannot go on.
long Prepare(int argc, char** argv, Mode* mode) {
  // Only ever pid 1 of a sandbox's pid namespace: its final kill(-1) would otherwise reach every
  // process the caller may signal.
  if (argc < 2 || SYS(getpid) != 1) {
    Report(kReportExecFailed, kEinval);
    return -1;
  }
  // Before anything else runs in the sandbox: undumpable (see the top of this file), and a report
  // pipe that a full buffer cannot block on.
  long undumpable = SYS(prctl, kPrSetDumpable, 0, 0, 0, 0);
  if (undumpable < 0) {
    Report(kReportExecFailed, static_cast<int32_t>(-undumpable));
    return -1;
  }
  SYS(fcntl, kReportFd, F_SETFL, O_NONBLOCK);
  // A new session: the command has no controlling terminal, so it cannot reach the caller's.
  SYS(setsid);

  mode->command = argv + 1;
  mode->probe = Equal(mode->command[0], "--probe-forks");
  if (mode->probe) ++mode->command;
  if (mode->command[0] == nullptr) {
    Report(kReportExecFailed, kEinval);
    return -1;
  }
  mode->warm = Equal(mode->command[0], "--warm");
  // The watched tmpfs roots stay the init's: the command's process does not inherit them.
  for (int i = 0; i < kWatchSlots; ++i) SYS(fcntl, kWatchFd + i, F_SETFD, FD_CLOEXEC);

  // Every signal stays blocked in the init; the ones it acts on are read from a signalfd. (A
  // pid namespace's init would drop unhandled signals, but blocked ones are queued.)
  Mask all = ~0UL;
  SYS(rt_sigprocmask, kSigSetmask, (long)&all, 0, sizeof all);
  Mask wanted = Bit(kSigchld);
  for (int sig : kForwarded) wanted |= Bit(sig);
  if (mode->probe) wanted |= Bit(kSigalrm);
  long sigfd = SYS(signalfd4, -1, (long)&wanted, sizeof wanted, O_CLOEXEC);
  if (sigfd < 0) {
    Report(kReportExecFailed, static_cast<int32_t>(-sigfd));
    return -1;
  }
  return sigfd;
}

// Forks the command's process: it runs the command at once, or (prewarmed) waits for the launch
// first, so a launch costs no fork. Returns its pid, or -1 after reporting why.
long StartCommand(const Mode& mode, char** envp) {
  long child = SYS(clone, kSigchld, 0, 0, 0, 0);
  if (child < 0) {
    Report(kReportExecFailed, static_cast<int32_t>(-child));
    return -1;
  }
  if (child == 0) {
    if (!mode.warm) RunCommand(mode.command, envp, nullptr);
    Launch launch;
    int err = ReceiveLaunch(&launch);
    SYS(close, kControlFd);
    if (err == 0) {
      long r = SYS(chdir, (long)launch.cwd);
      if (r < 0) err = static_cast<int>(-r);
    }
    if (err != 0) {
      Report(kReportLaunchFailed, err);
      Exit(125);
    }
    RunCommand(launch.argv, launch.envp, &launch);
  }
  SYS(setpgid, child, child);
  // The launch and its stdio go to the command's process only.
  if (mode.warm) SYS(close, kControlFd);
  long devnull = SYS(openat, AT_FDCWD, (long)"/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    for (int fd = 0; fd < 3; ++fd) {
      if (devnull != fd) SYS(dup3, devnull, fd, 0);
    }
    if (devnull > 2) SYS(close, devnull);
  }
  return child;
}

// Reaps until the command's process exits, forwarding termination signals to its process group
// and (probe) trying a fork of its own on each SIGALRM. Returns false after reporting why it
// cannot wait any more.
bool WaitForCommand(long child, long sigfd, bool probe, int* status) {
  // The probe's clock: SIGALRM every kProbeIntervalUs, read from the signalfd like the others (a
  // SIGALRM the command sends only adds a probe). Forked children do not inherit the timer.
  bool capped = false;
  if (probe) cap_checks::AlarmEvery(kProbeIntervalUs);
  for (;;) {
    for (;;) {
      int st = 0;
      long pid = SYS(wait4, -1, (long)&st, WNOHANG, 0);
      if (pid == -kEintr) continue;
      if (pid == -kEchild) return false;  // no children left without seeing the command exit
      if (pid <= 0) break;
      if (pid == child) {
        *status = st;
        if (probe && !capped) cap_checks::AlarmEvery(0);
        return true;
      }
    }
    SignalInfo info;
    long n = SYS(read, sigfd, (long)&info, sizeof info);
    if (n == static_cast<long>(sizeof info) && info.signo == kSigalrm) {
      // Reported at once: a sandbox killed later (timeout) still says so.
      if (probe && !capped && cap_checks::ForkRefused()) {
        capped = true;
        Report(kReportProcessCap, 1);
        cap_checks::AlarmEvery(0);
      }
    } else if (n == static_cast<long>(sizeof info) && info.signo != kSigchld) {
      SYS(kill, -child, info.signo);
    } else if (n < 0 && n != -kEintr) {
      Report(kReportExecFailed, static_cast<int32_t>(-n));
      return false;
    }
  }
}

// Kills every process the command left behind and reaps them all. (The kernel would do the same
// when this process exits; doing it here keeps the exit path short.) The kill is repeated each
// round: one kill(-1) misses children forked while it walks the process list, and a fork bomb
// would keep forking into the freed slots for ever. A round reaps everything already dead, and
// blocks for one only when nothing was.
void KillTheRest() {
  for (bool done = false; !done;) {
    SYS(kill, -1, kSigkill);
    bool reaped = false;
    for (;;) {
      long pid = SYS(wait4, -1, 0, WNOHANG, 0);
      if (pid == -kEintr) continue;
      if (pid == -kEchild) done = true;
      if (pid <= 0) break;
      reaped = true;
    }
    if (done || reaped) continue;
    long pid = SYS(wait4, -1, 0, 0, 0);
    if (pid == -kEchild || (pid < 0 && pid != -kEintr)) done = true;
  }
}

int Main(int argc, char** argv, char** envp) {
  Mode mode;
  long sigfd = Prepare(argc, argv, &mode);
  if (sigfd < 0) return 125;
  // Before any process of the command exists: what the network namespace counted so far.
  long no_routes_before = net_counters::NoRoutes();
  long child = StartCommand(mode, envp);
  if (child < 0) return 125;
  int status = 0;
  if (!WaitForCommand(child, sigfd, mode.probe, &status)) return 125;
  KillTheRest();
  // Every other process of the sandbox is gone: what the command's sends added to the count.
  long no_routes_after = no_routes_before < 0 ? -1 : net_counters::NoRoutes();
  if (no_routes_after > no_routes_before) {
    long added = no_routes_after - no_routes_before;
    Report(kReportNoRoute, static_cast<int32_t>(added > 0x7fffffff ? 0x7fffffff : added));
  }
  for (int i = 0; i < kWatchSlots; ++i) {
    if (cap_checks::TmpfsFull(kWatchFd + i)) Report(kReportFull, i);
  }
  Report(kReportExited, status);
  return ExitCodeFor(status);
}

}  // namespace

#ifdef ZS_FREESTANDING

// What the compiler may call for struct copies and zeroing (built with
// -fno-tree-loop-distribute-patterns, so these loops do not turn into calls to themselves).
extern "C" {
void* memset(void* dst, int c, size_t n) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  while (n-- > 0) *d++ = static_cast<unsigned char>(c);
  return dst;
}
void* memcpy(void* dst, const void* src, size_t n) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  const unsigned char* s = static_cast<const unsigned char*>(src);
  while (n-- > 0) *d++ = *s++;
  return dst;
}
void* memmove(void* dst, const void* src, size_t n) {
  unsigned char* d = static_cast<unsigned char*>(dst);
  const unsigned char* s = static_cast<const unsigned char*>(src);
  if (d < s) {
    while (n-- > 0) *d++ = *s++;
  } else {
    while (n-- > 0) d[n] = s[n];
  }
  return dst;
}

// The kernel starts us with argc, argv..., NULL, envp..., NULL on the stack.
[[noreturn]] __attribute__((used)) void StartMain(long* stack) {
  int argc = static_cast<int>(stack[0]);
  char** argv = reinterpret_cast<char**>(stack + 1);
  Exit(Main(argc, argv, argv + argc + 1));
}
}

#if defined(__x86_64__)
__asm__(
    ".text\n.global _start\n.type _start,@function\n_start:\n"
    "  xor %rbp, %rbp\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call StartMain\n  hlt\n");
#elif defined(__aarch64__)
__asm__(
    ".text\n.global _start\n.type _start,%function\n_start:\n"
    "  mov x29, #0\n  mov x30, #0\n  mov x0, sp\n  and x1, x0, #-16\n  mov sp, x1\n  bl "
    "StartMain\n");
#endif

#else

int main(int argc, char** argv, char** envp) { return Main(argc, argv, envp); }

#endif
