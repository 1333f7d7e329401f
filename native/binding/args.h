// SPDX-License-Identifier: MIT
// Copies the flat spec object built by TypeScript into plain C++ structs, re-checking only types.
#pragma once

#include <napi.h>

#include <memory>
#include <string>
#include <vector>

#include "binding/backend.h"

namespace args {

// How the glue wires one standard stream: a new pipe, /dev/null, a descriptor of ours, output
// captured by the addon itself (stdout/stderr), or a small input written up front (stdin).
struct StdioMode {
  enum Kind { kPipe, kIgnore, kFd, kCapture, kInput } kind = kIgnore;
  int fd = -1;
  std::string input;  // kInput: the bytes the command reads before EOF
};

// The most bytes a kInput stream may carry: one page, which every pipe holds without a reader.
constexpr size_t kMaxDirectInput = 4096;

// The policy part of a Linux spec (its mounts and Landlock rules: thousands for a large policy),
// parsed once by preparePolicy and shared, never changed, by the cold spawns that name it, so that
// a run of a kept policy does not convert it again on the JavaScript thread.
struct PreparedPolicy {
  std::vector<backend::MountOp> mounts;
  std::vector<backend::LandlockRule> landlock_rules;
};

struct ParsedSpawn {
  backend::SpawnSpec spec;
  StdioMode stdio[3];
  double max_buffer = 0;       // per captured stream: the bytes kept (head and tail)
  bool overflow_kill = false;  // going over max_buffer kills the sandbox instead
  int spill_fd = -1;        // also every captured byte to this file (a descriptor of the caller's)
  bool has_script = false;  // the command's script, handed over as its fd 4 (cold spawns only)
  std::string script;
  // spec.linux.prepared: the mounts and Landlock rules to copy in (TakePrepared) before spawning.
  std::shared_ptr<const PreparedPolicy> prepared;
};

// preparePolicy({mounts, landlockRules}) => an opaque handle for spec.linux.prepared (a cold spawn
// then gives neither field itself). Throws Napi::TypeError naming the offending field.
Napi::Value PreparePolicy(const Napi::CallbackInfo& info);

// Copies the prepared policy named by the spec into it: on the thread that spawns, not the
// JavaScript thread when that is another.
void TakePrepared(ParsedSpawn* parsed);

// Throws Napi::TypeError naming the offending field.
ParsedSpawn ParseSpawnSpec(const Napi::Object& obj);

// The per-command part handed to a prewarmed sandbox: {argv, env, cwd, stdio, rlimits}. The argv
// strings, then the env strings, then the cwd, each NUL-terminated, end to end in `strings`: the
// launch message's payload as it is sent, copied once from the JavaScript strings.
struct ParsedLaunch {
  std::string strings;
  uint32_t argc = 0;
  uint32_t envc = 0;
  StdioMode stdio[3];
  double max_buffer = 0;
  bool overflow_kill = false;
  int spill_fd = -1;
  std::vector<backend::ResourceLimit> rlimits;
};

// `buffer`: storage for `strings` (its bytes are dropped, its capacity kept), so that a caller can
// reuse the pages of an earlier launch. Throws Napi::TypeError naming the offending field.
ParsedLaunch ParseLaunchSpec(const Napi::Object& obj, std::string buffer = std::string());

}  // namespace args
