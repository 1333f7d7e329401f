// SPDX-License-Identifier: MIT
// The pids cgroups of runs (lib/sandbox/cgroup.ts) made and removed on the spawn lane. Making
// and removing a cgroup take one lock of the whole kernel, which a burst's sandboxes hold while
// they join theirs: not on the caller's thread, and not on the libuv pool either, whose hand-over
// can hold the caller's thread in a condition variable (posix/job_threads.h).
#pragma once

#include <napi.h>

#include "posix/job_threads.h"

namespace cgroup_calls {

// cgroupMake(dir, max) => Promise<number>: mkdir(dir, 0755), then "<max>\n" into dir/pids.max (as
// fs.writeFile writes: created if missing, truncated);
// 0, or the errno of the step that failed (a directory it made is then removed again).
// cgroupRemove(dir) => Promise<number>: rmdir(dir); 0, or its errno.
// `mailbox` (may be null: the libuv pool then) lives as long as the environment.
void Export(Napi::Env env, Napi::Object exports, job_threads::Mailbox* mailbox);

}  // namespace cgroup_calls
