// SPDX-License-Identifier: MIT
// Closes the mount namespaces of ended sandboxes off the event loop's thread.
#pragma once

#include <cstddef>

namespace namespace_release {

// Hands `fd` (a mount namespace's descriptor; ownership taken) to the closing thread. Each close
// unmounts what its sandbox mounted and waits for an RCU grace period, so it is not done on the
// event loop's thread. Not the libuv thread pool: a burst's exits hand over hundreds of them, and
// each request there wakes a pool thread through a condition variable whose signal, on a busy
// machine, waits until the thread woken before has run, with the event loop's thread blocked in
// it. Here the hand-over is a non-blocking pipe write that never waits for the closing thread;
// the descriptor is closed at once when the thread or its pipe is unavailable (or full).
void Release(int fd);
// Descriptors handed over and not closed yet (by every environment of the process).
size_t Pending();

}  // namespace namespace_release
