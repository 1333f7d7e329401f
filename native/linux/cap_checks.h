// SPDX-License-Identifier: MIT
// How the init tells that the command ran into a cap the kernel keeps no count of: a size-capped
// tmpfs (the private /tmp or /dev/shm) that is full, and a process cap that is reached. Both read
// the kernel's own state (statfs, a fork's result); nothing the command writes decides them.
//
// Only system calls (init_sys.h): used by the freestanding init.
#pragma once

#include <asm/statfs.h>

#include "linux/init_sys.h"

namespace cap_checks {

constexpr long kSigchld = 17, kEagain = 11, kEintr = 4;

// True when the tmpfs whose root is `fd` is full: no inode left, or free blocks within 1/64 of
// its size and at most 2 MiB (a tmpfs may allocate a large folio at once, so a write can fail with
// a little space left). A tmpfs without a size or inode cap reports zeros and is never full.
inline bool TmpfsFull(int fd) {
  struct statfs st;
  if (SYS(fstatfs, fd, (long)&st) != 0) return false;
  if (st.f_files > 0 && st.f_ffree == 0) return true;
  if (st.f_blocks == 0 || st.f_bsize <= 0) return false;
  unsigned long slack = static_cast<unsigned long>(st.f_blocks) / 64;
  unsigned long most = (2UL << 20) / static_cast<unsigned long>(st.f_bsize);
  return static_cast<unsigned long>(st.f_bfree) <= (slack < most ? slack : most);
}

// One fork whose child exits at once: refused (EAGAIN) when the PID namespace is at its pid_max,
// or the sandbox's user is at RLIMIT_NPROC (counted in the sandbox's own user namespace, where
// the init and the command run as the same user with the same limit). The child is reaped here,
// so the slot it took is free again as soon as possible: a fork of the command refused while the
// probe's child held the last slot leaves one slot free afterwards, which later probes take and
// give back, so such a refusal goes unseen unless the command forks again (as shells and make do
// when a fork is refused). Keeping that window short keeps the miss rare.
inline bool ForkRefused() {
  long pid = SYS(clone, kSigchld, 0, 0, 0, 0);
  if (pid == 0) {
    for (;;) SYS(exit_group, 0);
  }
  if (pid < 0) return pid == -kEagain;
  while (SYS(wait4, pid, 0, 0, 0) == -kEintr) {
  }
  return false;
}

// SIGALRM every `us` microseconds (0: stop): the probe's clock. Forked children do not inherit it.
inline void AlarmEvery(long us) {
  long interval[4] = {0, us, 0, us};  // struct itimerval: it_interval, then it_value
  SYS(setitimer, 0 /* ITIMER_REAL */, (long)interval, 0);
}

}  // namespace cap_checks
