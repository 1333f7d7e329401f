// SPDX-License-Identifier: MIT
// Status: how backend code reports failure without throwing; converted to JS in js_errors.cc only.
#pragma once

#include <stdint.h>

#include <string>

namespace status {

struct Status {
  // Stable snake_case domain code (mirrors SandboxErrorCode in lib/errors.ts); empty means success.
  std::string code;
  // errno of a failed POSIX call, captured on the line after the failing call.
  int sys_errno = 0;
  // A failed Windows API's own error, kept as what it is (native/windows/win_error.h): a Win32
  // error code (GetLastError() or a returned DWORD) or an HRESULT, with the system's text for it.
  // Win32 codes and errno values overlap (5 is EIO for one and access denied for the other), so a
  // Windows error is never stored as an errno.
  enum class WinKind { kNone, kWin32, kHresult };
  WinKind win_kind = WinKind::kNone;
  uint32_t win_error = 0;
  std::string win_message;
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
