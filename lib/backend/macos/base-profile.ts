// SPDX-License-Identifier: MIT
// The static part of the seatbelt profile: deny-default plus the allowances every command needs,
// each with a `;` comment saying why. Plan-specific rules are appended by profile.ts.

/**
 * The fixed SBPL prologue. It contains no plan-dependent path: every workspace, temp, deny-read
 * or deny-write path is added later as a `(param "...")` reference, never spliced into the text.
 * Semantics: seatbelt is last-match-wins, so the later plan rules (denies) override these allows.
 */
export const SEATBELT_BASE_PROFILE = `(version 1)
; Nothing is allowed unless a rule below allows it.
(deny default)

; Running programs is what a shell command does.
(allow process-exec)
; Pipelines, subshells and build tools fork.
(allow process-fork)
; Signals only inside this sandbox: a command cannot signal the caller or any other process of
; the user.
(allow signal (target same-sandbox))
; Process inspection (ps, job control) likewise only inside this sandbox.
(allow process-info* (target same-sandbox))
; Task ports (task_for_pid: debuggers, profilers, crash reporters) of this sandbox's processes only.
(allow mach-priv-task-port (target same-sandbox))

; libc, the Objective-C runtime and most tools read kernel parameters (hw.ncpu, kern.osrelease).
(allow sysctl-read)
; ...but not other processes' argument and environment blocks (kern.procargs2 is what ps -E reads):
; the environment of the user's other programs holds the secrets the scrubbed environment removed.
(deny sysctl-read (sysctl-name-prefix "kern.procargs"))
; Rosetta and universal binaries set the preferred CPU type for their children.
(allow sysctl-write (sysctl-name "kern.grade_cputype"))
; Power-management queries made by Foundation at start-up.
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))

; POSIX semaphores, used by Python multiprocessing and many build tools.
(allow ipc-posix-sem)
; cfprefsd shares preference data through named shared memory.
(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))
; The notification center's shared state, read by notify(3) clients (libc's time-zone cache).
(allow ipc-posix-shm-read* (ipc-posix-name "apple.shm.notification_center"))
; OpenMP runtimes (numpy, compilers) register themselves in shared memory (libomp opens
; "/__KMP_REGISTERED_LIB_<pid>": the name includes the slash).
(allow ipc-posix-shm-read* ipc-posix-shm-write-create ipc-posix-shm-write-data ipc-posix-shm-write-unlink
  (ipc-posix-name-prefix "/__KMP_REGISTERED_LIB_"))
; Python's multiprocessing.shared_memory ("/psm_<random>"): segments the command's processes share.
; No other name: segments of the user's other programs are not the command's to read or change.
(allow ipc-posix-shm-read* ipc-posix-shm-write-create ipc-posix-shm-write-data ipc-posix-shm-write-unlink
  (ipc-posix-name-prefix "/psm_"))
; Reading user defaults (NSUserDefaults) is needed by almost every Apple tool.
(allow user-preference-read)

; Pseudo-terminals are not here: profile.ts adds them after the read roots, together with the
; deny of the user's terminals that read-all would otherwise reach.

; Directory services: user and group lookups (getpwuid, id, whoami).
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))
; Group membership checks.
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.membership"))
; Unified logging from system libraries.
(allow mach-lookup (global-name "com.apple.system.logger"))
; Unified logging from system libraries (newer releases).
(allow mach-lookup (global-name "com.apple.logd"))
; The preferences daemon (system domain).
(allow mach-lookup (global-name "com.apple.cfprefsd.daemon"))
; The preferences daemon (user domain).
(allow mach-lookup (global-name "com.apple.cfprefsd.agent"))
; Certificate trust evaluation used by TLS clients.
(allow mach-lookup (global-name "com.apple.trustd.agent"))
; Directory services API, used by dscl-based lookups and some installers.
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.api"))
; Certificate trust evaluation (system daemon side).
(allow mach-lookup (global-name "com.apple.trustd"))
; Network configuration reads (proxy settings); no network access by itself.
(allow mach-lookup (global-name "com.apple.SystemConfiguration.configd"))
; Resolver configuration, read by getaddrinfo even for localhost names.
(allow mach-lookup (global-name "com.apple.SystemConfiguration.DNSConfiguration"))
; Launch Services database, read by tools that resolve bundles.
(allow mach-lookup (global-name "com.apple.lsd.mapdb"))
; Darwin notifications (notify_register_*), used by libc time-zone and preference caches.
(allow mach-lookup (global-name "com.apple.system.notification_center"))
; The per-user temp and cache directories (confstr DARWIN_USER_TEMP_DIR, used by clang, xcrun,
; Swift) are created on first use through this helper.
(allow mach-lookup (global-name "com.apple.bsd.dirhelper"))
; File-system event streams: the watchers of build tools and test runners (FSEvents API).
(allow mach-lookup (global-name "com.apple.FSEvents"))
; Deliberately absent: com.apple.pasteboard.1 (the clipboard is a way out and a way in).
; Deliberately absent: com.apple.SecurityServer and com.apple.securityd.xpc (security
; find-generic-password and git credential-osxkeychain would read the user's keychain items).
; Deliberately absent: com.apple.coreservices.launchservicesd (open -a would start an
; application outside the sandbox).

; Executable mappings: system frameworks and libraries.
(allow file-map-executable (subpath "/System/Library") (subpath "/usr/lib"))
; Executable mappings: the dyld shared cache, kept in the OS cryptex since macOS 13.
(allow file-map-executable (subpath "/System/Volumes/Preboot/Cryptexes"))
; Executable mappings: dylibs of tools installed by Homebrew or into /usr/local.
(allow file-map-executable (subpath "/opt/homebrew") (subpath "/usr/local"))
; Executable mappings: developer tools (the compiler toolchain and its libraries).
(allow file-map-executable (subpath "/Library/Developer") (subpath "/Applications/Xcode.app"))
; Tools stat every directory above /opt/homebrew and /usr/local while resolving their prefix.
(allow file-read-metadata (path-ancestors "/opt/homebrew") (path-ancestors "/usr/local"))

; Platform read roots, so the system works even when the plan's read roots are narrower than /.
(allow file-read* (subpath "/bin") (subpath "/sbin") (subpath "/usr") (subpath "/System")
  (subpath "/Library") (subpath "/Applications") (subpath "/opt/homebrew")
  (subpath "/private/etc") (subpath "/private/var/db") (subpath "/dev"))
; The root directory itself and the /etc, /tmp and /var symbolic links.
(allow file-read* (literal "/") (literal "/etc") (literal "/tmp") (literal "/var"))

; The standard devices every shell redirects to or reads from.
(allow file-read* file-write-data file-ioctl (literal "/dev/null") (literal "/dev/zero")
  (literal "/dev/random") (literal "/dev/urandom") (literal "/dev/tty") (literal "/dev/stdin")
  (literal "/dev/stdout") (literal "/dev/stderr") (literal "/dev/dtracehelper"))
; Process substitution and /dev/fd/N redirections.
(allow file-read* file-write-data (subpath "/dev/fd"))
`;
