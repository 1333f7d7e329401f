// SPDX-License-Identifier: MIT
// Copies the flat spec object built by TypeScript into plain C++ structs, re-checking only types.
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "common/backend.h"

namespace args {

// How the glue wires one standard stream: a new pipe, /dev/null, or a descriptor of ours.
struct StdioMode {
  enum Kind { kPipe, kIgnore, kFd } kind = kIgnore;
  int fd = -1;
};

struct ParsedSpawn {
  backend::SpawnSpec spec;
  StdioMode stdio[3];
};

// Throws Napi::TypeError naming the offending field.
ParsedSpawn ParseSpawnSpec(const Napi::Object& obj);

// The per-command part handed to a prewarmed sandbox: {argv, env, cwd, stdio, rlimits}.
struct ParsedLaunch {
  std::vector<std::string> argv;
  std::vector<std::string> envp;
  std::string cwd;
  StdioMode stdio[3];
  std::vector<backend::ResourceLimit> rlimits;
};

ParsedLaunch ParseLaunchSpec(const Napi::Object& obj);

}  // namespace args
