// SPDX-License-Identifier: MIT
// The pins and denyWrite binds of the write root that holds most of them, made while that root's
// mounts refuse to follow symbolic links (nosymfollow), by the sandbox's first process between
// clone() and execve() (raw system calls only).
//
// Each pin and each denyWrite entry is planned as a real path, and a path swapped for a link
// since must be refused, not followed. A mount(2) call follows a link at the end of its target,
// so each such mount used to be followed by a mount_setattr told not to follow it, which fails on a
// link: two calls per entry. In the window, every lookup that meets a link on the root's mounts
// (at the end of the path or in the middle) fails with ELOOP, the mount call included: one call
// per entry, and the flag is cleared again from the whole root (one call) before any other step.
// The denyWrite binds take their read-only flag from their source, a read-only snapshot of the root
// taken before the pins: no call of their own to set it.
#pragma once

#include "linux/child_setup.h"
#include "linux/masks.h"

namespace child_setup {

// The window's progress through the mount steps.
struct LinkWindow {
  // Whether this namespace was looked at for mounts that refuse links already (the host's own
  // nosymfollow mounts, whose flag clearing ours would lose), and whether there were none: only
  // then is the window used; otherwise each step makes its own check, as outside the window.
  bool looked = false;
  bool usable = false;
  bool open = false;  // the root's mounts refuse links now
  // Whether the read-only snapshot is attached at kStaging (beneath a pin snapshot, if one is
  // there), and whether it has been taken in this setup (it is taken once).
  bool readonly_snapshot = false;
  bool readonly_taken = false;
};

// Opens the window before step `index` (one flagged kStepInWindow): takes away a pin snapshot of
// another root, sets nosymfollow on every mount of plan->window_root and, when a read-only bind
// of the window comes at or after `index`, attaches the read-only snapshot at kStaging. Does
// nothing (the steps then check for themselves) when a mount refused links before.
int OpenLinkWindow(const ChildPlan* plan, int index, LinkWindow* window, MaskState* masks);

// Clears nosymfollow from every mount of the root again (the pins and binds made meanwhile too).
int CloseLinkWindow(const ChildPlan* plan, LinkWindow* window);

// Takes the read-only snapshot away from kStaging (once its last bind is made).
int DropReadonlySnapshot(LinkWindow* window, MaskState* masks);

// A denyWrite entry bound from the read-only snapshot: step.data is the entry's path in it,
// relative to its root (the working directory, entered before the first of them), bound with
// what is mounted beneath it onto step.path. Read-only and nosuid as the snapshot is; the window
// refuses a link on either path. Refused unless the snapshot, and nothing else, is at kStaging.
int BindFromReadonlySnapshot(const LinkWindow* window, const MaskState* masks,
                             const MountStep& step);

}  // namespace child_setup
