// SPDX-License-Identifier: MIT
// The launch of a prewarmed sandbox: its command, environment, limits and three stream
// descriptors, sent to the init waiting on the launch socket (wire format: linux/launch_message.h).
#pragma once

#include "binding/args.h"

namespace launch_send {

// Sends the launch message: header and limits, then the strings from launch.strings itself, with
// the three descriptors attached to its first byte. One sendmsg wakes the waiting command process
// once. False when the message is too large or the socket refused it.
bool Send(int socket_fd, const args::ParsedLaunch& launch, const int* fds);

}  // namespace launch_send
