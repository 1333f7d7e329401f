// SPDX-License-Identifier: MIT
// Applies the ACL plan TypeScript built: one ACE per entry for the container SID, through a handle
// opened without following reparse points, rolled back as a whole when any entry fails; and
// reverts one: every explicit ACE of the container SID removed from each path.
#pragma once

#include <windows.h>

#include <string>
#include <vector>

#include "binding/status.h"

namespace win_acl {

// kinds[i] is "allow-read", "allow-write", "allow-traverse", "deny-write", "deny-read" or
// "deny-delete", with a trailing "?" when a missing path is skipped instead of failing, or "~" when
// one whose ACL the user may not change is skipped too. paths[i] is absolute.
// `redo`: an entry already present is set again (its propagation below the path may have been cut
// short by a run that stopped midway).
status::Status ApplyAclPlan(PSID sid, const std::vector<std::string>& kinds,
                            const std::vector<std::string>& paths, bool redo);

// Removes every explicit allow and deny ACE naming `sid` from each path (missing paths skipped),
// counting the DACLs changed in `changed`. Every path is tried; the first failure is returned
// (code sandbox_unavailable, layer acl).
status::Status RevertAclPlan(PSID sid, const std::vector<std::string>& paths, size_t* changed);

}  // namespace win_acl
