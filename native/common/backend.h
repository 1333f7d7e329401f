// SPDX-License-Identifier: MIT
// The per-OS backend interface. Each native/<os>/ folder implements these once; no napi here.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace backend {

// One measured fact: a capability the probe tried for real.
struct Fact {
  std::string name;
  bool attempted = false;  // false: not tried (a prerequisite failed or not this platform)
  bool ok = false;
  int sys_errno = 0;       // errno of the failing call when !ok
  std::string syscall;     // which call failed
  long long value = 0;     // numeric result where one exists (e.g. the Landlock ABI)
};

struct ProbeResult {
  std::string platform;    // "linux", "darwin", "win32"
  std::string arch;        // machine name from uname or the OS
  std::string release;     // kernel release / OS version
  long long uid = -1;      // effective uid (-1 where not meaningful)
  std::vector<Fact> facts;
};

// Measures what this machine can enforce by trying each layer in a short-lived child.
status::Status Probe(ProbeResult* out);

}  // namespace backend
