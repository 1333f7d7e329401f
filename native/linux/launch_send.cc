// SPDX-License-Identifier: MIT
#include "linux/launch_send.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <string>

#include "linux/launch_message.h"

namespace launch_send {
namespace {

bool SendAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool Send(int socket_fd, const args::ParsedLaunch& launch, const int* fds) {
  launch_message::Header header;
  header.magic = launch_message::kMagic;
  header.argc = static_cast<uint32_t>(launch.argv.size());
  header.envc = static_cast<uint32_t>(launch.envp.size());
  header.rlimit_count = static_cast<uint32_t>(launch.rlimits.size());
  size_t payload_len = launch.cwd.size() + 1;
  for (const std::string& arg : launch.argv) payload_len += arg.size() + 1;
  for (const std::string& var : launch.envp) payload_len += var.size() + 1;
  if (payload_len > launch_message::kMaxPayload) return false;
  header.payload_len = static_cast<uint32_t>(payload_len);
  std::string message(reinterpret_cast<const char*>(&header), sizeof header);
  message.reserve(sizeof header + launch.rlimits.size() * sizeof(launch_message::Rlimit) +
                  payload_len);
  for (const backend::ResourceLimit& l : launch.rlimits) {
    launch_message::Rlimit record = {static_cast<uint64_t>(l.resource), l.soft, l.hard};
    message.append(reinterpret_cast<const char*>(&record), sizeof record);
  }
  for (const std::string& arg : launch.argv) message.append(arg).push_back('\0');
  for (const std::string& var : launch.envp) message.append(var).push_back('\0');
  message.append(launch.cwd).push_back('\0');

  struct iovec iov = {message.data(), message.size()};
  char cbuf[CMSG_SPACE(3 * sizeof(int))];
  memset(cbuf, 0, sizeof cbuf);
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
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
  return SendAll(socket_fd, message.data() + n, message.size() - static_cast<size_t>(n));
}

}  // namespace launch_send
