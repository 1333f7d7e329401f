// SPDX-License-Identifier: MIT
// The file verbs on Windows (see binding/fs_glue.h): none. The descriptor-relative walks are POSIX
// (openat, O_NOFOLLOW); the Windows backend's host-side checks are done in lib/ without them.
#include "binding/fs_glue.h"

namespace fs_glue {

void Export(Napi::Env, Napi::Object) {}

}  // namespace fs_glue
