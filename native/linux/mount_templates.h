// SPDX-License-Identifier: MIT
// Mount templates: the mount namespace of a policy, built once and copied by each sandbox. Most of
// a sandbox's set-up with many write roots and deny entries is its mount steps (thousands of bind
// mounts, applied one by one); copying a namespace that holds them already costs a few times less.
// A template holds every step that does not depend on the run (write roots, read-only binds, pins,
// masks); each run still mounts its own /tmp, /dev/shm, /proc and devpts in its copy.
//
// A template is a mount namespace owned by the process's own user namespace (one per process, which
// also owns the network holders made while it exists): a sandbox joins that user namespace, the
// template's mount namespace, then clones itself into new namespaces as without a template, so its
// mount namespace is a copy owned by a less privileged user namespace (every mount in it locked).
// A write root inside the run's private /tmp is not in the template's namespace (each run would
// copy it with the namespace and again into its new /tmp): the build moves it to a locked copy of
// the template (a namespace of a user namespace of its own), where each run's sandbox, before it
// joins the template's namespace, clones it (with its mounts, still locked) to attach in its /tmp.
//
// A template reflects the host when it was built, and is kept under a watch set of every path its
// steps name (made before the build): used only while that set is quiet, and a copy is used only
// if no event was queued up to the moment it was made (checked by the sandbox's first process
// before anything of the command runs; else the run sets its mounts up afresh). A policy's first
// run sets up as without templates; its second builds the template. At most one sandbox uses a
// template at a time (the masks' inodes are the template's, and the addon tells the sandboxes'
// opens of them apart by inode): a second one at once gets a template of its own, or none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "binding/backend.h"
#include "binding/status.h"
#include "linux/watched_looks.h"

namespace mount_templates {

// A template taken for one spawn; its descriptors are the registry's (valid until returned).
struct Lease {
  int id = -1;
  int userns_fd = -1;   // the process's own user namespace
  int mntns_fd = -1;    // the template's mount namespace
  int file_fd = -1;     // the file masks' one file (O_PATH), or -1
  int staging_fd = -1;  // their staging directory (watched for the names of their opens), or -1
  std::vector<int> dir_fds;  // each directory mask's root, in order
  // The write roots inside the private /tmp: the template's locked copy to clone them in, or -1;
  // each one's mount slot and detached tree.
  int tmp_mntns_fd = -1;
  std::vector<int> tmp_slots;
  std::vector<int> tmp_fds;
  watched_looks::QueueMark mark;
  // The policy's key, when its mounts can be split into a template's and the run's (Started).
  size_t key = 0;
  bool templatable = false;
};

// Which of `ops` are the run's own, set up in its copy of the template: its private /tmp and
// /dev/shm, the attach of each write root inside that /tmp (a clone of the template's, with what
// is mounted in it, made before the copy from the template's locked copy), and /proc with the
// read-only binds in it and devpts (everything from "proc" on).
std::vector<bool> RunSteps(const std::vector<backend::MountOp>& ops);

// The process's own user namespace (made at the first call, with the caller's IDs mapped to
// themselves), or -1 when it cannot be made. Network holders are made in it, so that sandboxes
// copied from a template (which join it) can join them.
int UserNamespace();

// Lets the run's sandbox read the template's masks (a Landlock rule in `ruleset` on each mask's
// inode, as a set-up of the masks adds) and watches their opens on the spec's inotify instance
// (the staging directory for the file masks, each stand-in of a directory mask), filling
// `mask_wds` in the order of the mask steps.
status::Status AddMasks(const backend::LinuxSpec& spec, const Lease& lease, int ruleset,
                        std::vector<int>* mask_wds);

// A quiet template of the spec's mount steps, taken (built on the run after one that started
// without it); false: set the mounts up without one.
bool Take(const backend::LinuxSpec& spec, Lease* out);
// A sandbox of the policy Take answered false for has started: its next run builds a template.
void Started(const Lease& declined);
// The sandbox that took the template is gone (every process of it).
void Return(int id);
// A copy of the template may not match the host: the template goes (once returned).
void Discard(int id);
// Drops every idle template: the user's namespace count is reached (each holds a mount namespace,
// and one with write roots in the private /tmp a user namespace besides), and a run needs them.
void DropIdle();
// Templates held now (for tests).
int Count();

// Since the process started: templates built, and starts of a policy that rested (set up without
// its template, which was dropped unused before); and templates held now, with the descriptors
// they hold and how many a sandbox is using. For tests and the bench's count of leaked descriptors.
struct Stats {
  uint64_t built = 0;
  uint64_t rested = 0;
  size_t held = 0;
  size_t fds = 0;
  size_t busy = 0;
};
Stats Counts();

}  // namespace mount_templates
