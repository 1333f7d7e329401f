// SPDX-License-Identifier: MIT
// Status: how backend code reports failure without throwing; converted to JS in js_errors.cc only.
#pragma once

#include <string>

namespace status {

struct Status {
  // Stable snake_case domain code (mirrors SandboxErrorCode in lib/errors.ts); empty means success.
  std::string code;
  // errno (POSIX) or GetLastError() (Windows), captured on the line after the failing call.
  int sys_errno = 0;
  // The syscall or API that failed, with its key argument, e.g. "open(/proc/self/uid_map)".
  std::string syscall;
  std::string detail;
  std::string path;
  // Which sandbox layer failed (userns, mount, landlock, seccomp, ...), when one did.
  std::string layer;

  bool ok() const { return code.empty(); }
};

inline Status Ok() { return Status{}; }

inline Status Fail(const char* code, int err, std::string syscall, std::string detail = "",
                   std::string layer = "") {
  Status s;
  s.code = code;
  s.sys_errno = err;
  s.syscall = std::move(syscall);
  s.detail = std::move(detail);
  s.layer = std::move(layer);
  return s;
}

}  // namespace status
