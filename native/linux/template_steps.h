// SPDX-License-Identifier: MIT
// The mount templates' view of a spec's mount steps (mount_templates.h): which of them a template
// holds, how a policy's steps are keyed and compared. Used under the templates' lock; no state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binding/backend.h"

namespace mount_templates {

// Whether `path` is `root` or beneath it.
bool Within(std::string_view root, std::string_view path);

// Whether two lists of steps are the same, step for step.
bool SameOps(const std::vector<backend::MountOp>& a, const std::vector<backend::MountOp>& b);

// The template's steps of `ops` into `out` (with the count of its directory masks and the write
// roots it takes out of the private /tmp: path and mount slot each), or false when the mounts
// cannot be split so (see template_steps.cc).
bool TemplateOps(const std::vector<backend::MountOp>& ops, std::vector<backend::MountOp>* out,
                 int* dir_masks, std::vector<std::pair<std::string, int>>* tmp_roots_out);

// A policy's key: a hash of its template's steps.
size_t Hash(const std::vector<backend::MountOp>& ops);

}  // namespace mount_templates
