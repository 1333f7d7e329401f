// SPDX-License-Identifier: MIT
#include "linux/namespace_release.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>

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

void Start() {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return;
  // The write end never blocks the event loop: a full pipe means the caller closes inline.
  if (fcntl(ends[1], F_SETFL, O_NONBLOCK) != 0) {
    close(ends[0]);
    close(ends[1]);
    return;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  // The thread takes no signal meant for the process.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  const bool ok = pthread_create(&thread, &attr, CloseLoop,
                                 reinterpret_cast<void*>(static_cast<intptr_t>(ends[0]))) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  if (!ok) {
    close(ends[0]);
    close(ends[1]);
    return;
  }
  queue_fd = ends[1];
}

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
