// SPDX-License-Identifier: MIT
// Stdio pipes, small inputs and the sealed script file of a Linux spawn (see spawn_pipes.h).
#include "linux/spawn_pipes.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace spawn_pipes {

// Writes a small input into a fresh pipe and closes the writing end: the command reads the bytes,
// then EOF. The input fits in one page, which a pipe always holds without a reader.
status::Status InputPipe(const std::string& input, int* read_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    return status::Fail("spawn_failed", errno, "pipe2(stdin)");
  size_t done = 0;
  while (done < input.size()) {
    ssize_t n = write(fds[1], input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fds[0]);
      close(fds[1]);
      return status::Fail("spawn_failed", err, "write(stdin input)");
    }
    done += static_cast<size_t>(n);
  }
  close(fds[1]);
  // The command gets an ordinary blocking pipe.
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) & ~O_NONBLOCK);
  *read_end = fds[0];
  return status::Ok();
}

// A long script as a sealed in-memory file: the shell reads it like a regular file (buffered and
// seekable; from a pipe bash reads one byte per system call), nothing of it is on the host's disk,
// and the seals keep anyone from changing it.
status::Status ScriptFile(const std::string& script, int* fd_out) {
  int fd = static_cast<int>(
      syscall(SYS_memfd_create, "zero-sandbox-script", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd < 0) return status::Fail("spawn_failed", errno, "memfd_create(script)");
  size_t done = 0;
  while (done < script.size()) {
    ssize_t n = write(fd, script.data() + done, script.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      return status::Fail("spawn_failed", err, "write(script)");
    }
    done += static_cast<size_t>(n);
  }
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
      lseek(fd, 0, SEEK_SET) != 0) {
    int err = errno;
    close(fd);
    return status::Fail("spawn_failed", err, "seal(script)");
  }
  *fd_out = fd;
  return status::Ok();
}

status::Status MakePipes(const args::StdioMode* modes, Pipes* pipes, int* child_fds) {
  for (int i = 0; i < 3; ++i) {
    const args::StdioMode& mode = modes[i];
    child_fds[i] = -1;
    if (mode.kind == args::StdioMode::kFd) {
      child_fds[i] = mode.fd;
    } else if (mode.kind == args::StdioMode::kInput) {
      status::Status s = InputPipe(mode.input, &pipes->child_ends[i]);
      if (!s.ok()) return s;
      child_fds[i] = pipes->child_ends[i];
    } else if (mode.kind == args::StdioMode::kPipe || mode.kind == args::StdioMode::kCapture) {
      int fds[2];
      if (pipe2(fds, O_CLOEXEC) != 0) return status::Fail("spawn_failed", errno, "pipe2(stdio)");
      // stdin: the child reads; stdout/stderr: the child writes.
      pipes->child_ends[i] = i == 0 ? fds[0] : fds[1];
      int& ours = (i > 0 && mode.kind == args::StdioMode::kCapture) ? pipes->capture_ends[i - 1]
                                                                    : pipes->parent_ends[i];
      ours = i == 0 ? fds[1] : fds[0];
      child_fds[i] = pipes->child_ends[i];
    }
  }
  return status::Ok();
}

}  // namespace spawn_pipes
