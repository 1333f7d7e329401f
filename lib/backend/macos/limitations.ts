// SPDX-License-Identifier: MIT
// What the seatbelt backend enforces and the honest limits of it, for the loss report.

/** Capabilities the seatbelt profile and runner enforce, with the mechanism of each. */
export const SEATBELT_ENFORCED: ReadonlyArray<{ capability: string; by: string[] }> = [
  { capability: 'writes only inside write roots and the private temp dir', by: ['seatbelt file-write* allow list'] },
  { capability: 'existing .git/hooks, .git/config read-only; .zero and .agents cannot be created', by: ['seatbelt deny rules after the allows'] },
  { capability: "host daemons' Unix sockets (docker.sock, ssh-agent) unreachable, also under network allow", by: ['seatbelt (deny network-outbound (remote unix-socket))'] },
  { capability: "other processes' command lines and environments unreadable", by: ['seatbelt (deny sysctl-read kern.procargs*)'] },
  { capability: 'no keychain access and no application launch outside the sandbox', by: ['seatbelt mach-lookup allow list without SecurityServer, securityd, launchservicesd'] },
  { capability: 'deny-read paths unreadable, not unlinkable, and their parents not renamable', by: ['seatbelt deny file-read*, file-write-unlink'] },
  { capability: 'network deny: no TCP/UDP and no Unix-socket contact, host loopback included', by: ['seatbelt (deny network*)'] },
  { capability: "the user's terminals unreadable and unwritable; pseudo-terminals the command allocates work, and isatty() holds on a terminal it was given", by: ['seatbelt deny of /dev/ttys*, then the com.apple.sandbox.pty extension and file-ioctl on held descriptors'] },
  { capability: 'signals and process inspection limited to the sandbox', by: ['seatbelt (target same-sandbox)'] },
  { capability: 'every process of the command group killed when it ends, times out or is aborted', by: ['process group SIGKILL'] },
  { capability: "no process of the run outlives the after-run check, also one that left the command group (setsid); a run whose processes cannot all be killed within the bound fails with protected_path, unchecked", by: ["the run's mark in the profile (one random path readable, another denied)", 'proc_listpids + sandbox_check, SIGKILL in rounds (proven on the macOS CI runners only)'] },
];

/** What seatbelt cannot do; each line is a difference from the Linux backend. */
export const SEATBELT_LIMITATIONS: readonly string[] = [
  'no loopback inside the sandbox under network deny: seatbelt has no private network namespace, so a test suite that starts its own local server fails',
  "a process that calls setsid() or setpgid() leaves the command group: it is found by the run's profile and killed after the command ends, before the after-run check, but not while the command runs, and a set-user-ID program it starts (another effective uid) is not found that way (macOS has no pid namespace or cgroup)",
  'a fork storm that outlasts the kill rounds after the run (5 s) fails the run with protected_path and leaves its write roots unchecked (Linux ends every process with the pid namespace)',
  'resource limits (cpu seconds, memory, file size, open files, processes) are not available; a run that asks for them is refused',
  'the shared /tmp stays visible read-only; scripts that hard-code /tmp/x cannot write there (TMPDIR is the private directory)',
  'other processes remain listable (ps reads pids and names through sysctl kern.proc); they cannot be signalled, and their command lines and environments cannot be read',
  "a .git/hooks or .git/config that does not exist yet can be created (git init, git clone url .): seatbelt cannot guard a path that does not exist without creating it; the git check of the Linux backend runs once the command group and every process under the run's profile are gone (what host git would run is removed or put back and reported)",
  'under network allow, Unix sockets outside the write roots and the private temp dir are unreachable (docker, ssh-agent, database sockets in /tmp or /var/run): tools that need them fail',
  'git credential-osxkeychain and security find-* fail: the keychain services are out of reach',
  "the per-user temp and cache directories (/var/folders/<x>/<y>/T and C, shared by all the user's programs) are writable, since compilers and Xcode tools write there whatever TMPDIR says: files other programs keep there can be changed",
];
