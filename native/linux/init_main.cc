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
#include <sys/mman.h>
#include <sys/socket.h>

#include "linux/init_sys.h"
#include "linux/cap_checks.h"
#include "linux/init_wire.h"
#include "linux/launch_message.h"
#include "linux/net_counters.h"

namespace {

using namespace init_wire;

constexpr long kProbeIntervalUs = 200000;

constexpr int kEnoent = 2, kEintr = 4, kEnomem = 12, kEacces = 13, kEnotdir = 20, kEinval = 22,
              kEnoexec = 8, kEchild = 10, kEproto = 71, kEconnreset = 104;
constexpr int kSigkill = 9, kSigchld = 17, kSigalrm = 14;
constexpr int kPrSetDumpable = 4;
const int kForwarded[] = {15 /*TERM*/, 2 /*INT*/,   1 /*HUP*/,    3 /*QUIT*/,
                          10 /*USR1*/, 12 /*USR2*/, 28 /*WINCH*/, 18 /*CONT*/};

using Mask = unsigned long;  // the kernel's signal set: one bit per signal, 64 signals
constexpr Mask Bit(int sig) { return 1UL << (sig - 1); }
constexpr int kSigSetmask = 2;
// struct signalfd_siginfo: 128 bytes, the signal number first.
struct SignalInfo {
  uint32_t signo;
  uint8_t rest[124];
};

// Best effort and never blocking (the report pipe is non-blocking): the exit status is what
// counts, a record only adds detail.
void Report(ReportType type, int32_t value) {
  ReportRecord record = {type, value};
  SYS(write, kReportFd, (long)&record, sizeof record);
}

// The exit code that stands for a wait status: the exit code, or 128+N for signal N (the
// shell's convention). The host decodes it the same way (native/linux/exit_watcher.cc).
int ExitCodeFor(int status) {
  int signal = status & 0x7f;
  if (signal == 0) return (status >> 8) & 0xff;
  return (128 + signal) & 0xff;
}

[[noreturn]] void Exit(int code) {
  for (;;) SYS(exit_group, code);
}

size_t Length(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

bool Equal(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

// A bump allocator over anonymous mappings: the init frees nothing before it exits.
void* Alloc(size_t size) {
  long p = SYS(mmap, 0, (long)((size + 4095) & ~size_t{4095}), PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p < 0 && p > -4096 ? nullptr : reinterpret_cast<void*>(p);
}

// What a launch message carries; pointers index into one mapped buffer.
struct Launch {
  char** argv = nullptr;
  char** envp = nullptr;
  const char* cwd = nullptr;
  int stdio[3] = {-1, -1, -1};
  launch_message::Rlimit rlimits[8];
  uint32_t rlimit_count = 0;
};

bool ReadFull(int fd, void* buf, size_t len) {
  char* p = static_cast<char*>(buf);
  while (len > 0) {
    long n = SYS(read, fd, (long)p, (long)len);
    if (n == -kEintr) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// Splits `count` NUL-terminated strings out of [cursor, end) into a NULL-terminated vector.
char** SplitStrings(char** cursor, char* end, uint32_t count) {
  char** out = static_cast<char**>(Alloc((count + 1) * sizeof(char*)));
  if (out == nullptr) return nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    if (*cursor >= end) return nullptr;
    out[i] = *cursor;
    char* p = *cursor;
    while (p < end && *p != '\0') ++p;
    if (p >= end) return nullptr;
    *cursor = p + 1;
  }
  out[count] = nullptr;
  return out;
}

// Receives the one launch message of a prewarmed sandbox. Returns 0 or an errno.
int ReceiveLaunch(Launch* launch) {
  launch_message::Header header;
  struct iovec iov = {&header, sizeof header};
  alignas(struct cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))];
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  long n;
  do {
    n = SYS(recvmsg, kControlFd, (long)&msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n == -kEintr);
  if (n != static_cast<long>(sizeof header))
    return n == 0 ? kEconnreset : (n < 0 ? static_cast<int>(-n) : kEproto);
  if (header.magic != launch_message::kMagic || header.payload_len > launch_message::kMaxPayload ||
      header.rlimit_count > 8 || header.argc == 0) {
    return kEproto;
  }
  struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  if (cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS ||
      cmsg->cmsg_len != CMSG_LEN(3 * sizeof(int))) {
    return kEproto;
  }
  const int* fds = reinterpret_cast<const int*>(CMSG_DATA(cmsg));
  for (int i = 0; i < 3; ++i) launch->stdio[i] = fds[i];
  if (!ReadFull(kControlFd, launch->rlimits, header.rlimit_count * sizeof(launch_message::Rlimit)))
    return kEproto;
  launch->rlimit_count = header.rlimit_count;
  char* payload = static_cast<char*>(Alloc(header.payload_len + 1));
  if (payload == nullptr) return kEnomem;
  if (!ReadFull(kControlFd, payload, header.payload_len)) return kEproto;
  payload[header.payload_len] = '\0';
  char* cursor = payload;
  char* end = payload + header.payload_len;
  launch->argv = SplitStrings(&cursor, end, header.argc);
  launch->envp = SplitStrings(&cursor, end, header.envc);
  if (launch->argv == nullptr || launch->envp == nullptr || cursor >= end) return kEproto;
  launch->cwd = cursor;
  return 0;
}

// execve, and for a file the kernel cannot execute (no #! line), /bin/sh FILE ARGS as execvp does.
int Exec(const char* path, char** argv, char** envp) {
  long err = -SYS(execve, (long)path, (long)argv, (long)envp);
  if (err != kEnoexec) return static_cast<int>(err);
  size_t argc = 0;
  while (argv[argc] != nullptr) ++argc;
  char** shell = static_cast<char**>(Alloc((argc + 2) * sizeof(char*)));
  if (shell == nullptr) return kEnomem;
  shell[0] = const_cast<char*>("/bin/sh");
  shell[1] = const_cast<char*>(path);
  for (size_t i = 1; i <= argc; ++i) shell[i + 1] = argv[i];
  SYS(execve, (long)"/bin/sh", (long)shell, (long)envp);
  return kEnoexec;
}

// execvp's search: a name with a slash is a path; otherwise each PATH entry (default
// /bin:/usr/bin), remembering EACCES, skipping entries that do not hold the file.
int ExecSearch(char** argv, char** envp) {
  const char* file = argv[0];
  for (const char* p = file; *p != '\0'; ++p) {
    if (*p == '/') return Exec(file, argv, envp);
  }
  const char* path = "/bin:/usr/bin";
  for (char** e = envp; *e != nullptr; ++e) {
    const char* v = *e;
    if (v[0] == 'P' && v[1] == 'A' && v[2] == 'T' && v[3] == 'H' && v[4] == '=') path = v + 5;
  }
  size_t file_len = Length(file);
  char buf[4096];
  bool denied = false;
  for (const char* dir = path;;) {
    const char* stop = dir;
    while (*stop != '\0' && *stop != ':') ++stop;
    size_t dir_len = static_cast<size_t>(stop - dir);
    if (dir_len + 1 + file_len < sizeof buf) {
      size_t n = 0;
      if (dir_len == 0) buf[n++] = '.';  // an empty entry is the current directory
      for (size_t i = 0; i < dir_len; ++i) buf[n++] = dir[i];
      buf[n++] = '/';
      for (size_t i = 0; i <= file_len; ++i) buf[n++] = file[i];
      int err = Exec(buf, argv, envp);
      if (err == kEacces)
        denied = true;
      else if (err != kEnoent && err != kEnotdir && err != 116 /*ESTALE*/ && err != 19 /*ENODEV*/ &&
               err != 110 /*ETIMEDOUT*/)
        return err;
    }
    if (*stop == '\0') break;
    dir = stop + 1;
  }
  return denied ? kEacces : kEnoent;
}

// In the forked command: its own process group, the launch's stdio and limits, no blocked
// signals; then the exec. Never returns.
[[noreturn]] void RunCommand(char** command, char** envp, const Launch* launch) {
  SYS(setpgid, 0, 0);
  SYS(fcntl, kReportFd, F_SETFD, FD_CLOEXEC);
  if (launch != nullptr) {
    long high[3];
    for (int i = 0; i < 3; ++i) high[i] = SYS(fcntl, launch->stdio[i], F_DUPFD_CLOEXEC, 10);
    for (int i = 0; i < 3; ++i) {
      long r = high[i] < 0 ? high[i] : SYS(dup3, high[i], i, 0);
      if (r < 0) {
        Report(kReportExecFailed, static_cast<int32_t>(-r));
        Exit(125);
      }
    }
    for (uint32_t i = 0; i < launch->rlimit_count; ++i) {
      uint64_t value[2] = {launch->rlimits[i].soft, launch->rlimits[i].hard};
      long r = SYS(prlimit64, 0, (long)launch->rlimits[i].resource, (long)value, 0);
      if (r < 0) {
        Report(kReportExecFailed, static_cast<int32_t>(-r));
        Exit(125);
      }
    }
  }
  Mask none = 0;
  SYS(rt_sigprocmask, kSigSetmask, (long)&none, 0, sizeof none);
  int err = ExecSearch(command, envp);
  Report(kReportExecFailed, err);
  Exit(err == kEnoent ? 127 : 126);
}

int Main(int argc, char** argv, char** envp) {
  // Only ever pid 1 of a sandbox's pid namespace: its final kill(-1) would otherwise reach every
  // process the caller may signal.
  if (argc < 2 || SYS(getpid) != 1) {
    Report(kReportExecFailed, kEinval);
    return 125;
  }
  // Before anything else runs in the sandbox: undumpable (see the top of this file), and a report
  // pipe that a full buffer cannot block on.
  long undumpable = SYS(prctl, kPrSetDumpable, 0, 0, 0, 0);
  if (undumpable < 0) {
    Report(kReportExecFailed, static_cast<int32_t>(-undumpable));
    return 125;
  }
  SYS(fcntl, kReportFd, F_SETFL, O_NONBLOCK);
  // A new session: the command has no controlling terminal, so it cannot reach the caller's.
  SYS(setsid);

  char** command = argv + 1;
  bool probe = Equal(command[0], "--probe-forks");
  if (probe) ++command;
  if (command[0] == nullptr) {
    Report(kReportExecFailed, kEinval);
    return 125;
  }
  bool warm = Equal(command[0], "--warm");
  // The watched tmpfs roots stay the init's: the command's process does not inherit them.
  for (int i = 0; i < kWatchSlots; ++i) SYS(fcntl, kWatchFd + i, F_SETFD, FD_CLOEXEC);
  // Before any process of the command exists: what the network namespace counted so far.
  long no_routes_before = net_counters::NoRoutes();

  // Every signal stays blocked in the init; the ones it acts on are read from a signalfd. (A
  // pid namespace's init would drop unhandled signals, but blocked ones are queued.)
  Mask all = ~0UL;
  SYS(rt_sigprocmask, kSigSetmask, (long)&all, 0, sizeof all);
  Mask wanted = Bit(kSigchld);
  for (int sig : kForwarded) wanted |= Bit(sig);
  if (probe) wanted |= Bit(kSigalrm);
  long sigfd = SYS(signalfd4, -1, (long)&wanted, sizeof wanted, O_CLOEXEC);
  if (sigfd < 0) {
    Report(kReportExecFailed, static_cast<int32_t>(-sigfd));
    return 125;
  }
  // Prewarmed, the command's process is forked now and waits for the launch itself, so a launch
  // costs no fork.
  long child = SYS(clone, kSigchld, 0, 0, 0, 0);
  if (child < 0) {
    Report(kReportExecFailed, static_cast<int32_t>(-child));
    return 125;
  }
  if (child == 0) {
    if (!warm) RunCommand(command, envp, nullptr);
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
  if (warm) SYS(close, kControlFd);

  long devnull = SYS(openat, AT_FDCWD, (long)"/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    for (int fd = 0; fd < 3; ++fd) {
      if (devnull != fd) SYS(dup3, devnull, fd, 0);
    }
    if (devnull > 2) SYS(close, devnull);
  }

  // The probe's clock: SIGALRM every kProbeIntervalUs, read from the signalfd like the others (a
  // SIGALRM the command sends only adds a probe). Forked children do not inherit the timer.
  bool capped = false;
  if (probe) cap_checks::AlarmEvery(kProbeIntervalUs);

  int status = 0;
  for (bool exited = false; !exited;) {
    for (;;) {
      int st = 0;
      long pid = SYS(wait4, -1, (long)&st, WNOHANG, 0);
      if (pid == -kEintr) continue;
      if (pid == -kEchild && !exited)
        return 125;  // no children left without seeing the command exit
      if (pid <= 0) break;
      if (pid == child) {
        status = st;
        exited = true;
      }
    }
    if (exited) break;
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
      return 125;
    }
  }
  if (probe && !capped) cap_checks::AlarmEvery(0);
  // Kill every process the command left behind and reap them all. (The kernel would do the same
  // when this process exits; doing it here keeps the exit path short.) The kill is repeated each
  // round: one kill(-1) misses children forked while it walks the process list,
  // and a fork bomb would keep forking into the freed slots for ever. A round reaps everything
  // already dead, and blocks for one only when nothing was.
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
