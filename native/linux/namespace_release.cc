// SPDX-License-Identifier: MIT
#include "linux/namespace_release.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>

#include "posix/pipe_threads.h"

namespace namespace_release {
namespace {

std::atomic<size_t> pending{0};
// The write end of the closing thread's pipe; -1 when the thread could not be started.
int queue_fd = -1;
std::once_flag started;

// Reads descriptor numbers from the pipe and closes them, for the life of the process.
void* CloseLoop(void* arg) {
  const int read_fd = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  int fds[256];
  for (;;) {
    ssize_t n = read(read_fd, fds, sizeof(fds));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return nullptr;
    // Writes of one int are atomic on a pipe, so reads come in whole ints.
    const size_t count = static_cast<size_t>(n) / sizeof(int);
    for (size_t i = 0; i < count; ++i) close(fds[i]);
    pending.fetch_sub(count);
  }
}

void Start() { queue_fd = pipe_threads::Start(CloseLoop, 1, 64 * 1024); }

}  // namespace

void Release(int fd) {
  if (fd < 0) return;
  std::call_once(started, Start);
  if (queue_fd >= 0) {
    pending.fetch_add(1);
    ssize_t n;
    do {
      n = write(queue_fd, &fd, sizeof(fd));
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof(fd))) return;
    pending.fetch_sub(1);
  }
  close(fd);
}

size_t Pending() { return pending.load(); }

}  // namespace namespace_release
