// SPDX-License-Identifier: MIT
// The mount steps of a sandbox's set-up (and of a policy's mount template), applied in order by
// the first process after clone(): write roots cloned and attached, everything else read-only,
// protected paths bound read-only, masks, a private /tmp, /proc and devpts. Async-signal-safe as
// child_setup.cc is: raw system calls on precomputed data only, no allocation, no locks.
#pragma once

#include <stdint.h>

#include "linux/child_setup.h"
#include "linux/masks.h"

namespace child_setup {

// Applies the plan's mount steps in order, through the link window; the window is closed and its
// snapshot taken away at the end, the masks' staging stays. Returns 0, or -1 with errno set and
// *stage the failure record's stage (the failing step's index in its high bits, so that the parent
// can name the path).
int ApplyMounts(ChildPlan* plan, MaskState* masks, int32_t* stage);

}  // namespace child_setup
