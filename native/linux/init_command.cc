// SPDX-License-Identifier: MIT
// The command's side of zero-sandbox-init (see init_command.h).
#include "linux/init_command.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>

namespace init_command {

using namespace init_wire;

namespace {

size_t Length(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

// Anonymous mappings, never freed before the init exits. Populated at once: the init fills all of
// each, and one call that maps every page costs about half of a fault per page on some VMs (a long
// command's megabyte of arguments is 256 pages).
void* Alloc(size_t size) {
  long p = SYS(mmap, 0, (long)((size + 4095) & ~size_t{4095}), PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return p < 0 && p > -4096 ? nullptr : reinterpret_cast<void*>(p);
}

// A buffer for the launch's strings. From 512 KiB on (a long command's arguments), in 2 MiB huge
// pages where the kernel gives them (transparent huge pages, on madvise): on VMs that fault each
// fresh page through the hypervisor, a megabyte costs 4-8 ms to fill in 4 KiB pages and about
// 0.1 ms in one huge page. Without huge pages it is filled as any mapping is.
void* AllocStrings(size_t size) {
  constexpr size_t kHuge = size_t{2} << 20;
  if (size < kHuge / 4) return Alloc(size);
  size_t span = (size + kHuge - 1) & ~(kHuge - 1);
  long p = SYS(mmap, 0, (long)(span + kHuge), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
  if (p < 0 && p > -4096) return nullptr;
  long aligned = (p + (long)kHuge - 1) & ~(long)(kHuge - 1);
  SYS(madvise, aligned, (long)span, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

bool ReadFull(int fd, void* buf, size_t len) {
  char* p = static_cast<char*>(buf);
  while (len > 0) {
    long n = SYS(read, fd, (long)p, (long)len);
    if (n == -kEintr) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// The first NUL in [p, end), or `end`: eight bytes a step where aligned (a command's arguments
// can be megabytes long).
char* EndOfString(char* p, char* end) {
  while (p < end && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    if (*p == '\0') return p;
    ++p;
  }
  typedef uint64_t __attribute__((may_alias)) Word;  // read through a char buffer
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  while (end - p >= 8) {
    uint64_t word = *reinterpret_cast<const Word*>(p);
    if (((word - kOnes) & ~word & kHighs) != 0) break;  // a zero byte in this word
    p += 8;
  }
  while (p < end && *p != '\0') ++p;
  return p;
}

// Splits `count` NUL-terminated strings out of [cursor, end) into a NULL-terminated vector.
char** SplitStrings(char** cursor, char* end, uint32_t count) {
  char** out = static_cast<char**>(Alloc((count + 1) * sizeof(char*)));
  if (out == nullptr) return nullptr;
  for (uint32_t i = 0; i < count; ++i) {
    if (*cursor >= end) return nullptr;
    out[i] = *cursor;
    char* p = EndOfString(*cursor, end);
    if (p >= end) return nullptr;
    *cursor = p + 1;
  }
  out[count] = nullptr;
  return out;
}

// execve, and for a file the kernel cannot execute (no #! line), /bin/sh FILE ARGS as execvp does.
int Exec(const char* path, char** argv, char** envp) {
  long err = -SYS(execve, (long)path, (long)argv, (long)envp);
  if (err != kEnoexec) return static_cast<int>(err);
  size_t argc = 0;
  while (argv[argc] != nullptr) ++argc;
  char** shell = static_cast<char**>(Alloc((argc + 2) * sizeof(char*)));
  if (shell == nullptr) return kEnomem;
  shell[0] = const_cast<char*>("/bin/sh");
  shell[1] = const_cast<char*>(path);
  for (size_t i = 1; i <= argc; ++i) shell[i + 1] = argv[i];
  SYS(execve, (long)"/bin/sh", (long)shell, (long)envp);
  return kEnoexec;
}

// execvp's search: a name with a slash is a path; otherwise each PATH entry (default
// /bin:/usr/bin), remembering EACCES, skipping entries that do not hold the file.
int ExecSearch(char** argv, char** envp) {
  const char* file = argv[0];
  for (const char* p = file; *p != '\0'; ++p) {
    if (*p == '/') return Exec(file, argv, envp);
  }
  const char* path = "/bin:/usr/bin";
  for (char** e = envp; *e != nullptr; ++e) {
    const char* v = *e;
    if (v[0] == 'P' && v[1] == 'A' && v[2] == 'T' && v[3] == 'H' && v[4] == '=') path = v + 5;
  }
  size_t file_len = Length(file);
  char buf[4096];
  bool denied = false;
  for (const char* dir = path;;) {
    const char* stop = dir;
    while (*stop != '\0' && *stop != ':') ++stop;
    size_t dir_len = static_cast<size_t>(stop - dir);
    if (dir_len + 1 + file_len < sizeof buf) {
      size_t n = 0;
      if (dir_len == 0) buf[n++] = '.';  // an empty entry is the current directory
      for (size_t i = 0; i < dir_len; ++i) buf[n++] = dir[i];
      buf[n++] = '/';
      for (size_t i = 0; i <= file_len; ++i) buf[n++] = file[i];
      int err = Exec(buf, argv, envp);
      if (err == kEacces)
        denied = true;
      else if (err != kEnoent && err != kEnotdir && err != 116 /*ESTALE*/ && err != 19 /*ENODEV*/ &&
               err != 110 /*ETIMEDOUT*/)
        return err;
    }
    if (*stop == '\0') break;
    dir = stop + 1;
  }
  return denied ? kEacces : kEnoent;
}

}  // namespace

int ReceiveLaunch(Launch* launch) {
  launch_message::Header header;
  struct iovec iov = {&header, sizeof header};
  alignas(struct cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))];
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  long n;
  do {
    n = SYS(recvmsg, kControlFd, (long)&msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n == -kEintr);
  if (n != static_cast<long>(sizeof header))
    return n == 0 ? kEconnreset : (n < 0 ? static_cast<int>(-n) : kEproto);
  if (header.magic != launch_message::kMagic || header.payload_len > launch_message::kMaxPayload ||
      header.rlimit_count > launch_message::kMaxRlimits || header.argc == 0) {
    return kEproto;
  }
  struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  if (cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS ||
      cmsg->cmsg_len != CMSG_LEN(3 * sizeof(int))) {
    return kEproto;
  }
  const int* fds = reinterpret_cast<const int*>(CMSG_DATA(cmsg));
  for (int i = 0; i < 3; ++i) launch->stdio[i] = fds[i];
  if (!ReadFull(kControlFd, launch->rlimits, header.rlimit_count * sizeof(launch_message::Rlimit)))
    return kEproto;
  launch->rlimit_count = header.rlimit_count;
  char* payload = static_cast<char*>(AllocStrings(header.payload_len + 1));
  if (payload == nullptr) return kEnomem;
  if (!ReadFull(kControlFd, payload, header.payload_len)) return kEproto;
  payload[header.payload_len] = '\0';
  char* cursor = payload;
  char* end = payload + header.payload_len;
  launch->argv = SplitStrings(&cursor, end, header.argc);
  launch->envp = SplitStrings(&cursor, end, header.envc);
  if (launch->argv == nullptr || launch->envp == nullptr || cursor >= end) return kEproto;
  launch->cwd = cursor;
  return 0;
}

void RunCommand(char** command, char** envp, const Launch* launch) {
  SYS(setpgid, 0, 0);
  SYS(fcntl, kReportFd, F_SETFD, FD_CLOEXEC);
  if (launch != nullptr) {
    long high[3];
    for (int i = 0; i < 3; ++i) high[i] = SYS(fcntl, launch->stdio[i], F_DUPFD_CLOEXEC, 10);
    for (int i = 0; i < 3; ++i) {
      long r = high[i] < 0 ? high[i] : SYS(dup3, high[i], i, 0);
      if (r < 0) {
        Report(kReportExecFailed, static_cast<int32_t>(-r));
        Exit(125);
      }
    }
    for (uint32_t i = 0; i < launch->rlimit_count; ++i) {
      uint64_t value[2] = {launch->rlimits[i].soft, launch->rlimits[i].hard};
      long r = SYS(prlimit64, 0, (long)launch->rlimits[i].resource, (long)value, 0);
      if (r < 0) {
        Report(kReportExecFailed, static_cast<int32_t>(-r));
        Exit(125);
      }
    }
  }
  Mask none = 0;
  SYS(rt_sigprocmask, kSigSetmask, (long)&none, 0, sizeof none);
  int err = ExecSearch(command, envp);
  Report(kReportExecFailed, err);
  Exit(err == kEnoent ? 127 : 126);
}

}  // namespace init_command
