// SPDX-License-Identifier: MIT
// What the sandbox's first process does between clone() and execve() of the init helper. Everything
// here is precomputed by the parent; the child only makes raw system calls (async-signal-safe).
#pragma once

#include <linux/filter.h>
#include <stdint.h>
#include <sys/resource.h>

#include "linux/init_wire.h"

namespace child_setup {

// Stages reported to the parent through the close-on-exec error pipe as {stage, errno}.
enum Stage : int32_t {
  kStageSignals = 1,
  kStageUidMap,
  kStageMountPrivate,
  kStageMount,
  kStageLoopback,
  kStageLandlockRule,
  kStageRlimit,
  kStageChdir,
  kStageStdio,
  kStageCloseFds,
  kStageNoNewPrivs,
  kStageCapabilities,
  kStageLandlockRestrict,
  kStageSeccomp,
  kStageExecInit,
  kStageCgroup,
  kStageNetHolder,
  kStagePidMax,
};

// Mount operation kinds, mirrored by lib/backend/linux/mounts.ts.
enum MountKind : int32_t {
  kMountDetachClone = 1,  // open_tree(path, CLONE|RECURSIVE) into slot `slot`, nosuid
  kMountReadonlyAll,      // mount_setattr("/", RECURSIVE, RDONLY|NOSUID)
  kMountTmpfs,            // tmpfs at path, mode 1777, size-capped when `data` says so; `slot`
                          // 0 or 1: its root goes to the init as kWatchFd + slot
  kMountMkdirs,           // create missing directories of path (inside our own tmpfs)
  kMountAttach,           // move_mount(slot `slot`) onto path
  kMountReadonlyBind,     // bind path onto itself, read-only
  kMountMaskFile,         // an empty, read-only file of its own over path (opens are watched)
  kMountMaskDir,          // an empty, mode-000, read-only tmpfs over path
  kMountProc,             // a fresh procfs at /proc for the new pid namespace
  kMountDevpts,           // a new devpts instance at path; ptmx bound over /dev/ptmx
  kMountPin,              // bind path (or `data`, relative to the snapshot) onto path, writable (a
                          // mount point cannot be renamed away)
  kMountSnapshot,  // a copy of the write root at path, attached at the staging place for the pins
                   // in it (see masks.h), until the next step that is not a pin
  kMountReadonlyReal,  // bind path onto itself read-only, refused if it is now a link
};

// The init's descriptors of the capped tmpfs mounts it reports full after the run.
using init_wire::kWatchFd;
using init_wire::kWatchSlots;
// Detached clones of the separate (not nested) write roots, one descriptor each until attached;
// the plan refuses more (lib/backend/linux/mounts.ts MAX_SEPARATE_WRITE_ROOTS).
constexpr int kMountSlots = 256;

// How a step runs in the link window of link_window.h (set by the parent, 0 outside it).
enum StepFlags : int32_t {
  kStepInWindow = 1,      // a snapshot, pin or denyWrite bind in the window's root
  kStepFromReadonly = 2,  // a denyWrite bind from the read-only snapshot (its path in it: `data`)
};

struct MountStep {
  int32_t kind;
  int32_t slot;
  const char* path;
  const char* data;  // tmpfs mount options (nullptr: "mode=1777"), mask_dir names, pin source
  int32_t flags;     // StepFlags
};

struct LandlockStep {
  const char* path;
  uint64_t access;
};

struct Rlimit {
  int resource;
  struct rlimit value;
};

// Network deny: the sandbox's first process is cloned from an intermediate that has joined a
// reusable holder (net_holders.h) or created one. Filled in by the parent; `created_*` and
// `sandbox_pid` are written back by the intermediate through the shared memory.
struct NetEntry {
  int userns_fd;  // holder to join, -1: create one
  int netns_fd;
  int created_userns_fd;  // nsfs descriptors of namespaces created by the intermediate, or -1
  int created_netns_fd;
  long sandbox_pid;  // the sandbox's first process, or -errno of its clone
  char* stack_top;   // its stack
  int clone_flags;   // its namespaces (CLONE_PARENT: it is the caller's child)
};

// Everything the child needs, laid out before clone(). Pointers stay valid because the parent
// thread is suspended (CLONE_VFORK) until the child execs or exits.
struct ChildPlan {
  int error_fd;         // close-on-exec pipe: {stage, errno} on failure
  int stdio_fds[3];     // installed as 0, 1, 2
  int report_fd;        // installed as 3 for the init helper
  int cgroup_fd;        // cgroup.procs to join first (-1: none)
  const char* pid_max;  // the new PID namespace's pid_max, decimal (nullptr: leave it)
  int control_fd;       // installed as 4 for a prewarmed init (-1: none)
  int script_fd;        // else installed as 4: the command's script memfd (-1: none)
  int init_fd;          // O_PATH fd of the init helper, executed with execveat
  char* const* init_argv;
  char* const* envp;
  const char* uid_map;  // "U U 1"
  const char* gid_map;  // "G G 1"
  const MountStep* mounts;
  int mount_count;
  // The write root of the link window (nullptr: none), and the index of the window's last step
  // bound from the read-only snapshot (-1: none).
  const char* window_root;
  int readonly_snapshot_last;
  int mount_slots[kMountSlots];  // detached mounts by slot
  int watch_fds[kWatchSlots];  // roots of the watched tmpfs mounts, opened once mounted (-1: none)
  bool new_network;
  int landlock_fd;  // ruleset with the pre-mount rules already added
  const LandlockStep* landlock_after;
  int landlock_after_count;
  const Rlimit* rlimits;
  int rlimit_count;
  const char* cwd;
  int cap_last;  // highest capability number (from /proc/sys/kernel/cap_last_cap)
  const struct sock_fprog* seccomp;
  NetEntry* net;  // network deny through a holder, else nullptr
  // The host's inotify instance (-1: none): the child adds an IN_OPEN watch on each file mask and
  // writes its watch descriptor into mask_wds (mask_count slots, in mount order; -1 when absent).
  int mask_watch_fd;
  int* mask_wds;
  int mask_count;
};

// The clone() entry point. Never returns: execs the init helper or _exits with code 125.
int Run(void* plan);

// The intermediate's clone() entry point (network deny): joins or creates the holder's user and
// network namespaces, clones Run into the rest, records its pid in plan->net, and _exits.
// Shares the caller's descriptor table (CLONE_FILES), so created nsfs descriptors reach it.
int EnterNetwork(void* plan);

}  // namespace child_setup
