// SPDX-License-Identifier: MIT
// Applies the ACL plan TypeScript built: one ACE per entry for the container SID, through a handle
// opened without following reparse points, rolled back as a whole when any entry fails.
#pragma once

#include <windows.h>

#include <string>
#include <vector>

#include "binding/status.h"

namespace win_acl {

// kinds[i] is "allow-read", "allow-write", "allow-traverse", "deny-write", "deny-read" or
// "deny-delete", with a trailing "?" when a missing path is skipped instead of failing, or "~" when
// one whose ACL the user may not change is skipped too. paths[i] is absolute.
status::Status ApplyAclPlan(PSID sid, const std::vector<std::string>& kinds,
                            const std::vector<std::string>& paths);

}  // namespace win_acl
