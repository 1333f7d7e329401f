// SPDX-License-Identifier: MIT
// The descriptors a Linux spawn hands the sandbox for its standard streams (and a long script),
// made on the JavaScript thread before the clone, which may then run on another thread.
#pragma once

#include <unistd.h>

#include <string>

#include "binding/args.h"
#include "binding/status.h"

namespace spawn_pipes {

// Pipes for the three streams: child_ends go to the sandbox, parent_ends back to JavaScript.
struct Pipes {
  int child_ends[3] = {-1, -1, -1};
  int parent_ends[3] = {-1, -1, -1};
  int capture_ends[2] = {-1, -1};  // stdout, stderr read by the exit watcher
  int script = -1;  // sealed memfd holding the command's script (fd 4 in the sandbox)
  void CloseChildEnds() {
    for (int& fd : child_ends) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
    if (script >= 0) close(script);
    script = -1;
  }
  void CloseAll() {
    CloseChildEnds();
    for (int& fd : parent_ends) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
    for (int& fd : capture_ends) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }
};

// A small input in a fresh pipe whose writing end is closed: the command reads it, then EOF.
status::Status InputPipe(const std::string& input, int* read_end);

// A long script as a sealed in-memory file (the command's fd 4).
status::Status ScriptFile(const std::string& script, int* fd_out);

// The pipes for three stdio modes; child_fds gets the descriptor each stream uses in the sandbox
// (-1: /dev/null).
status::Status MakePipes(const args::StdioMode* modes, Pipes* pipes, int* child_fds);

}  // namespace spawn_pipes
