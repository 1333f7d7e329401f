// SPDX-License-Identifier: MIT
// Paths cross between JavaScript and the file verbs as byte strings: each JS char code 0-255 is one
// byte (lib/sandbox/beneath.ts converts), so any name a file system holds round-trips. Shared by
// the glue of every OS's walks (fs_verbs_glue.cc) and of the POSIX scan (posix/fs_glue_posix.cc).
#pragma once

#include <napi.h>

#include <string>

namespace byte_strings {

// False when `value` is not a string of char codes 0-255.
inline bool Bytes(const Napi::Value& value, std::string* out) {
  if (!value.IsString()) return false;
  std::u16string wide = value.As<Napi::String>().Utf16Value();
  out->clear();
  out->reserve(wide.size());
  for (char16_t c : wide) {
    if (c > 0xFF) return false;
    out->push_back(static_cast<char>(c));
  }
  return true;
}

inline Napi::String FromBytes(Napi::Env env, const std::string& bytes) {
  std::u16string wide;
  wide.reserve(bytes.size());
  for (char c : bytes) wide.push_back(static_cast<char16_t>(static_cast<unsigned char>(c)));
  return Napi::String::New(env, wide);
}

}  // namespace byte_strings
