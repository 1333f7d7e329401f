// SPDX-License-Identifier: MIT
// zero-sandbox-init: the first process of every Linux sandbox (pid 1 of its pid namespace), exec'd
// by the addon once the namespaces, mounts, Landlock and seccomp are in place. It starts the
// command in a new session, forwards termination signals to it, reaps orphans, and reports the
// command's fate on fd 3 once every other process in the sandbox is dead and reaped.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr int kReportFd = 3;
// Report records: {type, value}; mirrored by lib/backend/linux/report.ts.
constexpr int32_t kReportExecFailed = 1;  // value: errno of execvp
constexpr int32_t kReportExited = 2;      // value: the command's wait status

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    Report(kReportExecFailed, EINVAL);
    return 125;
  }
  // A new session: the command has no controlling terminal, so it cannot reach the caller's.
  setsid();

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
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    execvp(argv[1], argv + 1);
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
