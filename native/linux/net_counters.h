// SPDX-License-Identifier: MIT
// How many packets the sandbox's network namespace had no route for: the IPv4 and IPv6
// OutNoRoutes counters of /proc/self/net/snmp and /proc/self/net/snmp6. With the network denied
// the namespace has loopback only, so every connect or send to an address outside it (and every
// name lookup sent to a resolver that is not on loopback) fails with ENETUNREACH and counts here,
// while loopback traffic inside the sandbox does not. The init reads the counters before the
// command starts and after every process of the sandbox is gone; the difference is what the
// command tried. That is a count the kernel keeps, not output text; it says neither which address
// nor which program (the namespace may be a reused one, hence the difference).
//
// Only system calls (init_sys.h): used by the freestanding init.
#pragma once

#include <fcntl.h>

#include "linux/init_sys.h"

namespace net_counters {

constexpr long kBufferSize = 8192;  // snmp is ~1.5 KB, snmp6 ~4 KB

// Reads a /proc file whole into `buf` (NUL-terminated); its length, or -1 (missing, unreadable or
// larger than the buffer).
inline long ReadWhole(const char* path, char* buf) {
  long fd = SYS(openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  long used = 0;
  for (;;) {
    long n = SYS(read, fd, (long)(buf + used), kBufferSize - 1 - used);
    if (n == -4 /* EINTR */) continue;
    if (n < 0 || used + n >= kBufferSize - 1) used = -1;
    if (n <= 0 || used < 0) break;
    used += n;
  }
  SYS(close, fd);
  if (used >= 0) buf[used] = '\0';
  return used;
}

inline bool StartsWith(const char* s, const char* prefix) {
  while (*prefix != '\0' && *s == *prefix) ++s, ++prefix;
  return *prefix == '\0';
}

inline const char* NextLine(const char* s) {
  while (*s != '\0' && *s != '\n') ++s;
  return *s == '\n' ? s + 1 : s;
}

inline const char* SkipBlanks(const char* s) {
  while (*s == ' ' || *s == '\t') ++s;
  return s;
}

// The decimal number at `s`, or -1.
inline long Number(const char* s) {
  if (*s < '0' || *s > '9') return -1;
  long value = 0;
  for (; *s >= '0' && *s <= '9'; ++s) {
    if (value > (1L << 52)) return -1;
    value = value * 10 + (*s - '0');
  }
  return value;
}

// snmp: a header line "Ip: Forwarding DefaultTTL ... OutNoRoutes ..." then "Ip: 2 64 ...".
inline long Ipv4NoRoutes(const char* text) {
  const char* header = text;
  while (*header != '\0' && !StartsWith(header, "Ip: ")) header = NextLine(header);
  if (*header == '\0') return -1;
  const char* values = NextLine(header);
  if (!StartsWith(values, "Ip: ")) return -1;
  const char* name = SkipBlanks(header + 4);
  const char* value = SkipBlanks(values + 4);
  while (*name != '\0' && *name != '\n') {
    bool match = StartsWith(name, "OutNoRoutes") &&
                 (name[11] == ' ' || name[11] == '\n' || name[11] == '\0');
    if (match) return Number(value);
    while (*name != ' ' && *name != '\n' && *name != '\0') ++name;
    while (*value != ' ' && *value != '\n' && *value != '\0') ++value;
    name = SkipBlanks(name);
    value = SkipBlanks(value);
  }
  return -1;
}

// snmp6: one "Name value" line per counter.
inline long Ipv6NoRoutes(const char* text) {
  for (const char* line = text; *line != '\0'; line = NextLine(line)) {
    if (StartsWith(line, "Ip6OutNoRoutes ") || StartsWith(line, "Ip6OutNoRoutes\t"))
      return Number(SkipBlanks(line + 14));
  }
  return -1;
}

// The sum of both counters, or -1 when the IPv4 one cannot be read (IPv6 may be absent).
inline long NoRoutes() {
  char buf[kBufferSize];
  if (ReadWhole("/proc/self/net/snmp", buf) < 0) return -1;
  long total = Ipv4NoRoutes(buf);
  if (total < 0) return -1;
  if (ReadWhole("/proc/self/net/snmp6", buf) >= 0) {
    long v6 = Ipv6NoRoutes(buf);
    if (v6 > 0) total += v6;
  }
  return total;
}

}  // namespace net_counters
