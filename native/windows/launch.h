// SPDX-License-Identifier: MIT
// Starting one process inside an AppContainer and a kill-on-close job object, stdio only inherited.
#pragma once

#include <windows.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binding/status.h"

namespace launch {

struct Request {
  std::string command_line;       // full, already quoted (lib/backend/windows/command-line.ts)
  std::string cwd;                // empty: inherit
  std::vector<std::string> envp;  // "KEY=value", already sorted by TypeScript
  // HANDLE values to install as stdin/stdout/stderr, or -1 for the NUL device.
  long long stdio[3] = {-1, -1, -1};
  uint64_t job_memory_bytes = 0;   // 0: no limit
  uint32_t job_process_limit = 0;  // 0: no limit
};

struct Launched {
  DWORD pid = 0;
  HANDLE process = nullptr;  // caller closes
  HANDLE job = nullptr;      // caller closes; closing it kills every process in the job
};

// Creates the job, starts the process suspended with the security capabilities, assigns it to
// the job and only then resumes it, so no instruction runs outside the job.
status::Status Launch(const Request& request, SECURITY_CAPABILITIES* capabilities, Launched* out);

// Creates a job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, UI restrictions and the limits.
status::Status CreateKillOnCloseJob(uint64_t memory_bytes, uint32_t process_limit, HANDLE* out);

}  // namespace launch
