// SPDX-License-Identifier: MIT
// The per-OS backend interface. Each native/<os>/ folder implements these once; no napi here.
// TypeScript builds every field of SpawnSpec; the backend applies it and decides nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "binding/status.h"

namespace backend {

// One measured fact: a capability the probe tried for real.
struct Fact {
  std::string name;
  bool attempted = false;  // false: not tried (a prerequisite failed or not this platform)
  bool ok = false;
  int sys_errno = 0;  // errno of the failing POSIX call when !ok
  // A failed Windows API's own code (a Win32 error or an HRESULT), never stored as an errno: the
  // two overlap (5 is EIO for one and access denied for the other).
  status::Status::WinKind win_kind = status::Status::WinKind::kNone;
  uint32_t win_error = 0;
  std::string syscall;  // which call failed
  long long value = 0;  // numeric result where one exists (e.g. the Landlock ABI)
};

struct ProbeResult {
  std::string platform;  // "linux", "darwin", "win32"
  std::string arch;      // machine name from uname or the OS
  std::string release;   // kernel release / OS version
  long long uid = -1;    // effective uid (-1 where not meaningful)
  std::vector<Fact> facts;
};

// Measures what this machine can enforce by trying each layer in a short-lived child.
status::Status Probe(ProbeResult* out);

// ---- Spawning -------------------------------------------------------------------------------

// One mount operation inside the Linux sandbox's mount namespace, applied in order.
struct MountOp {
  std::string kind;    // see lib/backend/linux/mounts.ts for the vocabulary
  std::string path;    // target path
  std::string source;  // source path where the kind needs one
  std::string data;    // tmpfs: mount options with the size cap ("mode=1777,size=N"), else empty
};

// One Landlock rule: `access` rights beneath `path`. `after_mounts` rules are added by the child
// once its own mounts exist (for example the private /tmp), the rest before the child starts.
struct LandlockRule {
  std::string path;
  uint64_t access = 0;
  bool after_mounts = false;
};

struct ResourceLimit {
  int resource = 0;  // RLIMIT_* number (Linux)
  uint64_t soft = 0;
  uint64_t hard = 0;
};

struct LinuxSpec {
  std::string init_path;    // the zero-sandbox-init helper executable
  bool new_network = true;  // network deny: a private network namespace with lo up
  std::vector<MountOp> mounts;
  int landlock_abi = 0;  // negotiated ABI (>= 1)
  uint64_t landlock_handled_fs = 0;
  uint64_t landlock_scoped = 0;
  std::vector<LandlockRule> landlock_rules;
  std::vector<uint64_t> seccomp_program;  // classic BPF: code<<48 | jt<<40 | jf<<32 | k
  std::vector<ResourceLimit> rlimits;
  // A pids cgroup's cgroup.procs, opened by the caller: the sandbox's first process moves itself
  // there before anything else (the process limit for callers RLIMIT_NPROC exempts). -1: none.
  int cgroup_procs_fd = -1;
  // The PID namespace's own pid_max (0: leave it): the process limit for a root caller without a
  // pids cgroup, on kernels where pid_max is per namespace (the caller checks the version).
  int pid_max = 0;
  // The addon's inotify instance for opens of file masks (-1: none). Set by the addon, not by
  // TypeScript: the sandbox adds one IN_OPEN watch per file mask to it (SpawnResult::mask_wds).
  int mask_watch_fd = -1;
};

struct WindowsSpec {
  std::string container_name;  // AppContainer profile name (per workspace)
  std::string display_name;
  std::vector<std::string> capability_sids;  // none for network deny
  std::string command_line;                  // the full, already quoted command line
  // ACL plan entries: "allow-write|deny-write|deny-read" + path, applied before CreateProcess.
  std::vector<std::string> acl_kinds;
  std::vector<std::string> acl_paths;
  // Set entries again even where present: a run may have stopped while they were propagating.
  bool acl_redo = false;
  uint64_t job_memory_bytes = 0;   // 0: no limit
  uint32_t job_process_limit = 0;  // 0: no limit
};

struct SpawnSpec {
  std::vector<std::string> argv;  // program (looked up on the env's PATH) and arguments
  std::vector<std::string> envp;  // "KEY=value"
  std::string cwd;
  // Child-side standard streams: a descriptor/handle number to install, or -1 for /dev/null.
  int stdio[3] = {-1, -1, -1};
  // Linux prewarm: the init waits on this socket (installed as fd 4) for its one launch message
  // instead of running argv at once (-1: run argv now).
  int control_fd = -1;
  // Linux: a sealed memfd holding a long shell script, installed as fd 4 of the init and so of the
  // command (never with control_fd), so no script has to fit in argv (-1: none). The init leaves
  // it alone; it is gone with the sandbox.
  int script_fd = -1;
  LinuxSpec linux_spec;
  WindowsSpec windows_spec;
};

struct SpawnResult {
  long long pid = -1;      // the sandbox's first process (Linux: pid 1 of the pid namespace)
  int pidfd = -1;          // Linux: pidfd of that process, polled for exit
  int report_fd = -1;      // Linux: read end of the init helper's report pipe
  int net_userns_fd = -1;  // Linux, network deny: the reusable namespace holder it ran in
  int net_netns_fd = -1;
  int template_id = -1;       // Linux: the mount template its mounts were copied from (-1: none)
  std::vector<int> mask_wds;  // Linux: the watch of each file mask, in mount order (-1: none)
  void* process_handle = nullptr;  // Windows: process handle (job object owns the tree)
  void* job_handle = nullptr;      // Windows: job object with kill-on-close
};

// Starts the command confined as the spec says; fails closed with a Status naming the layer.
status::Status Spawn(const SpawnSpec& spec, SpawnResult* out);

}  // namespace backend
