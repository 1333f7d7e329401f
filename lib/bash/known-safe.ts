// SPDX-License-Identifier: MIT
// Known-safe (read-only) command segments, used by command-prefix proposals and matching.

const ALWAYS_SAFE = new Set([
  'cat', 'cd', 'cut', 'echo', 'expr', 'false', 'grep', 'head', 'id', 'ls', 'nl', 'paste', 'pwd', 'rev', 'seq',
  'stat', 'tail', 'tr', 'true', 'uname', 'uniq', 'wc', 'which', 'whoami',
]);

/**
 * Names that on Windows usually resolve to MSYS/Git-for-Windows builds of the Unix tools, whose
 * behaviour (path conversion, different options) is not the read-only tool the list assumes, and
 * which die at start under the sandbox's restricted token. The shells are among them: a bare
 * `bash` or `sh` is Git for Windows' MSYS build or the WSL launcher, and neither starts there.
 * `base64` (no Windows build exists) and `find` (System32's find.exe searches text, with other
 * arguments) are on the list too, so neither is known-safe on Windows: stricter than Zero's list.
 */
const MSYS_PRONE = new Set([
  'awk', 'base64', 'bash', 'cat', 'cut', 'expr', 'find', 'grep', 'head', 'id', 'ls', 'nl', 'paste', 'rev', 'sed',
  'seq', 'sh', 'stat', 'tail', 'tr', 'uname', 'uniq', 'wc', 'which', 'xargs',
]);

const FIND_UNSAFE = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fls', '-fprint', '-fprint0', '-fprintf']);
const GIT_READ = new Set(['status', 'log', 'diff', 'show']);
const GIT_GLOBAL_VALUES = new Set(['-c', '--config-env', '--exec-path', '--git-dir', '--namespace', '--super-prefix', '--work-tree']);
const GIT_BRANCH_LISTING = new Set(['--list', '-l', '--show-current', '-a', '--all', '-r', '--remotes', '-v', '-vv', '--verbose']);

/** The program name as the known-safe list sees it: basename, lower-case, executable suffix dropped. */
export function normalizeSegmentProgram(token: string): string {
  const base = token.split(/[\\/]/).pop() ?? '';
  return base.toLowerCase().replace(/\.(?:exe|cmd|bat|com)$/, '');
}

/** Whether a program name is usually an MSYS build on Windows (never known-safe there). */
export function isMsysProneCommandName(name: string): boolean {
  return MSYS_PRONE.has(normalizeSegmentProgram(name));
}

function gitSafe(args: readonly string[]): boolean {
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('-')) break;
    if (arg.startsWith('-C') || arg === '--upload-pack' || arg.startsWith('--upload-pack=')) return false;
    if (GIT_GLOBAL_VALUES.has(arg)) i++;
  }
  const sub = args[i];
  const rest = args.slice(i + 1);
  if (sub === undefined) return false;
  if (rest.some((arg) => arg === '-C' || arg.startsWith('--upload-pack'))) return false;
  if (GIT_READ.has(sub)) return !rest.some((arg) => arg.startsWith('--output') || arg.startsWith('--exec'));
  if (sub === 'branch') return rest.every((arg) => GIT_BRANCH_LISTING.has(arg) || arg.startsWith('--format='));
  return false;
}

/** Whether one segment (argv) of a pipeline or `&&` chain is known to be read-only. */
// process.platform default: a command's meaning differs per OS (e.g. `sort -o` writes; cmd.exe built-ins).
export function isKnownSafeSegment(argv: readonly string[], platform: NodeJS.Platform = process.platform): boolean {
  const first = argv[0];
  if (first === undefined) return false;
  const program = normalizeSegmentProgram(first);
  if (platform === 'win32' && MSYS_PRONE.has(program)) return false;
  const args = argv.slice(1);
  if (ALWAYS_SAFE.has(program)) return true;
  switch (program) {
    case 'base64':
      return !args.some((arg) => arg.startsWith('-o') || arg.startsWith('--output'));
    case 'find':
      return !args.some((arg) => FIND_UNSAFE.has(arg));
    case 'rg':
      return !args.some(
        (arg) =>
          arg === '-z' || arg.startsWith('--search-zip') || arg.startsWith('--pre') || arg.startsWith('--hostname-bin') ||
          (/^-[A-Za-z]+$/.test(arg) && arg.includes('z')),
      );
    case 'sed':
      return (args.length === 2 || args.length === 3) && args[0] === '-n' && /^\d+(?:,\d+)*p$/.test(args[1] as string) &&
        (args[2] === undefined || !(args[2] as string).startsWith('-'));
    case 'git':
      return gitSafe(args);
    default:
      return false;
  }
}
