// SPDX-License-Identifier: MIT
#include "posix/pipe_threads.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>

namespace pipe_threads {

int Start(void* (*loop)(void*), int count, size_t stack_size) {
  int ends[2];
#if defined(__linux__)
  if (pipe2(ends, O_CLOEXEC) != 0) return -1;
#else
  // No pipe2 on macOS: close-on-exec set right after (the addon starts no program meanwhile).
  if (pipe(ends) != 0) return -1;
  fcntl(ends[0], F_SETFD, FD_CLOEXEC);
  fcntl(ends[1], F_SETFD, FD_CLOEXEC);
#endif
  // A full pipe fails the write instead of blocking the event loop's thread.
  if (fcntl(ends[1], F_SETFL, O_NONBLOCK) != 0) {
    close(ends[0]);
    close(ends[1]);
    return -1;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, stack_size);
  // The threads take no signal meant for the process.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int running = 0;
  for (int i = 0; i < count; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, loop,
                       reinterpret_cast<void*>(static_cast<intptr_t>(ends[0]))) == 0)
      ++running;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  if (running == 0) {
    close(ends[0]);
    close(ends[1]);
    return -1;
  }
  return ends[1];
}

}  // namespace pipe_threads
