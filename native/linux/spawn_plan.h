// SPDX-License-Identifier: MIT
// The plan of one Linux spawn: everything the sandbox's first process reads, built before clone()
// (Landlock ruleset, BPF program, ID maps, argv, mount steps). The child runs on the parent's
// memory (CLONE_VM) and may only make raw system calls, so nothing it needs is allocated after the
// clone: the plan owns every buffer the ChildPlan points into.
#pragma once

#include <linux/filter.h>
#include <stdio.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "binding/backend.h"
#include "linux/child_setup.h"
#include "linux/mount_templates.h"

namespace spawn_plan {

// The caller's IDs mapped to themselves ("U U 1", "G G 1"): the ID maps of a user namespace a
// child of ours makes (a sandbox, a template's locked copy, the process's own).
struct IdMaps {
  char uid[64];
  char gid[64];
  IdMaps() {
    snprintf(uid, sizeof uid, "%u %u 1", static_cast<unsigned>(geteuid()),
             static_cast<unsigned>(geteuid()));
    snprintf(gid, sizeof gid, "%u %u 1", static_cast<unsigned>(getegid()),
             static_cast<unsigned>(getegid()));
  }
};

// A descriptor closed when its owner goes.
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

// Built in place and never moved: `child` points into the other members.
struct Plan {
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  Fd init_fd;       // O_PATH descriptor of the init helper
  Fd ruleset;       // the Landlock ruleset, pre-mount rules added
  Fd error_read;    // {stage, errno} from a child that failed before exec
  Fd error_write;   // the child's end: close-on-exec, so exec closes it
  Fd report_read;   // the init's report records, for the exit watcher
  Fd report_write;  // installed as the init's fd 3

  std::vector<std::string> init_args;  // the init's own flags
  std::vector<char*> init_argv;        // those, then the spec's argv (a cold start): not copies
  std::vector<char*> envp;
  IdMaps ids;
  char pid_max[16];
  std::vector<child_setup::MountStep> mounts;
  // From a template: the run's own mount operations (what `mounts` points into), and the index in
  // the spec's of each (to name a failing one).
  std::vector<backend::MountOp> run_ops;
  std::vector<int> step_origin;
  // A template build: the roots of its directory masks (child_setup::ChildPlan::template_dir_fds).
  std::vector<int> template_dir_fds;
  std::vector<child_setup::LandlockStep> landlock_after;
  std::vector<child_setup::Rlimit> rlimits;
  std::vector<struct sock_filter> filter;
  struct sock_fprog seccomp;
  // The watch descriptor of each file mask, in mount order (-1: none), written by the child
  // through the shared memory; handed to the exit watcher with the result.
  std::vector<int> mask_wds;

  child_setup::ChildPlan child;
};

// Checks the spec and fills `plan` (which must be fresh, and must not outlive the spec: its argv
// and envp point into it); a failure leaves nothing open once `plan` is destroyed.
// With `lease` (a mount template, see mount_templates.h): only the run's own mount steps, the
// template's masks allowed by the ruleset and watched by the addon.
status::Status Build(const backend::SpawnSpec& spec, Plan* plan,
                     const mount_templates::Lease* lease = nullptr);

// The plan of a template's build: the mount steps of `ops` (which must outlive the plan), no
// Landlock rule, no watch, room for `dir_masks` directory masks' roots.
status::Status BuildTemplate(const std::vector<backend::MountOp>& ops, int dir_masks, Plan* plan);

}  // namespace spawn_plan
