// SPDX-License-Identifier: MIT
// A failed Windows API call as a Status that keeps the API's own error: the Win32 code or HRESULT
// and the system's text for it (FormatMessageW), which js_errors.cc turns into
// "win32 error 5 (Access is denied.)" with a win32Error (or hresult) property.
#pragma once

#include <windows.h>

#include <string>

#include "binding/status.h"

namespace win_error {

// The system's message for a Win32 error code or HRESULT, in UTF-8, without the trailing line
// break; empty when the system has none.
std::string Message(DWORD code);

// `err` as GetLastError() (or an API's returned DWORD) gave it.
status::Status Win32(const char* code, DWORD err, std::string call, std::string detail = "",
                     std::string layer = "");

// `hr` as a COM-style API returned it.
status::Status Hresult(const char* code, HRESULT hr, std::string call, std::string detail = "",
                       std::string layer = "");

}  // namespace win_error
