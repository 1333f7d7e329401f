// SPDX-License-Identifier: MIT
// Converts a backend Status into a Napi::Error carrying stable, machine-readable properties.
#include "binding/js_errors.h"

#include <cstring>
#include <string>

namespace js_errors {

Napi::Error FromStatus(Napi::Env env, const status::Status& s) {
  std::string message = s.syscall.empty() ? std::string("native call") : s.syscall;
  message += " failed";
  if (s.sys_errno != 0) {
    message += ": ";
    message += std::strerror(s.sys_errno);
  }
  if (!s.detail.empty()) message += " (" + s.detail + ")";
  Napi::Error error = Napi::Error::New(env, message);
  Napi::Object obj = error.Value();
  obj.Set("code", s.code.empty() ? "internal_error" : s.code);
  if (s.sys_errno != 0) obj.Set("errno", Napi::Number::New(env, s.sys_errno));
  if (!s.syscall.empty()) obj.Set("syscall", s.syscall);
  if (!s.path.empty()) obj.Set("path", s.path);
  if (!s.layer.empty()) obj.Set("layer", s.layer);
  return error;
}

}  // namespace js_errors
