// SPDX-License-Identifier: MIT
// Spawn glue for platforms whose native spawn is not built (macOS runs sandbox-exec from
// TypeScript). Every call fails closed with sandbox_unavailable.
#include "binding/js_errors.h"
#include "binding/spawn_glue.h"

namespace spawn_glue {

class State {};

State* CreateState(Napi::Env, job_threads::Mailbox*) { return new State(); }
void DestroyState(State* state) { delete state; }

namespace {
Napi::Value Unsupported(Napi::Env env) {
  status::Status s = status::Fail("sandbox_unavailable", 0, "spawn",
                                  "native spawning is not available on this platform", "native");
  throw js_errors::FromStatus(env, s);
}
}  // namespace

Napi::Value Spawn(const Napi::CallbackInfo& info, State*) { return Unsupported(info.Env()); }
Napi::Value SpawnAsync(const Napi::CallbackInfo& info, State*) { return Unsupported(info.Env()); }
Napi::Value PrepareWarm(const Napi::CallbackInfo& info, State*) { return Unsupported(info.Env()); }
Napi::Value SpawnWarm(const Napi::CallbackInfo& info, State*) { return Unsupported(info.Env()); }
Napi::Value Launch(const Napi::CallbackInfo& info, State*) { return info.Env().Null(); }
Napi::Value Kill(const Napi::CallbackInfo& info, State*) {
  return Napi::Boolean::New(info.Env(), false);
}
Napi::Value ActiveCount(const Napi::CallbackInfo& info, State*) {
  return Napi::Number::New(info.Env(), 0);
}
Napi::Value LandlockAbi(const Napi::CallbackInfo& info, State*) {
  return Napi::Number::New(info.Env(), 0);
}

}  // namespace spawn_glue
