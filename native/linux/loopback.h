// SPDX-License-Identifier: MIT
// Brings the loopback interface of the current network namespace up (a new one starts down).
// Raw system calls only, so it is safe in the post-clone child.
#pragma once

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace loopback {

inline int BringUp() {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  struct ifreq req;
  memset(&req, 0, sizeof req);
  memcpy(req.ifr_name, "lo", 3);
  int rc = ioctl(s, SIOCGIFFLAGS, &req);
  if (rc == 0) {
    req.ifr_flags |= IFF_UP;
    rc = ioctl(s, SIOCSIFFLAGS, &req);
  }
  int saved = errno;
  close(s);
  errno = saved;
  return rc;
}

}  // namespace loopback
