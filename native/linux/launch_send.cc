// SPDX-License-Identifier: MIT
#include "linux/launch_send.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "linux/launch_message.h"

namespace launch_send {
namespace {

// Sends what is left of `iov` after its first `sent` bytes, in as many sends as the socket needs.
bool SendRest(int fd, struct iovec* iov, int count, size_t sent) {
  while (count > 0) {
    if (sent >= iov->iov_len) {
      sent -= iov->iov_len;
      ++iov;
      --count;
      continue;
    }
    iov->iov_base = static_cast<char*>(iov->iov_base) + sent;
    iov->iov_len -= sent;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      sent = 0;
      continue;
    }
    if (n <= 0) return false;
    sent = static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool Send(int socket_fd, const args::ParsedLaunch& launch, const int* fds) {
  size_t payload_len = launch.strings.size();
  if (payload_len > launch_message::kMaxPayload ||
      launch.rlimits.size() > launch_message::kMaxRlimits)
    return false;
  // The header and the limits, packed as the init reads them (no padding between them), in a
  // small buffer of their own; the strings go out from where ParseLaunchSpec copied them.
  launch_message::Header header;
  header.magic = launch_message::kMagic;
  header.argc = launch.argc;
  header.envc = launch.envc;
  header.rlimit_count = static_cast<uint32_t>(launch.rlimits.size());
  header.payload_len = static_cast<uint32_t>(payload_len);
  char head[sizeof header + launch_message::kMaxRlimits * sizeof(launch_message::Rlimit)];
  memcpy(head, &header, sizeof header);
  size_t head_len = sizeof header;
  for (const backend::ResourceLimit& l : launch.rlimits) {
    launch_message::Rlimit record = {static_cast<uint64_t>(l.resource), l.soft, l.hard};
    memcpy(head + head_len, &record, sizeof record);
    head_len += sizeof record;
  }
  struct iovec iov[2] = {{head, head_len}, {const_cast<char*>(launch.strings.data()), payload_len}};
  char cbuf[CMSG_SPACE(3 * sizeof(int))];
  memset(cbuf, 0, sizeof cbuf);
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof cbuf;
  struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(3 * sizeof(int));
  memcpy(CMSG_DATA(cmsg), fds, 3 * sizeof(int));
  ssize_t n;
  do {
    n = sendmsg(socket_fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  // A message larger than the socket buffer goes out in more sends.
  return SendRest(socket_fd, iov, 2, static_cast<size_t>(n));
}

}  // namespace launch_send
