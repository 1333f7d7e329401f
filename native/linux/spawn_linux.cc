// SPDX-License-Identifier: MIT
// Linux Spawn: builds the plan (spawn_plan.cc), clones the sandbox's first process into new
// namespaces with CLONE_VM|CLONE_VFORK (cheap whatever the size of Node's heap), and turns a
// child-side failure reported as {stage, errno} on the setup's error pipe into a Status.
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>

#include "binding/backend.h"
#include "linux/child_setup.h"
#include "linux/mount_templates.h"
#include "linux/net_holders.h"
#include "linux/spawn_plan.h"

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
      void* p = mmap(nullptr, 2 * kChildStackSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
      if (p == MAP_FAILED) return nullptr;
      base_ = static_cast<char*>(p);
    }
    return base_;
  }

 private:
  char* base_ = nullptr;
};

thread_local ChildStacks child_stacks;

const char* StageName(int32_t stage) {
  using namespace child_setup;
  switch (stage) {
    case kStageSignals:
      return "prctl(PR_SET_PDEATHSIG)";
    case kStageUidMap:
      return "write(/proc/self/uid_map)";
    case kStageMountPrivate:
      return "mount(/, MS_REC|MS_PRIVATE)";
    case kStageMount:
      return "mount";
    case kStageLoopback:
      return "ioctl(SIOCSIFFLAGS, lo)";
    case kStageLandlockRule:
      return "landlock_add_rule";
    case kStageRlimit:
      return "setrlimit";
    case kStageChdir:
      return "chdir";
    case kStageStdio:
      return "dup2(stdio)";
    case kStageCloseFds:
      return "close_range";
    case kStageNoNewPrivs:
      return "prctl(PR_SET_NO_NEW_PRIVS)";
    case kStageCapabilities:
      return "capset";
    case kStageLandlockRestrict:
      return "landlock_restrict_self";
    case kStageSeccomp:
      return "seccomp(SECCOMP_SET_MODE_FILTER)";
    case kStageExecInit:
      return "execveat(zero-sandbox-init)";
    case kStageCgroup:
      return "join the pids cgroup / unshare(CLONE_NEWCGROUP)";
    case kStageNetHolder:
      return "unshare(CLONE_NEWUSER|CLONE_NEWNET) for the network holder";
    case kStagePidMax:
      return "write(/proc/sys/kernel/pid_max) in the sandbox's PID namespace";
    case kStageTemplate:
      return "setns(mount template)";
    case kStageTemplateStale:
      return "copy of a mount template";
    default:
      return "sandbox setup";
  }
}

// Maps a child-side failure onto the error code and layer a caller can act on.
status::Status ChildFailure(int32_t raw_stage, int err, const SpawnSpec& spec,
                            const spawn_plan::Plan& plan) {
  using namespace child_setup;
  int32_t stage = raw_stage & 0xff;
  int index = (raw_stage >> 8) - 1;
  // From a template: the step's index in the run's own steps.
  if (index >= 0 && !plan.step_origin.empty()) {
    index = index < static_cast<int>(plan.step_origin.size()) ? plan.step_origin[index] : -1;
  }
  std::string call = StageName(stage);
  std::string path;
  const char* code = "spawn_failed";
  const char* layer = "";
  switch (stage) {
    case kStageUidMap:
      code = "userns_denied";
      layer = "userns";
      break;
    case kStageMountPrivate:
      code = "mount_failed";
      layer = "mount";
      break;
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
    case kStageNetHolder:
      code = "sandbox_unavailable";
      layer = "netns";
      break;
    case kStageLandlockRule:
    case kStageLandlockRestrict:
      code = "landlock_unsupported";
      layer = "landlock";
      break;
    case kStageSeccomp:
      code = "seccomp_install_failed";
      layer = "seccomp";
      break;
    case kStageChdir:
      code = "spawn_failed";
      layer = "cwd";
      path = spec.cwd;
      call = "chdir(" + spec.cwd + ")";
      break;
    case kStageRlimit:
      code = "spawn_failed";
      layer = "limits";
      break;
    case kStageCgroup:
    case kStagePidMax:
      code = "sandbox_unavailable";
      layer = "limits";
      break;
    case kStageNoNewPrivs:
    case kStageCapabilities:
      code = "sandbox_unavailable";
      layer = "capabilities";
      break;
    default:
      break;
  }
  status::Status s =
      status::Fail(code, err, call, "sandbox setup failed before the command started", layer);
  s.path = path;
  return s;
}

// Waits for a child of ours, whatever signals arrive meanwhile.
void Reap(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
}

// What a clone of the sandbox gave: `pid` the sandbox's first process; 0 when the intermediate
// failed before cloning it (its record is in the error pipe); -1 with `clone_errno` when a clone
// failed. `holder` is the network namespace holder it ran in (network deny).
struct Cloned {
  pid_t pid = -1;
  int clone_errno = 0;
  net_holders::Holder holder;
};

// Clones the sandbox's first process from the plan on `stack` (two of kChildStackSize); with
// network deny, through an intermediate that joins (or creates) a reusable holder (net_holders.h),
// which takes the second stack.
Cloned CloneSandbox(bool new_network, char* stack, spawn_plan::Plan* plan,
                    const mount_templates::Lease* lease) {
  Cloned out;
  char* first_stack_top = stack + kChildStackSize;
  child_setup::ChildPlan& child = plan->child;

  // The cgroup namespace is unshared by the child once it has joined its pids cgroup.
  int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
              CLONE_NEWIPC | CLONE_NEWUTS;
  child_setup::NetEntry net = child_setup::EmptyNetEntry();
  std::vector<int> tmp_clones;
  if (new_network || lease != nullptr) {
    if (new_network) out.holder = net_holders::Acquire();
    net.network = new_network;
    net.userns_fd = out.holder.userns_fd;
    net.netns_fd = out.holder.netns_fd;
    // Holders are made in the process's own user namespace, where a copy of a template can join
    // them (a holder of another user namespace is one it cannot).
    net.own_userns_fd = lease != nullptr ? lease->userns_fd : mount_templates::UserNamespace();
    if (lease != nullptr) {
      net.template_mntns_fd = lease->mntns_fd;
      tmp_clones.assign(lease->tmp_fds.size(), -1);
      net.tmp_mntns_fd = lease->tmp_mntns_fd;
      net.tmp_count = static_cast<int>(lease->tmp_fds.size());
      net.tmp_slots = lease->tmp_slots.data();
      net.tmp_sources = lease->tmp_fds.data();
      net.tmp_clones = tmp_clones.data();
    }
    net.stack_top = first_stack_top + kChildStackSize;
    net.clone_flags = flags | CLONE_PARENT;
    child.net = &net;
    child.new_network = false;  // loopback is up in the holder
  }

  // Block every signal so none of Node's handlers can run on the shared memory in the child.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t pid =
      clone(child.net == nullptr ? child_setup::Run : child_setup::EnterNetwork, first_stack_top,
            child.net == nullptr ? flags : CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &child);
  int clone_errno = pid < 0 ? errno : 0;
  if (child.net != nullptr && pid > 0) {
    Reap(pid);
    if (net.sandbox_pid > 0) {
      pid = static_cast<pid_t>(net.sandbox_pid);
    } else if (net.sandbox_pid == -ECHILD) {
      pid = 0;
    } else {
      pid = -1;
      clone_errno = static_cast<int>(-net.sandbox_pid);
    }
  }
  if (child.net != nullptr) {
    // Namespaces the intermediate created replace what could not be joined.
    if (net.created_userns_fd >= 0) {
      if (out.holder.userns_fd >= 0) close(out.holder.userns_fd);
      out.holder.userns_fd = net.created_userns_fd;
    }
    if (net.created_netns_fd >= 0) {
      if (out.holder.netns_fd >= 0) close(out.holder.netns_fd);
      out.holder.netns_fd = net.created_netns_fd;
    }
    // The intermediate's clones of the /tmp write roots, in our descriptor table: the sandbox has
    // its own descriptors of them (attached by now, or it failed).
    for (int fd : tmp_clones)
      if (fd >= 0) close(fd);
    child.net = nullptr;  // `net` ends with this call
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  out.pid = pid;
  out.clone_errno = clone_errno;
  return out;
}

// The child has exec'd the init (the error pipe closed on exec) or failed (a record, then exit).
// A failure is reaped and becomes the Status of its stage; Ok means the sandbox is running.
status::Status AwaitSetup(const SpawnSpec& spec, spawn_plan::Plan* plan, Cloned* cloned,
                          int32_t* stage) {
  close(plan->error_write.release());
  int32_t record[2] = {0, 0};
  ssize_t n;
  do {
    n = read(plan->error_read.fd, record, sizeof record);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof record) && cloned->pid != 0) return status::Ok();
  net_holders::Discard(cloned->holder);
  if (cloned->pid > 0) Reap(cloned->pid);
  if (n != static_cast<ssize_t>(sizeof record))
    return status::Fail("spawn_failed", EIO, "spawn", "the sandbox setup ended without a report");
  *stage = record[0] & 0xff;
  return ChildFailure(record[0], record[1], spec, *plan);
}

// One attempt: from `lease` (a mount template), or setting every mount up (nullptr). *stage: the
// stage a child-side failure reported, else 0.
status::Status SpawnOnce(const SpawnSpec& spec, const mount_templates::Lease* lease, Cloned* cloned,
                         spawn_plan::Plan* plan, int32_t* stage) {
  status::Status built = spawn_plan::Build(spec, plan, lease);
  if (!built.ok()) return built;

  char* stack = child_stacks.Get();
  if (stack == nullptr) return status::Fail("spawn_failed", errno, "mmap(child stack)");
  *cloned = CloneSandbox(spec.linux_spec.new_network, stack, plan, lease);
  if (cloned->pid < 0) {
    net_holders::Discard(cloned->holder);
    cloned->holder = net_holders::Holder();
    const char* code = cloned->clone_errno == EPERM || cloned->clone_errno == ENOSPC
                           ? "userns_denied"
                           : "spawn_failed";
    return status::Fail(code, cloned->clone_errno,
                        "clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|...)",
                        "could not create the sandbox namespaces", "userns");
  }
  return AwaitSetup(spec, plan, cloned, stage);
}

}  // namespace

status::Status Spawn(const SpawnSpec& spec, SpawnResult* out) {
  mount_templates::Lease lease;
  bool templated = mount_templates::Take(spec.linux_spec, &lease);
  auto plan = std::make_unique<spawn_plan::Plan>();
  Cloned cloned;
  int32_t stage = 0;
  status::Status setup = SpawnOnce(spec, templated ? &lease : nullptr, &cloned, plan.get(), &stage);
  // The user's namespace count is reached: the idle templates' namespaces go first (the run is
  // tried again, here without a template or by the caller, once namespaces are free).
  if (setup.sys_errno == ENOSPC) mount_templates::DropIdle();
  if (templated && !setup.ok()) {
    // The template could not serve: this run sets its mounts up itself, as without templates. An
    // event queued meanwhile may be anyone's (the next run finds out whether it was the
    // template's paths'). A template that cannot be joined goes, and so does one of a policy
    // whose sandboxes cannot start anyway (nothing is held for it).
    templated = false;
    auto fresh = std::make_unique<spawn_plan::Plan>();
    Cloned again;
    int32_t fresh_stage = 0;
    setup = SpawnOnce(spec, nullptr, &again, fresh.get(), &fresh_stage);
    if (setup.sys_errno == ENOSPC) mount_templates::DropIdle();
    if (stage == child_setup::kStageTemplate || !setup.ok()) mount_templates::Discard(lease.id);
    mount_templates::Return(lease.id);
    plan = std::move(fresh);
    cloned = again;
  }
  if (!setup.ok()) return setup;
  if (!templated) mount_templates::Started(lease);

  pid_t pid = cloned.pid;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int err = errno;
    net_holders::Discard(cloned.holder);
    kill(pid, SIGKILL);
    Reap(pid);
    if (templated) mount_templates::Return(lease.id);
    return status::Fail("spawn_failed", err, "pidfd_open");
  }
  out->pid = pid;
  out->pidfd = pidfd;
  out->report_fd = plan->report_read.release();
  out->net_userns_fd = cloned.holder.userns_fd;
  out->net_netns_fd = cloned.holder.netns_fd;
  out->mask_wds = std::move(plan->mask_wds);  // written by the child through the shared memory
  out->template_id = templated ? lease.id : -1;
  return status::Ok();
}

}  // namespace backend
