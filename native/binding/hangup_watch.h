// SPDX-License-Identifier: MIT
// Tells JavaScript when the reader of one of its output descriptors has gone (a closed pipe), so
// a headless run whose stdout was closed stops at once instead of when it next writes.
#pragma once

#include <napi.h>

namespace hangup_watch {

// watchHangup(fd, callback): calls `callback` once when the reader of `fd` has gone. Returns false
// where that cannot be watched (a regular file, a terminal that never hangs up, Windows).
Napi::Value WatchHangup(const Napi::CallbackInfo& info);

}  // namespace hangup_watch
