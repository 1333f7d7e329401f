// SPDX-License-Identifier: MIT
// What the AppContainer backend enforces and the honest limits of it, for the loss report.

/** Capabilities the AppContainer backend enforces, with the mechanism of each. */
export const APPCONTAINER_ENFORCED: ReadonlyArray<{ capability: string; by: string[] }> = [
  { capability: 'writes only inside write roots and the private temp dir', by: ['AppContainer access check', 'allow-write ACEs for the container SID'] },
  { capability: 'existing .git/hooks, .git/config, .zero, .agents and deny-write paths unchangeable', by: ['deny ACEs for the container SID'] },
  { capability: 'deny-read paths unreadable and their parents not renamable', by: ['deny ACEs for the container SID'] },
  { capability: 'network deny: no capability SIDs, so no connection, host loopback included', by: ['AppContainer network isolation (Windows Firewall / WFP)', 'a connection tried from inside a container before the first network-deny run of each process (refused when it gets through)'] },
  { capability: 'every process killed when the command ends, times out or is aborted', by: ['job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE'] },
  { capability: 'no clipboard, desktop switching or window handles outside the job', by: ['job UI restrictions'] },
];

/** What AppContainer cannot do; each line is a difference from the Linux backend. */
export const APPCONTAINER_LIMITATIONS: readonly string[] = [
  'reads are narrower than read-all. Readable: the write roots, extra read roots and private temp dir; what ALL APPLICATION PACKAGES may read (the Windows and Program Files directories); the directories on the command\'s PATH and the directory of node.exe (not a volume root, the user\'s profile or a directory above it); the user\'s .gitconfig and .config\\git\\config; and, for the directories above each root, their attributes only (lstat, realpath, cd; no listing). A tool outside these (a file elsewhere in the user\'s profile) is unreadable unless its directory is an extra read root; a directory whose ACL the user may not change (owned by an administrator) gets no grant',
  '.git/hooks, .git/config, .zero and .agents that do not exist yet cannot be protected by an ACL without creating them; the command can create them, and the git check of the Linux backend removes or puts back what host git would run once the job is empty (walking with node:fs, not handles: it refuses to act through a link or junction, but a run of the same workspace still in flight could swap one in between)',
  'the ACEs of the policy in force stay on the files between its runs (they name only its container SID, including the denies on credential directories); when the policy of a workspace changes, its next run strips the old container\'s ACEs through the journal and deletes its profile, so until then the old grants stay, naming a SID no new run uses; a run of the old policy still in flight in another process then loses its grants and fails; `zero-sandbox state revert-acls` takes every container\'s ACEs off on request',
  'a path whose parent is a symbolic link or junction, or that lies on a mapped drive letter, is refused when its ACL is applied (the resolved path differs); pass the resolved or UNC path',
  'network deny is tried from inside once per process, before its first network-deny run: node.exe in a probe container with no capability SID (the spawn real runs use) connects to a listener on 127.0.0.1 and to 192.0.2.1 (TEST-NET-1). A connection that gets through (or an answer from 192.0.2.1) refuses every network-deny run (sandbox_unavailable), and so does a probe that cannot run; EACCES from 192.0.2.1 with nothing at the listener is the firewall\'s block (isolated); a timeout or no route from 192.0.2.1 is inconclusive and doctor says so: runs go ahead on the container holding no capability SID, the firewall services running and the loopback refusal. It tries TCP over IPv4 from the probe\'s container only: not UDP, IPv6, other addresses, the run\'s own container SID, or requests a service outside the container makes for it (name lookups go through the DNS Client service), and it is not tried again while the process lives',
  'no loopback inside the sandbox under network deny (AppContainer loopback isolation also blocks connections to its own listeners)',
  'no loopback under network allow either: AppContainer loopback isolation blocks connections to 127.0.0.1 and ::1 (local dev servers, test databases) unless an administrator exempts the container (CheckNetIsolation LoopbackExempt)',
  'cpu seconds, file size and open-file limits are not available (a job object limits memory and process count only); a run that asks for them is refused',
];
