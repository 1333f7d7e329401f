// SPDX-License-Identifier: MIT
// Converts a backend Status into a Napi::Error carrying stable, machine-readable properties.
#include "binding/js_errors.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace js_errors {
namespace {

// "win32 error 5 (Access is denied.)" or "HRESULT 0x80070005 (Access is denied.)".
std::string WindowsError(const status::Status& s) {
  char number[32];
  if (s.win_kind == status::Status::WinKind::kHresult) {
    std::snprintf(number, sizeof number, "HRESULT 0x%08X", static_cast<unsigned>(s.win_error));
  } else {
    std::snprintf(number, sizeof number, "win32 error %u", static_cast<unsigned>(s.win_error));
  }
  std::string out = number;
  if (!s.win_message.empty()) out += " (" + s.win_message + ")";
  return out;
}

}  // namespace

Napi::Error FromStatus(Napi::Env env, const status::Status& s) {
  std::string message = s.syscall.empty() ? std::string("native call") : s.syscall;
  message += " failed";
  if (s.win_kind != status::Status::WinKind::kNone) {
    message += ": " + WindowsError(s);
  } else if (s.sys_errno != 0) {
    message += ": ";
    message += std::strerror(s.sys_errno);
  }
  if (!s.detail.empty()) message += " (" + s.detail + ")";
  Napi::Error error = Napi::Error::New(env, message);
  Napi::Object obj = error.Value();
  obj.Set("code", s.code.empty() ? "internal_error" : s.code);
  if (s.sys_errno != 0) obj.Set("errno", Napi::Number::New(env, s.sys_errno));
  if (s.win_kind == status::Status::WinKind::kWin32)
    obj.Set("win32Error", Napi::Number::New(env, s.win_error));
  if (s.win_kind == status::Status::WinKind::kHresult)
    obj.Set("hresult", Napi::Number::New(env, s.win_error));
  if (!s.syscall.empty()) obj.Set("syscall", s.syscall);
  if (!s.path.empty()) obj.Set("path", s.path);
  if (!s.layer.empty()) obj.Set("layer", s.layer);
  return error;
}

}  // namespace js_errors
