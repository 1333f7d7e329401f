// SPDX-License-Identifier: MIT
// Builds the plan of one Linux spawn (see spawn_plan.h): validation, the Landlock ruleset with
// every rule whose path exists on the host already, the init's argv, ID maps, mount steps,
// resource limits, the decoded BPF program and the two pipes of the setup.
#include "linux/spawn_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include <algorithm>

#include "linux/kernel_compat.h"
#include "linux/link_window_plan.h"
#include "linux/masks.h"

namespace spawn_plan {
namespace {

using backend::LandlockRule;
using backend::LinuxSpec;
using backend::MountOp;
using backend::ResourceLimit;
using backend::SpawnSpec;

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

// The pipe a failing child writes {stage, errno} to (close-on-exec: exec closes it).
status::Status MakeErrorPipe(Plan* plan) {
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0)
    return status::Fail("spawn_failed", errno, "pipe2(error pipe)");
  plan->error_read.fd = err_pipe[0];
  plan->error_write.fd = err_pipe[1];
  return status::Ok();
}

// The host's /proc, opened once (O_PATH; -1 when it cannot be).
int HostProc() {
  static const int fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  return fd;
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
  if (kind == "snapshot") return kMountSnapshot;
  if (kind == "readonly_real") return kMountReadonlyReal;
  return 0;
}

// Appends a pointer to each of `items` (not a copy: they must outlive `out`).
void AppendCStrings(const std::vector<std::string>& items, std::vector<char*>* out) {
  for (const std::string& item : items) out->push_back(const_cast<char*>(item.c_str()));
}

// The init's argv: its flags, then the command's argv (a cold start) or --warm (it waits for one
// launch message).
void BuildInitArgs(const SpawnSpec& spec, Plan* plan) {
  const LinuxSpec& ls = spec.linux_spec;
  plan->init_args.push_back("zero-sandbox-init");
  // The process cap is the PID namespace's pid_max or RLIMIT_NPROC, neither of which counts
  // refusals: the init checks with forks of its own. (Its RLIMIT_NPROC is the command's: set here
  // for a cold start, and part of the prewarm key for a prewarmed one.) A pids cgroup counts.
  bool nproc = false;
  for (const ResourceLimit& limit : ls.rlimits) nproc = nproc || limit.resource == RLIMIT_NPROC;
  if (ls.pid_max > 0 || nproc) plan->init_args.push_back("--probe-forks");
  bool warm = spec.control_fd >= 0;
  if (warm) plan->init_args.push_back("--warm");
  // The command's own arguments are pointed at where the spec holds them, not copied: they can be
  // megabytes, and the kernel copies them at each exec anyway.
  plan->init_argv.reserve(plan->init_args.size() + (warm ? 0 : spec.argv.size()) + 1);
  AppendCStrings(plan->init_args, &plan->init_argv);
  if (!warm) AppendCStrings(spec.argv, &plan->init_argv);
  plan->init_argv.push_back(nullptr);
  plan->envp.reserve(spec.envp.size() + 1);
  AppendCStrings(spec.envp, &plan->envp);
  plan->envp.push_back(nullptr);
}

// Mount steps, post-mount Landlock rules, resource limits and the BPF program, as the child reads
// them.
status::Status BuildMountSteps(const std::vector<MountOp>& ops, Plan* plan) {
  for (const MountOp& op : ops) {
    int32_t kind = MountKindCode(op.kind);
    if (kind == 0)
      return status::Fail("invalid_argument", EINVAL, "spawn", "unknown mount kind " + op.kind);
    child_setup::MountStep step;
    step.kind = kind;
    step.slot = op.source.empty() ? -1 : atoi(op.source.c_str());
    step.path = op.path.c_str();
    step.data = op.data.empty() ? nullptr : op.data.c_str();
    step.flags = 0;
    plan->mounts.push_back(step);
  }
  return status::Ok();
}

status::Status BuildSteps(const LinuxSpec& ls, Plan* plan, bool templated) {
  status::Status mounts = BuildMountSteps(templated ? plan->run_ops : ls.mounts, plan);
  if (!mounts.ok()) return mounts;
  int mask_count = 0;
  for (const MountOp& op : ls.mounts) {
    if (op.kind == "mask_file") mask_count += 1;
    // A mask_dir's stand-ins: its '/'-separated names.
    if (op.kind == "mask_dir" && !op.data.empty()) {
      mask_count += 1 + static_cast<int>(std::count(op.data.begin(), op.data.end(), '/'));
    }
  }
  plan->mask_wds.assign(static_cast<size_t>(mask_count), -1);
  for (const LandlockRule& rule : ls.landlock_rules) {
    if (rule.after_mounts) plan->landlock_after.push_back({rule.path.c_str(), rule.access});
  }
  for (const ResourceLimit& limit : ls.rlimits) {
    child_setup::Rlimit r;
    r.resource = limit.resource;
    r.value.rlim_cur = limit.soft;
    r.value.rlim_max = limit.hard;
    plan->rlimits.push_back(r);
  }
  plan->filter.reserve(ls.seccomp_program.size());
  for (uint64_t word : ls.seccomp_program) {
    struct sock_filter ins;
    ins.code = static_cast<uint16_t>(word >> 48);
    ins.jt = static_cast<uint8_t>(word >> 40);
    ins.jf = static_cast<uint8_t>(word >> 32);
    ins.k = static_cast<uint32_t>(word);
    plan->filter.push_back(ins);
  }
  plan->seccomp.len = static_cast<unsigned short>(plan->filter.size());
  plan->seccomp.filter = plan->filter.data();
  return status::Ok();
}

// Points the ChildPlan at everything built so far.
void FillChild(const SpawnSpec& spec, Plan* plan) {
  const LinuxSpec& ls = spec.linux_spec;
  child_setup::ChildPlan& c = plan->child;
  memset(&c, 0, sizeof c);
  c.error_fd = plan->error_write.fd;
  for (int i = 0; i < 3; ++i) c.stdio_fds[i] = spec.stdio[i];
  c.report_fd = plan->report_write.fd;
  c.control_fd = spec.control_fd;
  c.script_fd = spec.script_fd;
  c.cgroup_fd = ls.cgroup_procs_fd;
  snprintf(plan->pid_max, sizeof plan->pid_max, "%d", ls.pid_max);
  c.pid_max = ls.pid_max > 0 ? plan->pid_max : nullptr;
  c.init_fd = plan->init_fd.fd;
  c.init_argv = plan->init_argv.data();
  c.envp = plan->envp.data();
  c.uid_map = plan->ids.uid;
  c.gid_map = plan->ids.gid;
  c.mounts = plan->mounts.data();
  c.mount_count = static_cast<int>(plan->mounts.size());
  c.window_root = nullptr;
  c.readonly_snapshot_last = -1;
  for (int i = 0; i < child_setup::kMountSlots; ++i) c.mount_slots[i] = -1;
  for (int i = 0; i < child_setup::kWatchSlots; ++i) c.watch_fds[i] = -1;
  c.new_network = ls.new_network;
  c.landlock_fd = plan->ruleset.fd;
  c.landlock_after = plan->landlock_after.data();
  c.landlock_after_count = static_cast<int>(plan->landlock_after.size());
  c.rlimits = plan->rlimits.data();
  c.rlimit_count = static_cast<int>(plan->rlimits.size());
  c.cwd = spec.cwd.c_str();
  c.cap_last = ReadCapLast();
  c.seccomp = &plan->seccomp;
  c.mask_watch_fd = ls.mask_watch_fd;
  c.mask_wds = plan->mask_wds.data();
  c.mask_count = static_cast<int>(plan->mask_wds.size());
  c.template_build = false;
  c.template_file_fd = -1;
  c.template_staging_fd = -1;
  c.template_mntns_fd = -1;
  c.created_userns_fd = -1;
  c.queue_fd = -1;
  c.proc_fd = -1;
}

}  // namespace

status::Status Build(const SpawnSpec& spec, Plan* plan, const mount_templates::Lease* lease) {
  const LinuxSpec& ls = spec.linux_spec;
  if (spec.argv.empty()) return status::Fail("invalid_argument", EINVAL, "spawn", "argv is empty");
  if (ls.seccomp_program.empty() || ls.seccomp_program.size() > 4096) {
    return status::Fail("seccomp_install_failed", EINVAL, "spawn", "no seccomp program", "seccomp");
  }
  if (ls.landlock_abi < 1) {
    return status::Fail("landlock_unsupported", ENOSYS, "spawn", "Landlock is required",
                        "landlock");
  }

  plan->init_fd.fd = open(ls.init_path.c_str(), O_PATH | O_CLOEXEC);
  if (plan->init_fd.fd < 0) {
    status::Status s = status::Fail("native_unavailable", errno, "open(" + ls.init_path + ")",
                                    "the zero-sandbox-init helper is missing; rebuild the addon");
    s.path = ls.init_path;
    return s;
  }
  status::Status rs = BuildRuleset(ls, &plan->ruleset);
  if (!rs.ok()) return rs;

  BuildInitArgs(spec, plan);
  if (lease != nullptr) {
    std::vector<bool> run = mount_templates::RunSteps(ls.mounts);
    for (size_t i = 0; i < ls.mounts.size(); ++i) {
      if (!run[i]) continue;
      plan->run_ops.push_back(ls.mounts[i]);
      plan->step_origin.push_back(static_cast<int>(i));
    }
  }
  status::Status steps = BuildSteps(ls, plan, lease != nullptr);
  if (!steps.ok()) return steps;
  if (lease != nullptr) {
    status::Status masks = mount_templates::AddMasks(ls, *lease, plan->ruleset.fd, &plan->mask_wds);
    if (!masks.ok()) return masks;
  }

  status::Status pipe = MakeErrorPipe(plan);
  if (!pipe.ok()) return pipe;
  int report_pipe[2];
  if (pipe2(report_pipe, O_CLOEXEC) != 0)
    return status::Fail("spawn_failed", errno, "pipe2(report pipe)");
  plan->report_read.fd = report_pipe[0];
  plan->report_write.fd = report_pipe[1];

  FillChild(spec, plan);
  PlanLinkWindow(lease != nullptr ? plan->run_ops : ls.mounts, plan);
  if (lease != nullptr) {
    plan->child.queue_fd = lease->mark.fd;
    plan->child.queue_takes = lease->mark.takes;
    plan->child.queue_seen = lease->mark.seen;
    plan->child.proc_fd = HostProc();
  }
  return status::Ok();
}

status::Status BuildTemplate(const std::vector<MountOp>& ops, int dir_masks, Plan* plan) {
  status::Status steps = BuildMountSteps(ops, plan);
  if (!steps.ok()) return steps;
  status::Status pipe = MakeErrorPipe(plan);
  if (!pipe.ok()) return pipe;
  plan->template_dir_fds.assign(static_cast<size_t>(dir_masks), -1);
  child_setup::ChildPlan& c = plan->child;
  memset(&c, 0, sizeof c);
  c.error_fd = plan->error_write.fd;
  c.mounts = plan->mounts.data();
  c.mount_count = static_cast<int>(plan->mounts.size());
  c.readonly_snapshot_last = -1;
  for (int i = 0; i < child_setup::kMountSlots; ++i) c.mount_slots[i] = -1;
  for (int i = 0; i < child_setup::kWatchSlots; ++i) c.watch_fds[i] = -1;
  c.landlock_fd = -1;
  c.mask_watch_fd = -1;
  c.template_build = true;
  c.uid_map = plan->ids.uid;  // its locked copy's user namespace
  c.gid_map = plan->ids.gid;
  c.template_file_fd = -1;
  c.template_staging_fd = -1;
  c.template_mntns_fd = -1;
  c.created_userns_fd = -1;
  c.template_dir_fds = plan->template_dir_fds.data();
  c.template_dir_count = dir_masks;
  c.queue_fd = -1;
  c.proc_fd = -1;
  PlanLinkWindow(ops, plan);
  return status::Ok();
}

}  // namespace spawn_plan
