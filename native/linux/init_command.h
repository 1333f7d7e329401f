// SPDX-License-Identifier: MIT
// The command's side of zero-sandbox-init: the process the init forks sets up the launch's stdio
// and limits, and execs the command with execvp's PATH search. In a prewarmed sandbox it first
// receives the launch message (launch_message.h) on the control socket. System calls only
// (init_sys.h), like the rest of the init: this runs in a fresh process with no C library.
#pragma once

#include <stdint.h>

#include "linux/init_sys.h"
#include "linux/init_wire.h"
#include "linux/launch_message.h"

namespace init_command {

// The errno values the init names (the freestanding build has no <errno.h>).
constexpr int kEnoent = 2, kEintr = 4, kEnoexec = 8, kEchild = 10, kEnomem = 12, kEacces = 13,
              kEnotdir = 20, kEinval = 22, kEproto = 71, kEconnreset = 104;

// The kernel's signal set: one bit per signal, 64 signals.
using Mask = unsigned long;
constexpr int kSigSetmask = 2;

// Writes one record to the report pipe. Best effort and never blocking (the pipe is
// non-blocking): the exit status is what counts, a record only adds detail.
inline void Report(init_wire::ReportType type, int32_t value) {
  init_wire::ReportRecord record = {type, value};
  SYS(write, init_wire::kReportFd, (long)&record, sizeof record);
}

[[noreturn]] inline void Exit(int code) {
  for (;;) SYS(exit_group, code);
}

// What a launch message carries; pointers index into one mapped buffer.
struct Launch {
  char** argv = nullptr;
  char** envp = nullptr;
  const char* cwd = nullptr;
  int stdio[3] = {-1, -1, -1};
  launch_message::Rlimit rlimits[8];
  uint32_t rlimit_count = 0;
};

// Receives the one launch message of a prewarmed sandbox. Returns 0 or an errno.
int ReceiveLaunch(Launch* launch);

// In the forked command: its own process group, the launch's stdio and limits (none when
// `launch` is null), no blocked signals; then the exec. Never returns.
[[noreturn]] void RunCommand(char** command, char** envp, const Launch* launch);

}  // namespace init_command
