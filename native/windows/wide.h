// SPDX-License-Identifier: MIT
// UTF-8 (what JavaScript hands us) to UTF-16 (what every Win32 "W" API takes), and back.
#pragma once

#include <windows.h>

#include <string>

namespace wide {

// Converts UTF-8 to UTF-16; invalid input yields an empty string and *ok = false.
inline std::wstring FromUtf8(const std::string& in, bool* ok = nullptr) {
  if (ok != nullptr) *ok = true;
  if (in.empty()) return std::wstring();
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, in.data(), static_cast<int>(in.size()),
                              nullptr, 0);
  if (n <= 0) {
    if (ok != nullptr) *ok = false;
    return std::wstring();
  }
  std::wstring out(static_cast<size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, in.data(), static_cast<int>(in.size()),
                      &out[0], n);
  return out;
}

// Converts UTF-16 to UTF-8 (lossy for unpaired surrogates, which Windows paths may contain).
inline std::string ToUtf8(const std::wstring& in) {
  if (in.empty()) return std::string();
  int n = WideCharToMultiByte(CP_UTF8, 0, in.data(), static_cast<int>(in.size()), nullptr, 0,
                              nullptr, nullptr);
  if (n <= 0) return std::string();
  std::string out(static_cast<size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, in.data(), static_cast<int>(in.size()), &out[0], n, nullptr,
                      nullptr);
  return out;
}

}  // namespace wide
