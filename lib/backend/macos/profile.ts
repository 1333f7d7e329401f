// SPDX-License-Identifier: MIT
// Pure builder: SandboxPlan → seatbelt (SBPL) profile text plus the -D parameters it references.
import { SandboxError } from '../../errors.js';
import type { SandboxPlan } from '../types.js';
import { SEATBELT_BASE_PROFILE } from './base-profile.js';
import { isWithin as isWithinOs } from '../../path-within.js';
import { tagDenyRules } from './denial-log.js';
import { isRunNoncePath, type RunNonces } from './run-nonces.js';

// macOS paths are POSIX paths whatever OS builds the profile (the unit tests run it on Windows too).
const isWithin = (parent: string, child: string): boolean => isWithinOs(parent, child, '/');

/** Inputs the seatbelt profile needs beyond the plan. */
export interface SeatbeltOptions {
  /** The command's private temp directory (absolute, symlink-resolved): writable, used as TMPDIR. */
  tmpDir: string;
  /**
   * The per-user temp and cache directories (confstr DARWIN_USER_TEMP_DIR and
   * DARWIN_USER_CACHE_DIR, under /private/var/folders), absolute and symlink-resolved: writable,
   * because clang's module cache, xcrun and Swift write there whatever TMPDIR says.
   */
  darwinUserDirs?: { temp?: string; cache?: string };
  /**
   * This run's denial tag (denial-log.ts): every deny rule gets `(with message "<tag>")`, so the
   * refusals the kernel logs can be read back for this run only. Absent: no tag.
   */
  denialTag?: string;
  /**
   * This run's mark (run-nonces.ts): the last two rules allow reading `allowed` and deny reading
   * `denied`, so that after the run its processes are found by their profile, also those that left
   * the command's process group (run-members.ts). Absent: no mark (profiles that are only checked).
   */
  runNonces?: RunNonces;
}

/** A profile ready for `sandbox-exec -p <profile> -D<name>=<value>…`. */
export interface SeatbeltProfile {
  /** The SBPL text. Plan paths appear only as `(param "NAME")` references. */
  profile: string;
  /** Parameter name → absolute path, passed as `-D NAME=value`. */
  params: Record<string, string>;
}

/**
 * Escapes a string for an SBPL string literal: backslash and double quote are escaped, CR and LF
 * become `\r` and `\n`. Used for the few literals the builder writes; plan paths go in params.
 */
export function buildSbplString(value: string): string {
  let out = '"';
  for (const ch of value) {
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else out += ch;
  }
  return `${out}"`;
}

/** Rejects a path that seatbelt cannot match as given: it must be absolute, normalised, no NUL. */
function checkPath(field: string, path: string): void {
  const fail = (why: string): never => {
    throw new SandboxError('invalid_argument', `seatbelt profile: ${field} ${JSON.stringify(path)} ${why}`, {
      path,
    });
  };
  if (!path.startsWith('/')) fail('is not an absolute path');
  if (path.includes('\0')) fail('contains a NUL character');
  if (path.length > 1 && path.endsWith('/')) fail('ends with a slash');
  if (path.split('/').some((part) => part === '.' || part === '..')) fail('contains . or .. components');
  if (path.includes('//')) fail('contains an empty component');
}


/** The directories strictly between `root` and `path` (both absolute, `path` inside `root`). */
function ancestorsBelow(path: string, root: string): string[] {
  const out: string[] = [];
  let current = path.slice(0, path.lastIndexOf('/'));
  while (current.length > root.length && isWithin(root, current)) {
    out.push(current);
    current = current.slice(0, current.lastIndexOf('/'));
  }
  return out.reverse();
}

/** Collects parameters, reusing one name per distinct path within a group. */
class ParamTable {
  readonly params: Record<string, string> = {};
  private readonly counters = new Map<string, number>();
  private readonly seen = new Map<string, string>();

  add(prefix: string, path: string): string {
    const key = `${prefix}\0${path}`;
    const existing = this.seen.get(key);
    if (existing !== undefined) return existing;
    const index = this.counters.get(prefix) ?? 0;
    this.counters.set(prefix, index + 1);
    const name = `${prefix}_${index}`;
    this.params[name] = path;
    this.seen.set(key, name);
    return name;
  }
}

/** The resolver's Unix socket (dns_sd clients connect to it); a fixed system path, not a plan path. */
export const MDNS_RESPONDER_SOCKET = '/private/var/run/mDNSResponder';

/**
 * Terminal devices, fixed system paths only. Every terminal is denied first (read-all would reach
 * the user's own terminals), then three narrow allowances follow:
 * - pseudo-terminals the command allocates itself (script, expect, node-pty): opening /dev/ptmx
 *   makes a new pair, and the kernel hands this sandbox the com.apple.sandbox.pty extension for
 *   that new /dev/ttysN only, so a terminal of the user (which carries no such extension for this
 *   sandbox) still cannot be opened;
 * - ioctl on a terminal descriptor the command already holds (the terminal it was given as stdin,
 *   stdout or stderr), so isatty() and the window size work. Opening a terminal still needs the
 *   extension, and input injection (TIOCSTI) needs the terminal to be the controlling one, which it
 *   is not: the command runs in a session of its own.
 */
export const TERMINAL_DEVICE_RULE =
  '(deny file-read* file-write* file-ioctl (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]")\n' +
  '  (regex #"^/dev/pty[p-w]") (regex #"^/dev/tty[p-w]"))\n' +
  '(allow pseudo-tty)\n' +
  '(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))\n' +
  '(allow file-read* file-write* file-ioctl (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))\n' +
  '(allow file-ioctl (regex #"^/dev/ttys[0-9]+$"))';

const ref = (name: string): string => `(param ${buildSbplString(name)})`;

/**
 * Builds the seatbelt profile for one command. Order (later rules win): the static base, reads of
 * the read roots, writes to the write roots and the private temp dir, deny-read rules (which also
 * deny unlink and executable mapping), protected paths, deny-write rules, the run's mark (two
 * random paths, one readable and one not: run-nonces.ts), then network last
 * (under network allow, host Unix sockets are denied after the network allow, except the
 * resolver's and those inside the command's writable trees).
 * Ancestors of every denied or protected path inside a writable tree are frozen against unlink,
 * so renaming a parent directory cannot move a denied path out from under its rule.
 */
export function buildSeatbeltProfile(plan: SandboxPlan, options: SeatbeltOptions): SeatbeltProfile {
  checkPath('tmpDir', options.tmpDir);
  const userDirs = Object.entries({ DARWIN_USER_TEMP_DIR: options.darwinUserDirs?.temp, DARWIN_USER_CACHE_DIR: options.darwinUserDirs?.cache })
    .filter((entry): entry is [string, string] => entry[1] !== undefined);
  for (const [name, path] of userDirs) {
    checkPath(name, path);
    if (!path.startsWith('/private/var/folders/')) {
      throw new SandboxError('invalid_argument', `seatbelt profile: ${name} ${JSON.stringify(path)} is not under /private/var/folders`, { path });
    }
  }
  plan.readRoots.forEach((p, i) => checkPath(`readRoots[${i}]`, p));
  plan.writeRoots.forEach((w, i) => {
    checkPath(`writeRoots[${i}].root`, w.root);
    w.readOnlySubpaths.forEach((p, j) => {
      checkPath(`writeRoots[${i}].readOnlySubpaths[${j}]`, p);
      if (!isWithin(w.root, p) || p === w.root) {
        throw new SandboxError('invalid_argument', `seatbelt profile: writeRoots[${i}].readOnlySubpaths[${j}] ${JSON.stringify(p)} is not inside its root ${JSON.stringify(w.root)}`, { path: p });
      }
    });
    w.protectedNames.forEach((name, j) => {
      if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
        throw new SandboxError('invalid_argument', `seatbelt profile: writeRoots[${i}].protectedNames[${j}] ${JSON.stringify(name)} is not a single file name`);
      }
    });
  });
  plan.denyRead.forEach((p, i) => checkPath(`denyRead[${i}]`, p));
  plan.denyWrite.forEach((p, i) => checkPath(`denyWrite[${i}]`, p));
  if (plan.network !== 'deny' && plan.network !== 'allow') {
    throw new SandboxError('invalid_argument', `seatbelt profile: network ${JSON.stringify(plan.network)} is neither "deny" nor "allow"`);
  }

  const table = new ParamTable();
  const lines: string[] = [SEATBELT_BASE_PROFILE.trimEnd(), ''];
  const writable = [...plan.writeRoots.map((w) => w.root), options.tmpDir];

  lines.push('; Read roots (the read-all posture: "/" plus any extra roots), mapping included.');
  for (const root of plan.readRoots) {
    const name = table.add('READ_ROOT', root);
    lines.push(`(allow file-read* file-map-executable (subpath ${ref(name)}))`);
  }
  const readCovered = (path: string): boolean => plan.readRoots.some((r) => isWithin(r, path));
  const ancestorLines: string[] = [];
  for (const root of writable) {
    if (readCovered(root)) continue;
    // Not covered by a read root: reading it and stat-ing its parents (cd) must still work. The
    // parents are listed one by one; "/" is never passed to path-ancestors, which rejects it.
    for (const dir of ancestorsBelow(root, '/')) {
      ancestorLines.push(`(allow file-read-metadata (literal ${ref(table.add('ANCESTOR', dir))}))`);
    }
  }
  if (ancestorLines.length > 0) {
    lines.push('; Parents of writable roots outside the read roots: metadata only, so cd works.');
    lines.push(...ancestorLines);
  }

  lines.push('; Write roots: the workspace first, then extra roots (read, write, map, ioctl).');
  for (const w of plan.writeRoots) {
    const name = table.add('WRITE_ROOT', w.root);
    lines.push(`(allow file-write* file-read* file-map-executable file-ioctl (subpath ${ref(name)}))`);
  }
  lines.push("; The command's private temp directory (TMPDIR); the shared /tmp stays read-only.");
  lines.push(`(allow file-write* file-read* file-map-executable (subpath ${ref(table.add('TMPDIR', options.tmpDir))}))`);
  if (userDirs.length > 0) {
    lines.push("; The per-user temp and cache directories under /var/folders: clang's module cache, xcrun and");
    lines.push('; Swift write there whatever TMPDIR says (files, not Unix sockets: no connect is allowed there).');
    for (const [name, path] of userDirs) {
      table.params[name] = path;
      lines.push(`(allow file-write* file-read* (subpath ${ref(name)}))`);
    }
  }

  lines.push("; Terminal devices: the user's terminals stay out of reach even under read-all (reading one");
  lines.push("; would steal keystrokes, writing would inject into it). Allowed: new pseudo-terminals through");
  lines.push('; /dev/ptmx and the com.apple.sandbox.pty extension the kernel grants for each one this sandbox');
  lines.push('; allocates, and ioctl on a terminal descriptor already held, so isatty() holds on a terminal');
  lines.push('; the command was given (it cannot open one, and TIOCSTI needs a controlling terminal).');
  lines.push(TERMINAL_DEVICE_RULE);

  // Parents of a denied or protected path that lie inside a writable tree cannot be unlinked or
  // renamed: otherwise `mv parent elsewhere` would carry the path out of its rule.
  const frozen: string[] = [];
  const freeze = (path: string): void => {
    for (const root of writable) {
      if (!isWithin(root, path)) continue;
      for (const dir of ancestorsBelow(path, root)) if (!frozen.includes(dir)) frozen.push(dir);
    }
  };

  if (plan.denyRead.length > 0) {
    lines.push('; Deny-read set: no read, no executable mapping, no unlink or rename of the path.');
    for (const path of plan.denyRead) {
      const name = table.add('DENY_READ', path);
      lines.push(`(deny file-read* file-map-executable file-write-unlink (subpath ${ref(name)}))`);
      freeze(path);
    }
  }

  const protectedLines: string[] = [];
  for (const w of plan.writeRoots) {
    for (const path of w.readOnlySubpaths) {
      protectedLines.push(`(deny file-write* (subpath ${ref(table.add('PROTECTED', path))}))`);
      freeze(path);
    }
    for (const protectedName of w.protectedNames) {
      const path = w.root === '/' ? `/${protectedName}` : `${w.root}/${protectedName}`;
      protectedLines.push(`(deny file-write* (subpath ${ref(table.add('PROTECTED', path))}))`);
    }
  }
  if (protectedLines.length > 0) {
    lines.push('; Protected paths in every write root: read-only, and .zero/.agents cannot be created.');
    lines.push(...protectedLines);
  }

  if (plan.denyWrite.length > 0) {
    lines.push('; Deny-write set: readable but unchangeable.');
    for (const path of plan.denyWrite) {
      lines.push(`(deny file-write* (subpath ${ref(table.add('DENY_WRITE', path))}))`);
      freeze(path);
    }
  }

  if (frozen.length > 0) {
    lines.push('; Parents of denied and protected paths inside writable trees: no unlink or rename.');
    for (const dir of frozen) {
      lines.push(`(deny file-write-unlink (literal ${ref(table.add('FROZEN', dir))}))`);
    }
  }

  if (options.runNonces !== undefined) {
    const { allowed, denied } = options.runNonces;
    if (!isRunNoncePath(allowed) || !isRunNoncePath(denied) || allowed === denied) {
      throw new SandboxError('invalid_argument', `seatbelt profile: the run mark must be two different paths made by buildRunNonces (got ${JSON.stringify(allowed)} and ${JSON.stringify(denied)})`);
    }
    lines.push("; This run's mark, after every other file rule so that none changes it: of two random paths");
    lines.push('; that exist nowhere, the first is readable and the second is not. An unsandboxed process may');
    lines.push('; read both, and any other profile treats them alike (it names neither, and they differ only');
    lines.push('; in their random names), so only processes under this profile answer "allowed, denied":');
    lines.push('; after the run the host finds and kills them by it, also those that left the process group.');
    lines.push(`(allow file-read* (literal ${ref(table.add('RUN_MARK_ALLOWED', allowed))}))`);
    lines.push(`(deny file-read* (literal ${ref(table.add('RUN_MARK_DENIED', denied))}))`);
  }
  if (plan.network === 'allow') {
    lines.push('; Routing and interface sockets (AF_ROUTE, AF_SYSTEM: getifaddrs, scutil) under network allow.');
    lines.push('(allow system-socket)');
    lines.push('; Network allow: name resolution through mDNSResponder, then every socket operation.');
    lines.push('(allow mach-lookup (global-name "com.apple.dnssd.service"))');
    lines.push('(allow network*)');
    lines.push("; Host daemons' Unix sockets stay closed even under network allow: docker.sock is root on the");
    lines.push('; host, ssh-agent signs as the user. Only the resolver socket that name lookups go through');
    lines.push("; and sockets inside the command's own writable trees (its own servers) are reachable.");
    lines.push('(deny network-outbound (remote unix-socket))');
    lines.push(`(allow network-outbound (remote unix-socket (path-literal ${buildSbplString(MDNS_RESPONDER_SOCKET)})))`);
    if (plan.blockUnixSockets) {
      lines.push('; blockUnixSockets: no Unix-domain socket of its own either (no bind).');
      lines.push('(deny network-bind (local unix-socket))');
    } else {
      for (const root of writable) {
        const name = table.add(root === options.tmpDir ? 'TMPDIR' : 'WRITE_ROOT', root);
        lines.push(`(allow network-outbound (remote unix-socket (subpath ${ref(name)})))`);
      }
    }
  } else {
    lines.push('; Network deny, last so that nothing above re-opens it (no loopback exception: seatbelt');
    lines.push('; has no private network namespace, and host loopback counts as outside).');
    lines.push('(deny network*)');
  }
  const profile = `${lines.join('\n')}\n`;
  return { profile: options.denialTag === undefined ? profile : tagDenyRules(profile, options.denialTag), params: table.params };
}
