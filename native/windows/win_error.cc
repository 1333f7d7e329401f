// SPDX-License-Identifier: MIT
// Win32 errors and HRESULTs kept as such (see win_error.h).
#include "windows/win_error.h"

#include "windows/wide.h"

namespace win_error {

std::string Message(DWORD code) {
  wchar_t* buffer = nullptr;
  // FORMAT_MESSAGE_IGNORE_INSERTS: a message with %1-style inserts is returned as written, since
  // we have no arguments for it. Neutral language: the system's default for this user.
  DWORD n = FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
      nullptr, code, 0, reinterpret_cast<wchar_t*>(&buffer), 0, nullptr);
  if (n == 0 || buffer == nullptr) return std::string();
  std::wstring text(buffer, n);
  LocalFree(buffer);
  while (!text.empty() && (text.back() == L'\r' || text.back() == L'\n' || text.back() == L' ')) {
    text.pop_back();
  }
  return wide::ToUtf8(text);
}

namespace {

status::Status Make(const char* code, status::Status::WinKind kind, DWORD value, std::string call,
                    std::string detail, std::string layer) {
  status::Status s = status::Fail(code, 0, std::move(call), std::move(detail), std::move(layer));
  s.win_kind = kind;
  s.win_error = value;
  s.win_message = Message(value);
  return s;
}

}  // namespace

status::Status Win32(const char* code, DWORD err, std::string call, std::string detail,
                     std::string layer) {
  return Make(code, status::Status::WinKind::kWin32, err, std::move(call), std::move(detail),
              std::move(layer));
}

status::Status Hresult(const char* code, HRESULT hr, std::string call, std::string detail,
                       std::string layer) {
  return Make(code, status::Status::WinKind::kHresult, static_cast<DWORD>(hr), std::move(call),
              std::move(detail), std::move(layer));
}

}  // namespace win_error
