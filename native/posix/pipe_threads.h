// SPDX-License-Identifier: MIT
// Threads of the addon's own fed through a pipe, for work handed over from the event loop's
// thread without ever waiting for the thread that takes it (linux/namespace_release.h,
// posix/job_threads.h): the hand-over is one non-blocking write, and a write to an empty pipe wakes
// one reader while the writer goes on.
#pragma once

#include <cstddef>

namespace pipe_threads {

// Starts `count` detached threads running `loop` with the pipe's read end (as an intptr_t cast
// to void*), every signal blocked in them, on stacks of `stack_size` bytes. Returns the pipe's
// write end (non-blocking, close-on-exec), or -1 when the pipe or every thread failed.
int Start(void* (*loop)(void*), int count, size_t stack_size);

}  // namespace pipe_threads
