// SPDX-License-Identifier: MIT
// The one message a prewarmed sandbox's init receives on fd 4 (a stream socketpair): a Header with
// three stdio descriptors as SCM_RIGHTS, then `rlimit_count` Rlimit records, then `payload_len`
// bytes: argc argv strings, envc environment strings and the cwd, each NUL-terminated.
#pragma once

#include <stdint.h>

namespace launch_message {

constexpr uint32_t kMagic = 0x5a53574d;  // "ZSWM"
constexpr uint32_t kMaxPayload = 16u * 1024 * 1024;
constexpr uint32_t kMaxRlimits = 8;

struct Header {
  uint32_t magic;
  uint32_t argc;
  uint32_t envc;
  uint32_t rlimit_count;
  uint32_t payload_len;
};

struct Rlimit {
  uint64_t resource;
  uint64_t soft;
  uint64_t hard;
};

}  // namespace launch_message
