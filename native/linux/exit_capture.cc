// SPDX-License-Identifier: MIT
// The capture of a watched sandbox's stdout and stderr: each pipe polled by libuv and read into
// its buffer (capped at maxBuffer, or the sandbox killed at the cap), closed with its watch.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/exit_watcher.h"
#include "linux/kernel_compat.h"

namespace exit_watcher {

void Registry::StartCapture(Watch* watch, const int* fds, double max_buffer, bool overflow_kill,
                            int spill_fd) {
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env_, &loop);
  watch->max_buffer = max_buffer;
  watch->overflow_kill = overflow_kill;
  for (int i = 0; i < 2; ++i) {
    if (fds[i] < 0) continue;
    Capture* capture = &watch->captures[i];
    capture->watch = watch;
    capture->fd = fds[i];
    capture->eof = false;
    capture->buffer.SetCap(overflow_kill ? 0 : static_cast<size_t>(max_buffer));
    if (spill_fd >= 0) capture->buffer.SetSpill(fcntl(spill_fd, F_DUPFD_CLOEXEC, 3));
    fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    uv_poll_init(loop, &capture->poll, fds[i]);
    capture->poll.data = capture;
    ++watch->open_handles;
    uv_poll_start(&capture->poll, UV_READABLE, OnCapture);
  }
}

void Registry::DrainCapture(Watch* watch, Capture* capture) {
  char buf[65536];
  while (!capture->eof) {
    ssize_t n = read(capture->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      capture->eof = true;  // EOF, or a read error that ends the stream all the same
      uv_poll_stop(&capture->poll);
      return;
    }
    if (watch->overflow != 0) continue;  // the sandbox is being killed: discard the rest
    if (watch->overflow_kill && watch->max_buffer > 0 &&
        capture->buffer.total() + n > watch->max_buffer) {
      watch->overflow = capture == &watch->captures[0] ? 1 : 2;
      syscall(SYS_pidfd_send_signal, watch->pidfd, SIGKILL, nullptr, 0);
      continue;
    }
    capture->buffer.Append(buf, static_cast<size_t>(n));
  }
}

void Registry::CloseCaptures(Watch* watch) {
  for (Capture& capture : watch->captures) {
    if (capture.fd < 0) continue;
    uv_poll_stop(&capture.poll);
    close(capture.fd);
    capture.fd = -1;
    capture.buffer.Clear();
    uv_close(reinterpret_cast<uv_handle_t*>(&capture.poll), OnCaptureClosed);
  }
}

void Registry::OnCapture(uv_poll_t* handle, int, int) {
  Capture* capture = static_cast<Capture*>(handle->data);
  capture->watch->registry->DrainCapture(capture->watch, capture);
}

void Registry::OnCaptureClosed(uv_handle_t* handle) {
  Release(static_cast<Capture*>(handle->data)->watch);
}

}  // namespace exit_watcher
