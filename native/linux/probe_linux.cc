// SPDX-License-Identifier: MIT
// Linux probe: measures each isolation layer by trying it in a short-lived child, never by
// reading version numbers. The child makes raw syscalls only and records results in shared memory.
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "binding/backend.h"
#include "linux/kernel_compat.h"
#include "linux/loopback.h"

namespace backend {
namespace {

// The facts the probe measures, in order. Names are the wire names seen from TypeScript.
enum FactId {
  kUserNs,
  kUidMap,
  kMountNs,
  kMountPrivate,
  kMountSetattr,
  kTmpfs,
  kNetNs,
  kLoopbackUp,
  kIpcNs,
  kUtsNs,
  kPidNs,
  kProcMount,
  kLandlockAbi,
  kLandlockEnforced,
  kNoNewPrivs,
  kSeccomp,
  kFactCount
};

const char* const kFactNames[kFactCount] = {
    "userNamespace", "uidMap",       "mountNamespace", "mountPrivate",     "mountSetattr",
    "tmpfs",         "netNamespace", "loopbackUp",     "ipcNamespace",     "utsNamespace",
    "pidNamespace",  "procMount",    "landlockAbi",    "landlockEnforced", "noNewPrivs",
    "seccompFilter"};

const char* const kFactSyscalls[kFactCount] = {"unshare(CLONE_NEWUSER)",
                                               "write(/proc/self/uid_map)",
                                               "unshare(CLONE_NEWNS)",
                                               "mount(/, MS_REC|MS_PRIVATE)",
                                               "mount_setattr(/, AT_RECURSIVE, RDONLY)",
                                               "mount(tmpfs)",
                                               "unshare(CLONE_NEWNET)",
                                               "ioctl(SIOCSIFFLAGS, lo)",
                                               "unshare(CLONE_NEWIPC)",
                                               "unshare(CLONE_NEWUTS)",
                                               "unshare(CLONE_NEWPID)",
                                               "mount(proc)",
                                               "landlock_create_ruleset(VERSION)",
                                               "landlock_restrict_self",
                                               "prctl(PR_SET_NO_NEW_PRIVS)",
                                               "seccomp(SECCOMP_SET_MODE_FILTER)"};

struct Slot {
  int attempted;
  int ok;
  int err;
  long long value;
};

// Records the outcome of one step: rc == 0 is success, otherwise errno is captured now.
void Record(Slot* slots, FactId id, int rc, long long value = 0) {
  int err = rc == 0 ? 0 : errno;
  slots[id].attempted = 1;
  slots[id].ok = rc == 0;
  slots[id].err = err;
  slots[id].value = value;
}

int WriteFile(const char* path, const char* data) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t len = static_cast<ssize_t>(strlen(data));
  ssize_t n = write(fd, data, len);
  int saved = errno;
  close(fd);
  errno = saved;
  return n == len ? 0 : -1;
}

// Pid namespace + proc mount: the grandchild is pid 1 of the new namespace and mounts a procfs.
void ProbePidNamespace(Slot* slots) {
  int rc = unshare(CLONE_NEWPID);
  Record(slots, kPidNs, rc);
  if (rc != 0) return;
  pid_t pid = fork();
  if (pid < 0) {
    Record(slots, kPidNs, -1);
    return;
  }
  if (pid == 0) {
    if (getpid() != 1) _exit(200);
    int mrc = mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    _exit(mrc == 0 ? 0 : (errno & 0xff));
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 200) {
    slots[kPidNs].ok = 0;
    slots[kPidNs].err = EINVAL;
    return;
  }
  slots[kProcMount].attempted = 1;
  slots[kProcMount].ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  slots[kProcMount].err = WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

// Landlock: ask for the ABI, then prove enforcement: a ruleset that handles WRITE_FILE with no
// rule must make opening /dev/null for writing fail with EACCES.
void ProbeLandlock(Slot* slots) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  Record(slots, kLandlockAbi, abi < 0 ? -1 : 0, abi < 0 ? 0 : abi);
  if (abi < 1) return;
  struct landlock_ruleset_attr_compat attr;
  memset(&attr, 0, sizeof attr);
  attr.handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE;
  long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr.handled_access_fs, 0);
  if (fd < 0) {
    Record(slots, kLandlockEnforced, -1);
    return;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    Record(slots, kLandlockEnforced, -1);
    return;
  }
  long rc = syscall(SYS_landlock_restrict_self, fd, 0);
  close(static_cast<int>(fd));
  if (rc != 0) {
    Record(slots, kLandlockEnforced, -1);
    return;
  }
  int probe_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (probe_fd >= 0) {
    close(probe_fd);
    slots[kLandlockEnforced].attempted = 1;
    slots[kLandlockEnforced].ok = 0;
    slots[kLandlockEnforced].err = 0;  // restrict_self succeeded but nothing was enforced
    return;
  }
  slots[kLandlockEnforced].attempted = 1;
  slots[kLandlockEnforced].ok = errno == EACCES;
  slots[kLandlockEnforced].err = errno == EACCES ? 0 : errno;
}

// Seccomp: a filter that fails getppid with EPERM (any other syscall allowed) must take effect.
void ProbeSeccomp(Slot* slots) {
  int nnp = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  Record(slots, kNoNewPrivs, nnp);
  if (nnp != 0) return;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
  if (rc != 0) {
    Record(slots, kSeccomp, -1);
    return;
  }
  errno = 0;
  long ppid = syscall(SYS_getppid);
  slots[kSeccomp].attempted = 1;
  slots[kSeccomp].ok = ppid == -1 && errno == EPERM;
  slots[kSeccomp].err = slots[kSeccomp].ok ? 0 : EINVAL;
}

// Runs in the forked child: each namespace step builds on the previous one, as the sandbox does.
void ProbeChild(Slot* slots, uid_t uid, gid_t gid) {
  int rc = unshare(CLONE_NEWUSER);
  Record(slots, kUserNs, rc);
  if (rc == 0) {
    char map[64];
    WriteFile("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1", static_cast<unsigned>(uid), static_cast<unsigned>(uid));
    int mrc = WriteFile("/proc/self/uid_map", map);
    if (mrc == 0) {
      snprintf(map, sizeof map, "%u %u 1", static_cast<unsigned>(gid), static_cast<unsigned>(gid));
      mrc = WriteFile("/proc/self/gid_map", map);
    }
    Record(slots, kUidMap, mrc);
    rc = unshare(CLONE_NEWNS);
    Record(slots, kMountNs, rc);
    if (rc == 0) {
      Record(slots, kMountPrivate, mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr));
      struct mount_attr_compat attr;
      memset(&attr, 0, sizeof attr);
      attr.attr_set = MOUNT_ATTR_RDONLY;
      Record(slots, kMountSetattr,
             static_cast<int>(syscall(SYS_mount_setattr_compat, AT_FDCWD, "/", AT_RECURSIVE, &attr,
                                      sizeof attr)));
      Record(slots, kTmpfs,
             mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1m"));
    }
    rc = unshare(CLONE_NEWNET);
    Record(slots, kNetNs, rc);
    if (rc == 0) Record(slots, kLoopbackUp, loopback::BringUp());
    Record(slots, kIpcNs, unshare(CLONE_NEWIPC));
    Record(slots, kUtsNs, unshare(CLONE_NEWUTS));
    if (slots[kMountNs].ok) ProbePidNamespace(slots);
  }
  ProbeLandlock(slots);
  ProbeSeccomp(slots);
}

}  // namespace

status::Status Probe(ProbeResult* out) {
  struct utsname uts;
  if (uname(&uts) != 0) return status::Fail("internal_error", errno, "uname");
  out->platform = "linux";
  out->arch = uts.machine;
  out->release = uts.release;
  out->uid = static_cast<long long>(geteuid());

  void* mem = mmap(nullptr, sizeof(Slot) * kFactCount, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return status::Fail("internal_error", errno, "mmap(probe results)");
  Slot* slots = static_cast<Slot*>(mem);
  memset(slots, 0, sizeof(Slot) * kFactCount);

  uid_t uid = geteuid();
  gid_t gid = getegid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    munmap(mem, sizeof(Slot) * kFactCount);
    return status::Fail("internal_error", err, "fork(probe)");
  }
  if (pid == 0) {
    ProbeChild(slots, uid, gid);
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  for (int i = 0; i < kFactCount; ++i) {
    Fact f;
    f.name = kFactNames[i];
    f.attempted = slots[i].attempted != 0;
    f.ok = slots[i].ok != 0;
    f.sys_errno = slots[i].err;
    f.value = slots[i].value;
    if (f.attempted && !f.ok) f.syscall = kFactSyscalls[i];
    out->facts.push_back(f);
  }
  munmap(mem, sizeof(Slot) * kFactCount);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    return status::Fail("internal_error", 0, "probe child", "the probe child did not exit cleanly");
  }
  return status::Ok();
}

}  // namespace backend
