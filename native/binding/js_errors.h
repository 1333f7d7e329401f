// SPDX-License-Identifier: MIT
// The only place a backend Status becomes a JavaScript error.
#pragma once

#include <napi.h>

#include "binding/status.h"

namespace js_errors {

// "<syscall> failed: <strerror> (<detail>)" with own properties code, errno, syscall, path, layer;
// a Windows error reads "<syscall> failed: win32 error N (<system text>) (<detail>)" (or
// "HRESULT 0x...") and sets win32Error or hresult instead of errno.
Napi::Error FromStatus(Napi::Env env, const status::Status& s);

}  // namespace js_errors
