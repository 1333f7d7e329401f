// SPDX-License-Identifier: MIT
// zero-sandbox-init: the first process of every Linux sandbox (pid 1 of its pid namespace), exec'd
// by the addon once the namespaces, mounts, Landlock and seccomp are in place. It starts the
// command in a new session, forwards termination signals to it, reaps orphans, and reports the
// command's fate on fd 3 once every other process in the sandbox is dead and reaped.
//
// `zero-sandbox-init CMD ARGS...` runs the command at once. `zero-sandbox-init --warm` is a
// prewarmed sandbox: it waits on fd 4 for exactly one launch message (argv, envp, cwd, resource
// limits and three stdio descriptors), then proceeds the same way.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch_message.h"

namespace {

constexpr int kReportFd = 3;
constexpr int kControlFd = 4;
// Report records: {type, value}; mirrored by native/common/exit_watcher.cc.
constexpr int32_t kReportExecFailed = 1;  // value: errno of execvp
constexpr int32_t kReportExited = 2;      // value: the command's wait status
constexpr int32_t kReportLaunchFailed = 3;  // value: errno of receiving or applying the launch

volatile sig_atomic_t g_child = 0;

void Report(int32_t type, int32_t value) {
  int32_t record[2] = {type, value};
  ssize_t ignored = write(kReportFd, record, sizeof record);
  (void)ignored;
}

// Forwards a termination-style signal to the command's process group.
void Forward(int sig) {
  pid_t child = g_child;
  if (child > 0) kill(-child, sig);
}

const int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

// What a launch message carries; pointers index into one heap buffer.
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
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// Splits `count` NUL-terminated strings out of [cursor, end) into a NULL-terminated vector.
char** SplitStrings(char** cursor, char* end, uint32_t count) {
  char** out = static_cast<char**>(calloc(count + 1, sizeof(char*)));
  if (out == nullptr) return nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    if (*cursor >= end) return nullptr;
    out[i] = *cursor;
    size_t len = strnlen(*cursor, static_cast<size_t>(end - *cursor));
    if (*cursor + len >= end) return nullptr;
    *cursor += len + 1;
  }
  return out;
}

// Receives the one launch message of a prewarmed sandbox. Returns 0 or an errno.
int ReceiveLaunch(Launch* launch) {
  launch_message::Header header;
  struct iovec iov = {&header, sizeof header};
  char control[CMSG_SPACE(3 * sizeof(int))];
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(kControlFd, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof header)) return n == 0 ? ECONNRESET : (n < 0 ? errno : EPROTO);
  if (header.magic != launch_message::kMagic || header.payload_len > launch_message::kMaxPayload ||
      header.rlimit_count > 8 || header.argc == 0) {
    return EPROTO;
  }
  struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  if (cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS || cmsg->cmsg_len != CMSG_LEN(3 * sizeof(int))) {
    return EPROTO;
  }
  memcpy(launch->stdio, CMSG_DATA(cmsg), 3 * sizeof(int));
  size_t rl_bytes = header.rlimit_count * sizeof(launch_message::Rlimit);
  if (!ReadFull(kControlFd, launch->rlimits, rl_bytes)) return EPROTO;
  launch->rlimit_count = header.rlimit_count;
  char* payload = static_cast<char*>(malloc(header.payload_len + 1));
  if (payload == nullptr) return ENOMEM;
  if (!ReadFull(kControlFd, payload, header.payload_len)) return EPROTO;
  payload[header.payload_len] = '\0';
  char* cursor = payload;
  char* end = payload + header.payload_len;
  launch->argv = SplitStrings(&cursor, end, header.argc);
  launch->envp = SplitStrings(&cursor, end, header.envc);
  if (launch->argv == nullptr || launch->envp == nullptr || cursor >= end) return EPROTO;
  launch->cwd = cursor;
  return 0;
}

// In the forked command: install the launch's stdio and limits.
void ApplyLaunchInChild(const Launch& launch) {
  int high[3];
  for (int i = 0; i < 3; ++i) high[i] = fcntl(launch.stdio[i], F_DUPFD_CLOEXEC, 10);
  for (int i = 0; i < 3; ++i) {
    if (high[i] < 0 || dup2(high[i], i) < 0) {
      Report(kReportExecFailed, errno);
      _exit(125);
    }
  }
  for (uint32_t i = 0; i < launch.rlimit_count; ++i) {
    struct rlimit value = {launch.rlimits[i].soft, launch.rlimits[i].hard};
    if (setrlimit(static_cast<__rlimit_resource>(launch.rlimits[i].resource), &value) != 0) {
      Report(kReportExecFailed, errno);
      _exit(125);
    }
  }
  environ = launch.envp;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    Report(kReportExecFailed, EINVAL);
    return 125;
  }
  // A new session: the command has no controlling terminal, so it cannot reach the caller's.
  setsid();

  Launch launch;
  char** command = argv + 1;
  bool warm = strcmp(argv[1], "--warm") == 0;
  if (warm) {
    int err = ReceiveLaunch(&launch);
    close(kControlFd);
    if (err == 0 && chdir(launch.cwd) != 0) err = errno;
    if (err != 0) {
      Report(kReportLaunchFailed, err);
      return 125;
    }
    command = launch.argv;
  }

  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &previous);
  pid_t child = fork();
  if (child < 0) {
    Report(kReportExecFailed, errno);
    return 125;
  }
  if (child == 0) {
    setpgid(0, 0);
    fcntl(kReportFd, F_SETFD, FD_CLOEXEC);
    if (warm) ApplyLaunchInChild(launch);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    execvp(command[0], command);
    int err = errno;
    Report(kReportExecFailed, err);
    _exit(err == ENOENT ? 127 : 126);
  }
  g_child = child;
  setpgid(child, child);
  for (int sig : kForwarded) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = Forward;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, nullptr);
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);

  // Do not hold the caller's pipes open on the command's behalf.
  if (warm) {
    for (int fd : launch.stdio) close(fd);
  }
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    close(devnull);
  }

  for (;;) {
    int status = 0;
    pid_t pid = wait(&status);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return 125;  // no children left without seeing the command exit: impossible
    }
    if (pid == child) {
      // Kill every process the command left behind and reap them all before reporting, so
      // that when the caller hears "exited", nothing the command started is still running.
      kill(-1, SIGKILL);
      while (wait(nullptr) > 0 || errno == EINTR) {
      }
      Report(kReportExited, status);
      return 0;
    }
  }
}
