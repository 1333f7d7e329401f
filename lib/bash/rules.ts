// SPDX-License-Identifier: MIT
// Network and destructive rules applied to one resolved simple command.

/** The static argument texts after the program word. */
type Args = readonly string[];

const NETWORK_PROGRAMS = new Set([
  'curl', 'wget', 'wget2', 'fetch', 'aria2c', 'ssh', 'scp', 'sftp', 'rsync', 'nc', 'ncat', 'netcat', 'socat',
  'telnet', 'ftp', 'lftp', 'mosh', 'iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod', 'start-bitstransfer',
  'npx', 'bunx', 'pnpx', 'uvx',
]);

const DEV_SERVERS = new Set(['http-server', 'serve', 'vite', 'next', 'nuxt', 'astro']);

const JS_PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);

const JS_NETWORK_SUBCOMMANDS = new Set([
  'install', 'add', 'ci', 'create', 'dlx', 'publish', 'unpublish', 'login', 'logout', 'adduser', 'whoami', 'ping',
  'audit', 'outdated', 'update', 'upgrade', 'search', 'view', 'info', 'show', 'dist-tag', 'deprecate', 'owner',
  'org', 'team', 'token', 'profile', 'access', 'start', 'serve', 'dev', 'preview', 'exec',
  // npm aliases and near relatives that also reach the registry
  'i', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal', 'isntall', 'it', 'install-test', 'cit',
  'install-ci-test', 'up', 'fetch', 'unlink-registry',
]);

const DEV_SCRIPTS = new Set(['start', 'serve', 'dev', 'preview']);

const JS_VALUE_OPTIONS = new Set(['--prefix', '-C', '--dir', '--filter', '-F', '--cwd', '-w', '--workspace', '--registry']);

/** Subcommand paths (one or two words) that reach the network, per program. */
const SUBCOMMAND_NETWORK: Record<string, { subs: Set<string>; values?: Set<string> }> = {
  git: {
    subs: new Set(['clone', 'fetch', 'pull', 'push', 'ls-remote', 'archive', 'submodule update', 'submodule add', 'remote update']),
    values: new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix', '--exec-path']),
  },
  go: { subs: new Set(['get', 'install', 'mod download']), values: new Set(['-C']) },
  cargo: {
    subs: new Set(['install', 'fetch', 'add', 'update', 'publish', 'search', 'login', 'yank', 'owner']),
    values: new Set(['-C', '-Z', '--config', '--color']),
  },
  gem: { subs: new Set(['install', 'update', 'push', 'fetch']) },
  apt: { subs: new Set(['install', 'update', 'upgrade', 'dist-upgrade', 'full-upgrade', 'download', 'source', 'build-dep']), values: new Set(['-o', '-t', '-c']) },
  'apt-get': { subs: new Set(['install', 'update', 'upgrade', 'dist-upgrade', 'full-upgrade', 'download', 'source', 'build-dep']), values: new Set(['-o', '-t', '-c']) },
  dnf: { subs: new Set(['install', 'update', 'upgrade', 'download', 'makecache']) },
  yum: { subs: new Set(['install', 'update', 'upgrade', 'makecache']) },
  apk: { subs: new Set(['add', 'update', 'upgrade', 'fetch']) },
  brew: { subs: new Set(['install', 'update', 'upgrade', 'fetch', 'tap', 'reinstall']) },
  docker: { subs: new Set(['pull', 'push', 'login', 'search']), values: new Set(['-H', '--host', '-c', '--context', '--config', '-l', '--log-level']) },
  podman: { subs: new Set(['pull', 'push', 'login', 'search']) },
  uv: { subs: new Set(['add', 'sync', 'lock', 'pip install', 'pip download', 'pip sync', 'tool install', 'tool run', 'python install']) },
  poetry: { subs: new Set(['install', 'add', 'update', 'lock', 'publish']) },
  composer: { subs: new Set(['install', 'update', 'require', 'create-project']) },
  pipx: { subs: new Set(['install', 'run', 'upgrade', 'upgrade-all']) },
  conda: { subs: new Set(['install', 'create', 'update']) },
  bundle: { subs: new Set(['install', 'update']) },
  deno: { subs: new Set(['install', 'cache']) },
  dotnet: { subs: new Set(['restore', 'add package']) },
  snap: { subs: new Set(['install', 'refresh']) },
  choco: { subs: new Set(['install', 'upgrade']) },
  winget: { subs: new Set(['install', 'upgrade']) },
  scoop: { subs: new Set(['install', 'update']) },
  helm: { subs: new Set(['install', 'upgrade', 'pull', 'repo add', 'repo update', 'dependency update']) },
};

/** gh subcommands that work offline; every other gh subcommand talks to GitHub. */
const GH_OFFLINE = new Set(['help', 'completion', 'config', 'alias', 'version', '--version', '--help', '-h']);

const PYTHON = /^(?:python(?:\d+(?:\.\d+)*)?|py|pypy\d*)$/;
const PIP = /^pip(?:\d+(?:\.\d+)*)?$/;

/** Positional arguments: skips dash options (and the values of `values` options) and numbers. */
export function positionals(args: Args, values?: ReadonlySet<string>, limit = 3): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length && out.length < limit; i++) {
    const arg = args[i] as string;
    if (arg.startsWith('-')) {
      if (values?.has(arg)) i++;
      continue;
    }
    if (/^\d+$/.test(arg)) continue;
    out.push(arg);
  }
  return out;
}

function subcommandMatch(subs: ReadonlySet<string>, pos: readonly string[]): string | undefined {
  const first = pos[0];
  if (first === undefined) return undefined;
  if (subs.has(first)) return first;
  const two = pos[1] === undefined ? undefined : `${first} ${pos[1]}`;
  return two !== undefined && subs.has(two) ? two : undefined;
}

function jsPackageManager(program: string, args: Args): string | undefined {
  if (args.some((arg) => arg === '--offline' || arg === '--no-network')) return undefined;
  const pos = positionals(args, JS_VALUE_OPTIONS, 2);
  let sub = pos[0];
  if (sub === undefined) return program === 'yarn' ? 'yarn (bare) installs dependencies from the registry' : undefined;
  if (sub === 'x' && (program === 'npm' || program === 'bun')) sub = 'exec';
  if (sub === 'run' || sub === 'run-script') {
    const script = pos[1];
    return script !== undefined && DEV_SCRIPTS.has(script) ? `${program} run ${script} starts a network server` : undefined;
  }
  if (sub === 'init' && pos[1] !== undefined) return `${program} init ${pos[1]} downloads an initializer package`;
  if (JS_NETWORK_SUBCOMMANDS.has(sub)) return `${program} ${sub} reaches the package registry or the network`;
  return undefined;
}

function python(args: Args): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    let module: string | undefined;
    if (arg === '-m') module = args[i + 1];
    else if (arg.startsWith('-m') && arg.length > 2 && !arg.startsWith('--')) module = arg.slice(2);
    else if (arg === '-c' || !arg.startsWith('-')) return undefined;
    if (module === undefined) continue;
    if (module === 'http.server' || module === 'SimpleHTTPServer') return `python -m ${module} starts a network server`;
    if (module === 'pip') {
      const sub = positionals(args.slice(i + (arg === '-m' ? 2 : 1)), undefined, 1)[0];
      return sub === 'install' || sub === 'download' ? `python -m pip ${sub} downloads packages` : undefined;
    }
    return undefined;
  }
  return undefined;
}

/**
 * Why the command uses the network, or undefined when it does not. `literal` is `args` with every
 * word built at run time replaced by a NUL (default: all literal).
 */
export function networkReason(program: string, args: Args, literal: Args = args): string | undefined {
  if (NETWORK_PROGRAMS.has(program)) return `${program} contacts the network`;
  if (DEV_SERVERS.has(program)) return `${program} starts a network server`;
  if (JS_PACKAGE_MANAGERS.has(program)) return jsPackageManager(program, args);
  if (PYTHON.test(program)) return python(args);
  if (PIP.test(program)) {
    const sub = positionals(args, undefined, 1)[0];
    return sub === 'install' || sub === 'download' ? `${program} ${sub} downloads packages` : undefined;
  }
  if (program === 'gh') {
    const sub = positionals(args, new Set(['-R', '--repo']), 1)[0];
    return sub !== undefined && !GH_OFFLINE.has(sub) ? `gh ${sub} talks to GitHub` : undefined;
  }
  const table = SUBCOMMAND_NETWORK[program];
  if (table !== undefined) {
    const sub = subcommandMatch(table.subs, positionals(args, table.values, 2));
    if (sub === 'clone' && program === 'git' && gitCloneIsLocal(literal)) return undefined;
    return sub === undefined ? undefined : `${program} ${sub} contacts the network`;
  }
  return undefined;
}

/** `git clone` options that take a separate value. */
const GIT_CLONE_VALUES = new Set([
  '-b', '--branch', '-o', '--origin', '-u', '--upload-pack', '--reference', '--reference-if-able', '--depth', '-c', '--config',
  '--template', '--separate-git-dir', '-j', '--jobs', '--filter', '--shallow-since', '--shallow-exclude', '--server-option',
  '--bundle-uri', '--ref-format',
]);
/** A literal local source: an absolute or explicitly relative path, a home path, or a file:// URL. */
const LOCAL_SOURCE = /^(?:\/|\.\.?(?:\/|$)|~\/|file:\/\/|[A-Za-z]:[\\/]|\.\.?\\)/;

/**
 * Whether `git clone` copies a repository from this machine: the source is a literal local path
 * and no option fetches submodules (which may be remote). A URL, `host:path`, or a source built at
 * run time (marked by a NUL in its static text) stays network. (The Go Zero CLI treats every clone
 * as network; a local clone reaches no network, so it is not.)
 */
function gitCloneIsLocal(args: Args): boolean {
  const at = args.indexOf('clone');
  if (at === -1) return false;
  let source: string | undefined;
  for (let i = at + 1; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--recurse-submodules' || arg === '--recursive' || arg.startsWith('--recurse-submodules=')) return false;
    if (arg === '--') {
      source = args[i + 1];
      break;
    }
    if (arg.startsWith('-')) {
      if (GIT_CLONE_VALUES.has(arg)) i++;
      continue;
    }
    source = arg;
    break;
  }
  return source !== undefined && !source.includes('\u0000') && LOCAL_SOURCE.test(source);
}

const DESTRUCTIVE_PROGRAMS = new Set([
  'mkfs', 'mke2fs', 'fdisk', 'sfdisk', 'gdisk', 'shred', 'dd', 'parted', 'wipefs', 'blkdiscard',
]);

const POWERSHELL_REMOVE = new Set(['remove-item', 'ri', 'rd', 'rmdir', 'del', 'erase', 'rm']);

function rmReason(args: Args): string | undefined {
  let recursive = false;
  let force = false;
  for (const arg of args) {
    if (arg === '--') break;
    if (arg === '--recursive') recursive = true;
    else if (arg === '--force') force = true;
    else if (/^-[A-Za-z]+$/.test(arg)) {
      if (/[rR]/.test(arg)) recursive = true;
      if (arg.includes('f')) force = true;
    }
  }
  return recursive && force ? 'rm with recursive and force flags deletes without confirmation' : undefined;
}

/** Why the command destroys data, or undefined when it does not. */
export function destructiveReason(program: string, args: Args): string | undefined {
  if (DESTRUCTIVE_PROGRAMS.has(program) || program.startsWith('mkfs.')) return `${program} overwrites or destroys data`;
  if (program === 'rm') {
    const reason = rmReason(args);
    if (reason !== undefined) return reason;
  }
  if (POWERSHELL_REMOVE.has(program)) {
    const lower = args.map((arg) => arg.toLowerCase());
    if ((lower.includes('-recurse') || lower.includes('-r')) && lower.includes('-force')) {
      return `${program} -Recurse -Force deletes a tree without confirmation`;
    }
  }
  if (program === 'find' && args.includes('-delete')) return 'find -delete deletes every match';
  if (program === 'chmod') return chmodReason(args);
  return undefined;
}

/** Modes that make a tree unusable (000) or writable and executable by everyone (777). */
const HARMFUL_MODE = /^(?:0?0?000|0?0?777|[ugoa]*=|[ugoa]*[-=]rwx|[ugoa]*\+rwx|a\+w|o\+w)$/;
/** `/`, a home, or a system tree itself (`/etc`, `/usr/`, `/var/*`). */
const SYSTEM_TREE = /^(?:\/+\*?|~\/?\*?|\$HOME\/?\*?|\/(?:etc|usr|bin|sbin|lib|lib32|lib64|libx32|var|boot|opt|root|sys|proc|dev|srv|home|System|Library|Applications)\/?\*?)$/;
/** Below a system tree, a path whose last part has no file extension: a directory such as `/usr/local` or `/etc/ssh`. */
const SYSTEM_DIR = /^\/(?:etc|usr|bin|sbin|lib|lib32|lib64|libx32|var|boot|opt|root|sys|proc|dev|srv|System|Library|Applications)\/(?:[^/]+\/)*[^/.]+\/?\*?$/;

/**
 * chmod that breaks a system or a whole tree: a 000/777-style mode recursively (`chmod -R 000 .`),
 * or on `/`, a home, a system tree or a directory in one (`chmod 777 /usr/local`); a single file
 * such as `/opt/app/run.sh` is not.
 */
function chmodReason(args: Args): string | undefined {
  let recursive = false;
  let mode: string | undefined;
  const targets: string[] = [];
  let options = true;
  for (const arg of args) {
    if (options && arg === '--') options = false;
    else if (options && (arg === '-R' || arg === '--recursive' || /^-[A-Za-z]*R[A-Za-z]*$/.test(arg))) recursive = true;
    else if (options && arg.startsWith('-') && !HARMFUL_MODE.test(arg) && !/^-[rwxXst]+$/.test(arg)) continue;
    else if (mode === undefined) mode = arg;
    else targets.push(arg);
  }
  if (mode === undefined || !HARMFUL_MODE.test(mode)) return undefined;
  if (recursive) return `chmod -R ${mode} changes the permissions of a whole tree`;
  const system = targets.find((target) => SYSTEM_TREE.test(target) || SYSTEM_DIR.test(target));
  return system === undefined ? undefined : `chmod ${mode} on ${system} breaks or opens a system tree`;
}
