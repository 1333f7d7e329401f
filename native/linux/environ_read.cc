// SPDX-License-Identifier: MIT
#include "linux/environ_read.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <unordered_set>

extern char** environ;

namespace environ_read {
namespace {

// Strict UTF-8, as V8 decodes it: no overlong forms, no surrogates, nothing above U+10FFFF.
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t extra;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (s.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; k++) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return false;
    }
    i += extra + 1;
  }
  return true;
}

Napi::Value Read(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (syscall(SYS_gettid) != getpid()) return env.Null();
  // Copied out in one walk and converted after it. The names seen point into the environment's
  // own strings, which the main thread's process.env changes on this thread only. A worker given
  // SHARE_ENV writes the same environment from its own thread: a race every getenv made outside
  // Node's lock (libc's own, libuv's) has as well.
  std::unordered_set<std::string_view> seen;
  std::string out;
  for (char** e = environ; e != nullptr && *e != nullptr; e++) {
    const std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    const std::string_view name = entry.substr(0, eq);
    if (!ValidUtf8(name) || !seen.insert(name).second) continue;
    if (!out.empty()) out.push_back('\0');
    out.append(entry);
    out[out.size() - entry.size() + eq] = '\0';
  }
  // One string (no name or value holds a NUL): one conversion, not two per variable. Decoding it
  // whole gives what decoding each part would, as a NUL ends any unfinished UTF-8 sequence.
  return Napi::String::New(env, out.data(), out.size());
}

}  // namespace

void Export(Napi::Env env, Napi::Object exports) {
  exports.Set("environ", Napi::Function::New(env, Read, "environ"));
}

}  // namespace environ_read
