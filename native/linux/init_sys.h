// SPDX-License-Identifier: MIT
// The system calls of zero-sandbox-init. On x86_64 and aarch64 the init is freestanding (no C
// library: it execs in a fraction of the time a glibc program takes to start, once per sandbox),
// so calls are raw instructions and this file supplies the entry point and the few memory helpers
// the compiler may emit. Elsewhere it links the C library and goes through syscall(2).
#pragma once

#include <asm/unistd.h>
#include <stddef.h>
#include <stdint.h>

namespace init_sys {

#if defined(ZS_FREESTANDING) && defined(__x86_64__)

inline long Call(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

#elif defined(ZS_FREESTANDING) && defined(__aarch64__)

inline long Call(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc 0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                   : "memory");
  return x0;
}

#elif defined(ZS_FREESTANDING)
#error "the freestanding init supports x86_64 and aarch64; build without ZS_FREESTANDING elsewhere"
#else

}  // namespace init_sys
#include <errno.h>
#include <unistd.h>
namespace init_sys {

// Through the C library, with the raw calls' convention: a negative errno on failure.
inline long Call(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  long ret = syscall(n, a, b, c, d, e, f);
  return ret < 0 ? -errno : ret;
}

#endif

}  // namespace init_sys

// SYS(name, args...): the system call __NR_name; pointers are passed cast to long.
#define SYS(n, ...) init_sys::Call(__NR_##n, ##__VA_ARGS__)
