// SPDX-License-Identifier: MIT
// Linux Spawn: prepares everything before clone() (Landlock ruleset, BPF program, maps, argv),
// clones the sandbox's first process into new namespaces with CLONE_VM|CLONE_VFORK (cheap whatever
// the size of Node's heap), and turns a child-side failure reported as {stage, errno} into a Status.
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "binding/backend.h"
#include "linux/child_setup.h"
#include "linux/kernel_compat.h"
#include "linux/net_holders.h"

namespace backend {
namespace {

constexpr size_t kChildStackSize = 256 * 1024;

// The stacks of the setup processes (the intermediate and the sandbox's first process), kept per
// thread: a thread runs one spawn at a time (CLONE_VFORK suspends it), and keeping them spares a
// map, an unmap (a TLB shootdown across Node's threads) and the page faults of every spawn.
class ChildStacks {
 public:
  ~ChildStacks() {
    if (base_ != nullptr) munmap(base_, 2 * kChildStackSize);
  }
  // Two stacks, one after the other; nullptr (errno set) when they cannot be mapped.
  char* Get() {
    if (base_ == nullptr) {
      void* p = mmap(nullptr, 2 * kChildStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
      if (p == MAP_FAILED) return nullptr;
      base_ = static_cast<char*>(p);
    }
    return base_;
  }

 private:
  char* base_ = nullptr;
};

thread_local ChildStacks child_stacks;

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// The kernel's highest capability number: fixed while it runs, so read once.
int ReadCapLast() {
  static const int cap_last = [] {
    int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 63;
    char buf[16] = {0};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 0 ? atoi(buf) : 63;
  }();
  return cap_last;
}

status::Status LandlockFail(int err, const std::string& call, const std::string& path) {
  status::Status s = status::Fail("landlock_unsupported", err, call, "", "landlock");
  s.path = path;
  return s;
}

// Creates the ruleset and adds every rule whose path exists on the host already.
status::Status BuildRuleset(const LinuxSpec& spec, Fd* out) {
  struct landlock_ruleset_attr_compat attr;
  memset(&attr, 0, sizeof attr);
  attr.handled_access_fs = spec.landlock_handled_fs;
  attr.scoped = spec.landlock_scoped;
  long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0) return LandlockFail(errno, "landlock_create_ruleset", "");
  out->fd = static_cast<int>(fd);
  for (const LandlockRule& rule : spec.landlock_rules) {
    if (rule.after_mounts) continue;
    int pfd = open(rule.path.c_str(), O_PATH | O_CLOEXEC);
    if (pfd < 0) {
      if (errno == ENOENT) continue;  // an absent path gets no rule, hence no access
      return LandlockFail(errno, "open(" + rule.path + ")", rule.path);
    }
    struct landlock_path_beneath_attr_compat beneath;
    beneath.allowed_access = rule.access;
    beneath.parent_fd = pfd;
    long rc = syscall(SYS_landlock_add_rule, out->fd, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0);
    int err = errno;
    close(pfd);
    if (rc != 0) return LandlockFail(err, "landlock_add_rule(" + rule.path + ")", rule.path);
  }
  return status::Ok();
}

int32_t MountKindCode(const std::string& kind) {
  using namespace child_setup;
  if (kind == "detach_clone") return kMountDetachClone;
  if (kind == "readonly_all") return kMountReadonlyAll;
  if (kind == "tmpfs") return kMountTmpfs;
  if (kind == "mkdirs") return kMountMkdirs;
  if (kind == "attach") return kMountAttach;
  if (kind == "readonly_bind") return kMountReadonlyBind;
  if (kind == "mask_file") return kMountMaskFile;
  if (kind == "mask_dir") return kMountMaskDir;
  if (kind == "proc") return kMountProc;
  if (kind == "devpts") return kMountDevpts;
  if (kind == "pin") return kMountPin;
  return 0;
}

const char* StageName(int32_t stage) {
  using namespace child_setup;
  switch (stage) {
    case kStageSignals: return "prctl(PR_SET_PDEATHSIG)";
    case kStageUidMap: return "write(/proc/self/uid_map)";
    case kStageMountPrivate: return "mount(/, MS_REC|MS_PRIVATE)";
    case kStageMount: return "mount";
    case kStageLoopback: return "ioctl(SIOCSIFFLAGS, lo)";
    case kStageLandlockRule: return "landlock_add_rule";
    case kStageRlimit: return "setrlimit";
    case kStageChdir: return "chdir";
    case kStageStdio: return "dup2(stdio)";
    case kStageCloseFds: return "close_range";
    case kStageNoNewPrivs: return "prctl(PR_SET_NO_NEW_PRIVS)";
    case kStageCapabilities: return "capset";
    case kStageLandlockRestrict: return "landlock_restrict_self";
    case kStageSeccomp: return "seccomp(SECCOMP_SET_MODE_FILTER)";
    case kStageExecInit: return "execveat(zero-sandbox-init)";
    case kStageCgroup: return "join the pids cgroup / unshare(CLONE_NEWCGROUP)";
    case kStageNetHolder: return "unshare(CLONE_NEWUSER|CLONE_NEWNET) for the network holder";
    case kStagePidMax: return "write(/proc/sys/kernel/pid_max) in the sandbox's PID namespace";
    default: return "sandbox setup";
  }
}

// Maps a child-side failure onto the error code and layer a caller can act on.
status::Status ChildFailure(int32_t raw_stage, int err, const SpawnSpec& spec) {
  using namespace child_setup;
  int32_t stage = raw_stage & 0xff;
  int index = (raw_stage >> 8) - 1;
  std::string call = StageName(stage);
  std::string path;
  const char* code = "spawn_failed";
  const char* layer = "";
  switch (stage) {
    case kStageUidMap: code = "userns_denied"; layer = "userns"; break;
    case kStageMountPrivate: code = "mount_failed"; layer = "mount"; break;
    case kStageMount:
      code = "mount_failed";
      layer = "mount";
      if (index >= 0 && index < static_cast<int>(spec.linux_spec.mounts.size())) {
        const MountOp& op = spec.linux_spec.mounts[index];
        call = op.kind + "(" + op.path + ")";
        path = op.path;
      }
      break;
    case kStageLoopback:
    case kStageNetHolder: code = "sandbox_unavailable"; layer = "netns"; break;
    case kStageLandlockRule:
    case kStageLandlockRestrict: code = "landlock_unsupported"; layer = "landlock"; break;
    case kStageSeccomp: code = "seccomp_install_failed"; layer = "seccomp"; break;
    case kStageChdir: code = "spawn_failed"; layer = "cwd"; path = spec.cwd; call = "chdir(" + spec.cwd + ")"; break;
    case kStageRlimit: code = "spawn_failed"; layer = "limits"; break;
    case kStageCgroup:
    case kStagePidMax: code = "sandbox_unavailable"; layer = "limits"; break;
    case kStageNoNewPrivs:
    case kStageCapabilities: code = "sandbox_unavailable"; layer = "capabilities"; break;
    default: break;
  }
  status::Status s = status::Fail(code, err, call, "sandbox setup failed before the command started", layer);
  s.path = path;
  return s;
}

std::vector<char*> CStrings(const std::vector<std::string>& items) {
  std::vector<char*> out;
  out.reserve(items.size() + 1);
  for (const std::string& item : items) out.push_back(const_cast<char*>(item.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

status::Status Spawn(const SpawnSpec& spec, SpawnResult* out) {
  const LinuxSpec& ls = spec.linux_spec;
  if (spec.argv.empty()) return status::Fail("invalid_argument", EINVAL, "spawn", "argv is empty");
  if (ls.seccomp_program.empty() || ls.seccomp_program.size() > 4096) {
    return status::Fail("seccomp_install_failed", EINVAL, "spawn", "no seccomp program", "seccomp");
  }
  if (ls.landlock_abi < 1) {
    return status::Fail("landlock_unsupported", ENOSYS, "spawn", "Landlock is required", "landlock");
  }

  Fd init_fd(open(ls.init_path.c_str(), O_PATH | O_CLOEXEC));
  if (init_fd.fd < 0) {
    status::Status s = status::Fail("native_unavailable", errno, "open(" + ls.init_path + ")",
                                    "the zero-sandbox-init helper is missing; rebuild the addon");
    s.path = ls.init_path;
    return s;
  }
  Fd ruleset;
  status::Status rs = BuildRuleset(ls, &ruleset);
  if (!rs.ok()) return rs;

  // Argument vectors and maps, built before clone so the child only reads memory.
  std::vector<std::string> init_args;
  init_args.reserve(spec.argv.size() + 1);
  init_args.push_back("zero-sandbox-init");
  // The process cap is the PID namespace's pid_max or RLIMIT_NPROC, neither of which counts
  // refusals: the init checks with forks of its own. (Its RLIMIT_NPROC is the command's: set here
  // for a cold start, and part of the prewarm key for a prewarmed one.) A pids cgroup counts.
  bool nproc = false;
  for (const ResourceLimit& limit : ls.rlimits) nproc = nproc || limit.resource == RLIMIT_NPROC;
  if (ls.pid_max > 0 || nproc) init_args.push_back("--probe-forks");
  if (spec.control_fd >= 0) {
    init_args.push_back("--warm");
  } else {
    init_args.insert(init_args.end(), spec.argv.begin(), spec.argv.end());
  }
  std::vector<char*> init_argv = CStrings(init_args);
  std::vector<char*> envp = CStrings(spec.envp);
  char uid_map[64];
  char gid_map[64];
  snprintf(uid_map, sizeof uid_map, "%u %u 1", static_cast<unsigned>(geteuid()), static_cast<unsigned>(geteuid()));
  snprintf(gid_map, sizeof gid_map, "%u %u 1", static_cast<unsigned>(getegid()), static_cast<unsigned>(getegid()));

  std::vector<child_setup::MountStep> mounts;
  for (const MountOp& op : ls.mounts) {
    int32_t kind = MountKindCode(op.kind);
    if (kind == 0) return status::Fail("invalid_argument", EINVAL, "spawn", "unknown mount kind " + op.kind);
    child_setup::MountStep step;
    step.kind = kind;
    step.slot = op.source.empty() ? -1 : atoi(op.source.c_str());
    step.path = op.path.c_str();
    step.data = op.data.empty() ? nullptr : op.data.c_str();
    mounts.push_back(step);
  }
  int mask_count = 0;
  for (const MountOp& op : ls.mounts) mask_count += op.kind == "mask_file" ? 1 : 0;
  std::vector<int> mask_wds(static_cast<size_t>(mask_count), -1);
  std::vector<child_setup::LandlockStep> after;
  for (const LandlockRule& rule : ls.landlock_rules) {
    if (rule.after_mounts) after.push_back({rule.path.c_str(), rule.access});
  }
  std::vector<child_setup::Rlimit> limits;
  for (const ResourceLimit& limit : ls.rlimits) {
    child_setup::Rlimit r;
    r.resource = limit.resource;
    r.value.rlim_cur = limit.soft;
    r.value.rlim_max = limit.hard;
    limits.push_back(r);
  }
  std::vector<struct sock_filter> filter;
  filter.reserve(ls.seccomp_program.size());
  for (uint64_t word : ls.seccomp_program) {
    struct sock_filter ins;
    ins.code = static_cast<uint16_t>(word >> 48);
    ins.jt = static_cast<uint8_t>(word >> 40);
    ins.jf = static_cast<uint8_t>(word >> 32);
    ins.k = static_cast<uint32_t>(word);
    filter.push_back(ins);
  }
  struct sock_fprog prog;
  prog.len = static_cast<unsigned short>(filter.size());
  prog.filter = filter.data();

  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return status::Fail("spawn_failed", errno, "pipe2(error pipe)");
  Fd err_read(err_pipe[0]);
  Fd err_write(err_pipe[1]);
  int report_pipe[2];
  if (pipe2(report_pipe, O_CLOEXEC) != 0) return status::Fail("spawn_failed", errno, "pipe2(report pipe)");
  Fd report_read(report_pipe[0]);
  Fd report_write(report_pipe[1]);

  child_setup::ChildPlan plan;
  memset(&plan, 0, sizeof plan);
  plan.error_fd = err_write.fd;
  for (int i = 0; i < 3; ++i) plan.stdio_fds[i] = spec.stdio[i];
  plan.report_fd = report_write.fd;
  plan.control_fd = spec.control_fd;
  plan.script_fd = spec.script_fd;
  plan.cgroup_fd = ls.cgroup_procs_fd;
  char pid_max[16];
  snprintf(pid_max, sizeof pid_max, "%d", ls.pid_max);
  plan.pid_max = ls.pid_max > 0 ? pid_max : nullptr;
  plan.init_fd = init_fd.fd;
  plan.init_argv = init_argv.data();
  plan.envp = envp.data();
  plan.uid_map = uid_map;
  plan.gid_map = gid_map;
  plan.mounts = mounts.data();
  plan.mount_count = static_cast<int>(mounts.size());
  for (int i = 0; i < 32; ++i) plan.mount_slots[i] = -1;
  for (int i = 0; i < child_setup::kWatchSlots; ++i) plan.watch_fds[i] = -1;
  plan.new_network = ls.new_network;
  plan.landlock_fd = ruleset.fd;
  plan.landlock_after = after.data();
  plan.landlock_after_count = static_cast<int>(after.size());
  plan.rlimits = limits.data();
  plan.rlimit_count = static_cast<int>(limits.size());
  plan.cwd = spec.cwd.c_str();
  plan.cap_last = ReadCapLast();
  plan.seccomp = &prog;
  plan.mask_watch_fd = ls.mask_watch_fd;
  plan.mask_wds = mask_wds.data();
  plan.mask_count = mask_count;

  // Network deny goes through an intermediate and a reused holder (net_holders.h): two stacks.
  char* stack = child_stacks.Get();
  if (stack == nullptr) return status::Fail("spawn_failed", errno, "mmap(child stack)");
  char* first_stack_top = stack + kChildStackSize;

  // The cgroup namespace is unshared by the child once it has joined its pids cgroup.
  int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
              CLONE_NEWIPC | CLONE_NEWUTS;
  net_holders::Holder holder;
  child_setup::NetEntry net = {-1, -1, -1, -1, -ECHILD, nullptr, 0};
  if (ls.new_network) {
    holder = net_holders::Acquire();
    net.userns_fd = holder.userns_fd;
    net.netns_fd = holder.netns_fd;
    net.stack_top = first_stack_top + kChildStackSize;
    net.clone_flags = flags | CLONE_PARENT;
    plan.net = &net;
    plan.new_network = false;  // loopback is up in the holder
  }

  // Block every signal so none of Node's handlers can run on the shared memory in the child.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  // pid: the sandbox's first process; 0 when the intermediate failed before cloning it (its
  // record is in the error pipe); -1 with clone_errno when a clone failed.
  pid_t pid = clone(plan.net == nullptr ? child_setup::Run : child_setup::EnterNetwork, first_stack_top,
                    plan.net == nullptr ? flags : CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &plan);
  int clone_errno = pid < 0 ? errno : 0;
  if (plan.net != nullptr && pid > 0) {
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (net.sandbox_pid > 0) {
      pid = static_cast<pid_t>(net.sandbox_pid);
    } else if (net.sandbox_pid == -ECHILD) {
      pid = 0;
    } else {
      pid = -1;
      clone_errno = static_cast<int>(-net.sandbox_pid);
    }
  }
  if (plan.net != nullptr) {
    // Namespaces the intermediate created replace what could not be joined.
    if (net.created_userns_fd >= 0) {
      if (holder.userns_fd >= 0) close(holder.userns_fd);
      holder.userns_fd = net.created_userns_fd;
    }
    if (net.created_netns_fd >= 0) {
      if (holder.netns_fd >= 0) close(holder.netns_fd);
      holder.netns_fd = net.created_netns_fd;
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) {
    net_holders::Discard(holder);
    const char* code = clone_errno == EPERM || clone_errno == ENOSPC ? "userns_denied" : "spawn_failed";
    return status::Fail(code, clone_errno, "clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|...)",
                        "could not create the sandbox namespaces", "userns");
  }

  // The child has exec'd (the error pipe closed on exec) or failed (a record, then exit).
  close(err_write.release());
  int32_t record[2] = {0, 0};
  ssize_t n;
  do {
    n = read(err_read.fd, record, sizeof record);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof record) || pid == 0) {
    net_holders::Discard(holder);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof record)) return status::Fail("spawn_failed", EIO, "spawn", "the sandbox setup ended without a report");
    return ChildFailure(record[0], record[1], spec);
  }

  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int err = errno;
    net_holders::Discard(holder);
    kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return status::Fail("spawn_failed", err, "pidfd_open");
  }
  out->pid = pid;
  out->pidfd = pidfd;
  out->report_fd = report_read.release();
  out->net_userns_fd = holder.userns_fd;
  out->net_netns_fd = holder.netns_fd;
  out->mask_wds = std::move(mask_wds);  // written by the child through the shared memory
  return status::Ok();
}

}  // namespace backend
