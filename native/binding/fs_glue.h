// SPDX-License-Identifier: MIT
// The file verbs of the host-side checks on write roots: fsInspect, fsInspectMany, fsRead, fsList,
// fsRemove, fsReplace, fsMake and fsScanGit (their TypeScript mirror is in lib/native/types.ts). On
// POSIX they are the descriptor-relative walks of native/posix/ (native/posix/fs_glue_posix.cc);
// Windows exports none of them, only its windowsAcl (native/windows/fs_glue_windows.cc), and lib/
// checks for each verb before it uses it.
#pragma once

#include <napi.h>

namespace fs_glue {

// Adds this platform's file verbs to the addon's exports.
void Export(Napi::Env env, Napi::Object exports);

}  // namespace fs_glue
