// SPDX-License-Identifier: MIT
// What the sandbox's first process does between clone() and execve() of the init helper. Everything
// here is precomputed by the parent; the child only makes raw system calls (async-signal-safe).
#pragma once

#include <errno.h>
#include <linux/filter.h>
#include <stdint.h>

#include <atomic>
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
  kStageTemplate,       // joining the process's user namespace or a mount template
  kStageTemplateStale,  // a copy of a template made while an event was queued: set up afresh
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
  // The process's own user namespace (mount_templates.h) to join first, or -1: then a holder's
  // user namespace is joined or a new one created. Holders created in it are owned by it.
  int own_userns_fd;
  // A mount template's namespace to join last (the sandbox's mount namespace is a copy), or -1.
  int template_mntns_fd;
  bool network;   // join or create a network namespace (network deny)
  int userns_fd;  // holder to join, -1: create one
  int netns_fd;
  int created_userns_fd;  // nsfs descriptors of namespaces created by the intermediate, or -1
  int created_netns_fd;
  long sandbox_pid;  // the sandbox's first process, or -errno of its clone
  char* stack_top;   // its stack (a template's build: the stack of its locked copy's process)
  int clone_flags;   // its namespaces (CLONE_PARENT: it is the caller's child)
  // A template's write roots inside the private /tmp (mount_templates.h): its locked copy's
  // namespace to join before the template's, and in it the detached tree of each root to clone
  // into mount slot tmp_slots[i]; each clone is also written to tmp_clones[i] (the caller's
  // descriptors to close once the sandbox has attached them). tmp_count 0: none.
  int tmp_mntns_fd;
  int tmp_count;
  const int* tmp_slots;
  const int* tmp_sources;
  int* tmp_clones;
};

// An entry with no namespace to join and none created (every descriptor -1), no sandbox yet.
inline NetEntry EmptyNetEntry() {
  return NetEntry{-1,      -1, false, -1, -1,      -1,      -1,     -ECHILD,
                  nullptr, 0,  -1,    0,  nullptr, nullptr, nullptr};
}

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
  // A mount template's build (BuildTemplate): no Landlock rule and no watch is added (each run adds
  // them on the inodes kept here), and the masks' inodes are kept open: the one file of the file
  // masks (-1: none) and the root of each directory mask, in order (template_dir_fds has room for
  // template_dir_count, template_dir_used of them filled).
  bool template_build;
  int template_file_fd;
  int* template_dir_fds;
  int template_dir_count;
  int template_dir_used;
  int template_mntns_fd;    // the built namespace (written by BuildTemplate)
  int template_staging_fd;  // the file masks' staging directory (their names' watch), or -1
  // Its write roots inside the private /tmp (template_tmp_count paths): written by the build, the
  // detached tree of each, cloned in a locked copy of the template (template_tmp_mntns_fd).
  const char* const* template_tmp_paths;
  int template_tmp_count;
  int* template_tmp_fds;
  int template_tmp_mntns_fd;
  int created_userns_fd;  // MakeUserNamespace's namespace
  // A run from a template copy: before anything of the command runs, the watch queue must hold no
  // event and its count of takes be what it was when the template was found quiet (else
  // kStageTemplateStale). queue_fd -1: no copy.
  int queue_fd;
  // The host's /proc (O_PATH), which the ID maps and pid_max are written through in a copy, where
  // every mount (the host's /proc too) is read-only; -1: by path.
  int proc_fd;
  const std::atomic<uint64_t>* queue_takes;
  uint64_t queue_seen;
};

// The clone() entry point. Never returns: execs the init helper or _exits with code 125.
int Run(void* plan);

// The intermediate's clone() entry point (network deny, or a mount template): joins the process's
// own user namespace, joins or creates the holder's user and network namespaces, joins the
// template's mount namespace, clones Run into the rest, records its pid in plan->net, and _exits.
// Shares the caller's descriptor table (CLONE_FILES), so created nsfs descriptors reach it.
int EnterNetwork(void* plan);

// A mount template's build, on the parent's memory and descriptor table (CLONE_VM|CLONE_VFORK|
// CLONE_FILES): joins net->own_userns_fd, makes a new mount namespace, applies the plan's mount
// steps (those that do not depend on the run), takes its /tmp write roots out into a locked copy
// (on net->stack_top), opens the namespace into template_mntns_fd and _exits (0, or 125 with a
// record on the error pipe).
int BuildTemplate(void* plan);

// The process's own user namespace (CLONE_VM|CLONE_VFORK|CLONE_FILES): unshares one, writes the
// plan's ID maps, opens it into created_userns_fd and _exits (125 on failure).
int MakeUserNamespace(void* plan);

}  // namespace child_setup
