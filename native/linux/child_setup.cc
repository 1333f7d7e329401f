// SPDX-License-Identifier: MIT
// The sandbox's first process, between clone() and execveat() of the init helper. It shares the
// parent's memory (CLONE_VM|CLONE_VFORK) and must stay async-signal-safe: raw system calls on
// precomputed data only, no allocation, no locks, no exceptions, no logging.
#include "linux/child_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/kernel_compat.h"
#include "linux/loopback.h"
#include "linux/masks.h"
#include "linux/mount_calls.h"
#include "linux/mount_steps.h"

namespace child_setup {
namespace {

[[noreturn]] void Fail(const ChildPlan* plan, int32_t stage, int err) {
  int32_t record[2] = {stage, err};
  ssize_t ignored = write(plan->error_fd, record, sizeof record);
  (void)ignored;
  _exit(125);
}

// Returns 0 or -1 with errno set, like the system calls it wraps.
int WriteWhole(const char* path, const char* data, int proc_fd = -1) {
  // Through the host's /proc (a path from "/proc/"): a template's copy has its /proc read-only.
  int fd = proc_fd >= 0 && strncmp(path, "/proc/", 6) == 0
               ? openat(proc_fd, path + 6, O_WRONLY | O_CLOEXEC)
               : open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = strlen(data);
  ssize_t n = write(fd, data, len);
  int saved = errno;
  close(fd);
  if (n != static_cast<ssize_t>(len)) {
    errno = n < 0 ? saved : EIO;
    return -1;
  }
  return 0;
}

// Node's handlers must never run here: reset every disposition (signals stay blocked).
void ResetSignals() {
  for (int sig = 1; sig < 65; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, nullptr);  // glibc-internal signals refuse; that is fine
  }
}

// Applies the plan's mount steps (mount_steps.h); a failure does not return.
void ApplyMountsOrFail(ChildPlan* plan, MaskState* masks) {
  int32_t stage = kStageMount;
  if (ApplyMounts(plan, masks, &stage) != 0) Fail(plan, stage, errno);
}

void FinishMount(ChildPlan* plan, MaskState* masks) {
  if (FinishMasks(masks) != 0) Fail(plan, kStageMount, errno);
}

// Whether no event is queued on the watch queue and none was taken since the template was found
// unchanged: an event queued before the copy was made is then still there to see. The count is
// bumped before any read of the queue, so an event read away meanwhile changes it.
bool QueueUntouched(const ChildPlan* plan) {
  int queued = 0;
  if (ioctl(plan->queue_fd, FIONREAD, &queued) != 0 || queued != 0) return false;
  return plan->queue_takes != nullptr && plan->queue_takes->load() == plan->queue_seen;
}

int AddLandlockRule(int ruleset, const LandlockStep& step) {
  int fd = open(step.path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : -1;  // absent path: no rule, so no access
  struct landlock_path_beneath_attr_compat attr;
  attr.allowed_access = step.access;
  attr.parent_fd = fd;
  long rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc == 0 ? 0 : -1;
}

// Moves the standard streams, the report pipe and (prewarm) the control socket or (a long script)
// the script file into 0..4 without clobbering each other. Returns the first descriptor number
// past them, or -1.
int InstallStdio(const ChildPlan* plan) {
  static_assert(init_wire::kReportFd == 3 && init_wire::kControlFd == 4,
                "the init's descriptors follow stdio");
  int slot4 = plan->control_fd >= 0 ? plan->control_fd : plan->script_fd;
  int sources[5] = {plan->stdio_fds[0], plan->stdio_fds[1], plan->stdio_fds[2], plan->report_fd,
                    slot4};
  int count = slot4 >= 0 ? 5 : 4;
  int high[5];
  int devnull = -1;  // one open serves every stream that has no descriptor of its own
  for (int i = 0; i < count; ++i) {
    int src = sources[i];
    if (src < 0) {
      if (devnull < 0) devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (devnull < 0) return -1;
      src = devnull;
    }
    high[i] = fcntl(src, F_DUPFD_CLOEXEC, 10);
    if (high[i] < 0) return -1;
  }
  for (int i = 0; i < count; ++i) {
    if (dup2(high[i], i) < 0) return -1;
    close(high[i]);
  }
  return count;
}

// The watched tmpfs roots go to kWatchFd + slot for the init, inherited across its exec (every
// other descriptor from `first` on is already close-on-exec; the init closes these before the
// command runs).
int InstallWatchFds(const ChildPlan* plan) {
  for (int i = 0; i < kWatchSlots; ++i) {
    int fd = plan->watch_fds[i];
    if (fd < 0) continue;
    if (dup3(fd, kWatchFd + i, 0) < 0) return -1;
    close(fd);
  }
  return 0;
}

int MarkOtherFdsCloexec(int first) {
  if (syscall(SYS_close_range_compat, static_cast<unsigned>(first), ~0U,
              CLOSE_RANGE_CLOEXEC_COMPAT) == 0) {
    return 0;
  }
  for (int fd = first; fd < 65536; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  return 0;
}

int DropCapabilities(int cap_last) {
  for (int cap = 0; cap <= cap_last; ++cap) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return -1;
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
  struct __user_cap_header_struct header;
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  return static_cast<int>(syscall(SYS_capset, &header, data));
}

int WriteMaps(const ChildPlan* plan) {
  if (WriteWhole("/proc/self/setgroups", "deny", plan->proc_fd) != 0) return -1;
  if (WriteWhole("/proc/self/uid_map", plan->uid_map, plan->proc_fd) != 0) return -1;
  return WriteWhole("/proc/self/gid_map", plan->gid_map, plan->proc_fd);
}

}  // namespace

int EnterNetwork(void* arg) {
  ChildPlan* plan = static_cast<ChildPlan*>(arg);
  NetEntry* net = plan->net;
  // Without a template to join, a holder of its own user namespace serves as well.
  bool own = net->own_userns_fd >= 0 && setns(net->own_userns_fd, CLONE_NEWUSER) == 0;
  if (!own && net->template_mntns_fd >= 0) Fail(plan, kStageTemplate, errno);
  if (net->network) {
    // In our own user namespace a holder of it is joined (one of another is refused: created).
    bool joined_user = own || (net->userns_fd >= 0 && setns(net->userns_fd, CLONE_NEWUSER) == 0);
    if (!joined_user) {
      if (unshare(CLONE_NEWUSER) != 0 || WriteMaps(plan) != 0) Fail(plan, kStageNetHolder, errno);
      net->created_userns_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    }
    bool joined_net = joined_user && net->netns_fd >= 0 && setns(net->netns_fd, CLONE_NEWNET) == 0;
    if (!joined_net) {
      if (unshare(CLONE_NEWNET) != 0) Fail(plan, kStageNetHolder, errno);
      if (loopback::BringUp() != 0) Fail(plan, kStageLoopback, errno);
      net->created_netns_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
      if (own) net->created_userns_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    }
  }
  // The write roots inside the private /tmp are not in the template's namespace: each is cloned
  // from the template's locked copy (the only namespace the kernel lets clone its trees), so the
  // sandbox copies their mounts once (attached in its new /tmp), every one of them locked.
  if (net->tmp_count > 0 && setns(net->tmp_mntns_fd, CLONE_NEWNS) != 0)
    Fail(plan, kStageTemplate, errno);
  for (int i = 0; i < net->tmp_count; ++i) {
    int fd = OpenTreeCloneOf(net->tmp_sources[i]);
    if (fd < 0) Fail(plan, kStageTemplate, errno);
    net->tmp_clones[i] = fd;
    plan->mount_slots[net->tmp_slots[i]] = fd;
  }
  // Last: the sandbox's mount namespace is then a copy of the template's.
  if (net->template_mntns_fd >= 0 && setns(net->template_mntns_fd, CLONE_NEWNS) != 0)
    Fail(plan, kStageTemplate, errno);
  long pid = clone(Run, net->stack_top, net->clone_flags, plan);
  net->sandbox_pid = pid < 0 ? -errno : pid;
  _exit(0);
}

// A template's locked copy (CLONE_VM|CLONE_VFORK|CLONE_FILES from its build): a mount namespace
// of a user namespace of its own, where every mount is locked, holding the detached tree of each
// /tmp write root. _exits 0, or 125.
int CopyTmpRoots(void* arg) {
  ChildPlan* plan = static_cast<ChildPlan*>(arg);
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 || WriteMaps(plan) != 0) _exit(125);
  for (int i = 0; i < plan->template_tmp_count; ++i) {
    plan->template_tmp_fds[i] = OpenTreeClone(AT_FDCWD, plan->template_tmp_paths[i]);
    if (plan->template_tmp_fds[i] < 0) _exit(125);
  }
  plan->template_tmp_mntns_fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  _exit(plan->template_tmp_mntns_fd < 0 ? 125 : 0);
}

// The template's /tmp write roots move to its locked copy: each made nosuid with what is mounted
// in it (as a run's clone of one was), copied, then unmounted here (every mount this build made at
// its path; a host's mount there is locked and stays), so that no copy of the template holds them.
void TakeOutTmpRoots(ChildPlan* plan) {
  if (plan->template_tmp_count == 0) return;
  for (int i = 0; i < plan->template_tmp_count; ++i) {
    if (SetAttr(AT_FDCWD, plan->template_tmp_paths[i], AT_RECURSIVE | AT_SYMLINK_NOFOLLOW,
                MOUNT_ATTR_NOSUID, 0) != 0) {
      Fail(plan, kStageTemplate, errno);
    }
  }
  pid_t pid = clone(CopyTmpRoots, plan->net->stack_top,
                    CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, plan);
  int st = 0;
  if (pid < 0) Fail(plan, kStageTemplate, errno);
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) Fail(plan, kStageTemplate, errno);
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) Fail(plan, kStageTemplate, EPERM);
  for (int i = 0; i < plan->template_tmp_count; ++i) {
    for (int n = 0; n < 64; ++n)
      if (umount2(plan->template_tmp_paths[i], MNT_DETACH | UMOUNT_NOFOLLOW) != 0) break;
  }
}

int BuildTemplate(void* arg) {
  ChildPlan* plan = static_cast<ChildPlan*>(arg);
  ResetSignals();
  if (setns(plan->net->own_userns_fd, CLONE_NEWUSER) != 0 || unshare(CLONE_NEWNS) != 0)
    Fail(plan, kStageTemplate, errno);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    Fail(plan, kStageMountPrivate, errno);
  }
  MaskState masks;
  ApplyMountsOrFail(plan, &masks);
  // Each run mounts a /proc of its own over the host's, which the kernel allows in a namespace
  // whose /proc is not locked read-only any more than the new one (the host's is writable).
  if (SetAttr(AT_FDCWD, "/proc", AT_SYMLINK_NOFOLLOW, 0, MOUNT_ATTR_RDONLY) != 0)
    Fail(plan, kStageTemplate, errno);
  // The one file of the file masks and their staging directory, kept for each run's Landlock
  // rule on the file's inode and its watch of their opens (by name).
  if (masks.staging >= 0) {
    plan->template_file_fd = openat(masks.staging, masks.first, O_PATH | O_CLOEXEC);
    plan->template_staging_fd = fcntl(masks.staging, F_DUPFD_CLOEXEC, 3);
    if (plan->template_file_fd < 0 || plan->template_staging_fd < 0) Fail(plan, kStageMount, errno);
  }
  FinishMount(plan, &masks);
  TakeOutTmpRoots(plan);
  plan->template_mntns_fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  if (plan->template_mntns_fd < 0) Fail(plan, kStageTemplate, errno);
  _exit(0);
}

int MakeUserNamespace(void* arg) {
  ChildPlan* plan = static_cast<ChildPlan*>(arg);
  if (unshare(CLONE_NEWUSER) != 0 || WriteMaps(plan) != 0) _exit(125);
  plan->created_userns_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
  _exit(plan->created_userns_fd < 0 ? 125 : 0);
}

int Run(void* arg) {
  ChildPlan* plan = static_cast<ChildPlan*>(arg);

  ResetSignals();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) Fail(plan, kStageSignals, errno);

  // Join the run's pids cgroup before anything can fork, then hide the host's cgroup paths.
  if (plan->cgroup_fd >= 0 && write(plan->cgroup_fd, "0", 1) != 1) Fail(plan, kStageCgroup, errno);
  if (unshare(CLONE_NEWCGROUP) != 0) Fail(plan, kStageCgroup, errno);

  if (WriteMaps(plan) != 0) Fail(plan, kStageUidMap, errno);
  // We are pid 1 of a new PID namespace whose user namespace we hold every capability in: the
  // sysctl addresses this namespace's own pid_max (whichever /proc it is opened through), so no
  // more than pid_max - 1 processes besides us can exist in it, whoever's uid they run as.
  if (plan->pid_max != nullptr &&
      WriteWhole("/proc/sys/kernel/pid_max", plan->pid_max, plan->proc_fd) != 0) {
    Fail(plan, kStagePidMax, errno);
  }

  // Nothing we mount may propagate back to the host.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    Fail(plan, kStageMountPrivate, errno);
  }
  // A copy of a template: nothing may have changed at its paths since it was found unchanged.
  if (plan->queue_fd >= 0 && !QueueUntouched(plan)) Fail(plan, kStageTemplateStale, 0);
  MaskState masks;
  ApplyMountsOrFail(plan, &masks);
  FinishMount(plan, &masks);

  if (plan->new_network && loopback::BringUp() != 0) Fail(plan, kStageLoopback, errno);

  for (int i = 0; i < plan->landlock_after_count; ++i) {
    if (AddLandlockRule(plan->landlock_fd, plan->landlock_after[i]) != 0) {
      Fail(plan, kStageLandlockRule | ((i + 1) << 8), errno);
    }
  }
  if (chdir(plan->cwd) != 0) Fail(plan, kStageChdir, errno);
  int first_free = InstallStdio(plan);
  if (first_free < 0) Fail(plan, kStageStdio, errno);
  if (MarkOtherFdsCloexec(first_free) != 0) Fail(plan, kStageCloseFds, errno);
  if (InstallWatchFds(plan) != 0) Fail(plan, kStageStdio, errno);
  // Limits last among the descriptor work: RLIMIT_NOFILE must not stop us moving the streams.
  for (int i = 0; i < plan->rlimit_count; ++i) {
    if (setrlimit(static_cast<__rlimit_resource>(plan->rlimits[i].resource),
                  &plan->rlimits[i].value) != 0) {
      Fail(plan, kStageRlimit, errno);
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Fail(plan, kStageNoNewPrivs, errno);
  if (DropCapabilities(plan->cap_last) != 0) Fail(plan, kStageCapabilities, errno);
  if (syscall(SYS_landlock_restrict_self, plan->landlock_fd, 0) != 0) {
    Fail(plan, kStageLandlockRestrict, errno);
  }
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, plan->seccomp) != 0) {
    Fail(plan, kStageSeccomp, errno);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  syscall(SYS_execveat, plan->init_fd, "", plan->init_argv, plan->envp, AT_EMPTY_PATH);
  Fail(plan, kStageExecInit, errno);
}

}  // namespace child_setup
