// SPDX-License-Identifier: MIT
// The JavaScript-facing spawn/kill glue. Each OS provides one implementation file in common/
// (the only folder allowed to include napi.h), selected by binding.gyp.
#pragma once

#include <napi.h>

namespace spawn_glue {

class State;

State* CreateState(Napi::Env env);
void DestroyState(State* state);

// spawn(spec, onExit) => { pid, stdin?, stdout?, stderr? } (parent-side descriptors of 'pipe's).
Napi::Value Spawn(const Napi::CallbackInfo& info, State* state);
// kill(pid, signal) => boolean: false when the sandbox has already exited.
Napi::Value Kill(const Napi::CallbackInfo& info, State* state);
// activeCount() => number of sandboxes still being watched (diagnostics and leak tests).
Napi::Value ActiveCount(const Napi::CallbackInfo& info, State* state);

}  // namespace spawn_glue
