// SPDX-License-Identifier: MIT
// The only place a backend Status becomes a JavaScript error.
#pragma once

#include <napi.h>

#include "binding/status.h"

namespace js_errors {

// "<syscall> failed: <strerror> (<detail>)" with own properties code, errno, syscall, path, layer.
Napi::Error FromStatus(Napi::Env env, const status::Status& s);

}  // namespace js_errors
