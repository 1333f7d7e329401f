// SPDX-License-Identifier: MIT
// The JavaScript-facing spawn/kill glue. Each OS provides one implementation file in its own
// folder (native/<os>/spawn_glue_<os>.cc), selected by binding.gyp.
#pragma once

#include <napi.h>

namespace job_threads {
class Mailbox;
}

namespace spawn_glue {

class State;

// `mailbox`: the environment's way back from the addon's job threads (posix/job_threads.h; null on
// Windows or when the environment has none). The addon owns it and closes it before DestroyState.
State* CreateState(Napi::Env env, job_threads::Mailbox* mailbox);
void DestroyState(State* state);

// spawn(spec, onExit) => { pid, stdin?, stdout?, stderr? } (parent-side descriptors of 'pipe's).
Napi::Value Spawn(const Napi::CallbackInfo& info, State* state);
// spawnAsync(spec, onExit) => Promise of the same: the clone and the sandbox's setup run on the
// addon's job threads (posix/job_threads.h), so the JavaScript thread is not held while they
// happen (Linux; elsewhere it fails as spawn does).
Napi::Value SpawnAsync(const Napi::CallbackInfo& info, State* state);
// prepareWarm(spec) => an opaque handle holding the parsed spec, so that refilling a prewarm pool
// does not convert the same spec again on the JavaScript thread.
Napi::Value PrepareWarm(const Napi::CallbackInfo& info, State* state);
// spawnWarm(specOrHandle, onExit) => Promise<{ pid }>: a prewarmed sandbox, set up on the thread
// pool, whose init waits for one launch. Idle, it does not keep the event loop alive.
Napi::Value SpawnWarm(const Napi::CallbackInfo& info, State* state);
// launch(pid, {argv, env, cwd, stdio, rlimits}) => { pid, stdin?, stdout?, stderr? } | null (the
// prewarmed sandbox is gone or used; the caller then spawns cold).
Napi::Value Launch(const Napi::CallbackInfo& info, State* state);
// kill(pid, signal) => boolean: false when the sandbox has already exited.
Napi::Value Kill(const Napi::CallbackInfo& info, State* state);
// activeCount() => number of sandboxes still being watched (diagnostics and leak tests).
Napi::Value ActiveCount(const Napi::CallbackInfo& info, State* state);
// landlockAbi() => the Landlock ABI the kernel offers (0 when absent): one cheap system call.
Napi::Value LandlockAbi(const Napi::CallbackInfo& info, State* state);

}  // namespace spawn_glue
