// SPDX-License-Identifier: MIT
// macosRunMembers(allowedPath, deniedPath) -> { members: number[], undecided: number } (macOS
// builds only; native/macos/run_members.cc): the pids of the user's processes that run under the
// one seatbelt profile that allows reading allowedPath and denies reading deniedPath.
#pragma once

#include <napi.h>

namespace run_members {

// Adds macosRunMembers to the addon's exports.
void Export(Napi::Env env, Napi::Object exports);

}  // namespace run_members
