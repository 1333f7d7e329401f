// SPDX-License-Identifier: MIT
// The link window of a spawn's mount steps (link_window.h): which write root's pins and denyWrite
// entries the child makes in it, and which of those entries it binds from the read-only snapshot.
#pragma once
#include <vector>

#include "binding/backend.h"
#include "linux/spawn_plan.h"

namespace spawn_plan {

// Chooses the write root of the link window, the one with most pins and denyWrite entries, and
// flags its steps in `plan` (built from `ops`, one step each, in order). No window when no root
// has enough of them.
void PlanLinkWindow(const std::vector<backend::MountOp>& ops, Plan* plan);

}  // namespace spawn_plan
