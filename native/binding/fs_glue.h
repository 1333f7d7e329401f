// SPDX-License-Identifier: MIT
// The file verbs of the host-side checks on write roots: fsInspect, fsInspectMany, fsRead, fsList,
// fsRemove, fsReplace, fsMake, fsScanGit and fsRemoveAsync (their TypeScript mirror is in
// lib/native/types.ts). All but the last two are binding/fs_beneath.h's walks, glued once
// (binding/fs_verbs_glue.cc) and implemented per platform: native/posix/ and native/windows/.
// fsScanGit and fsRemoveAsync are POSIX only (native/posix/fs_glue_posix.cc); Windows adds its
// windowsAcl (native/windows/fs_glue_windows.cc). lib/ checks for each verb before it uses it.
#pragma once

#include <napi.h>

#include <string>

#include "binding/fs_beneath.h"

namespace job_threads {
class Mailbox;
}

namespace fs_glue {

// Adds this platform's file verbs to the addon's exports. `mailbox` (POSIX; may be null): the
// environment's way back from the addon's job threads, which run fsScanGitAsync and fsRemoveAsync.
void Export(Napi::Env env, Napi::Object exports, job_threads::Mailbox* mailbox);

// Adds the verbs of binding/fs_beneath.h (every platform's Export calls it).
void ExportVerbs(Napi::Env env, Napi::Object exports);

// Runs a verb's body with its (root, rel) byte strings checked: { kind: 'e', errno: EINVAL } for
// bad arguments, null on an internal fault. Every fs verb answers with a value and never throws, so
// a call made while a sandbox's exit is delivered cannot escape into V8.
Napi::Value FsCall(const Napi::CallbackInfo& info,
                   Napi::Value (*body)(const Napi::CallbackInfo&, const std::string&,
                                       const std::string&));

// fsRemove's answer: { ok, errno, removed }.
Napi::Object RemoveAnswer(Napi::Env env, const fs_beneath::RemoveResult& r);

}  // namespace fs_glue
