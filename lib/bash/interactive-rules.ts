// SPDX-License-Identifier: MIT
// The interactive-program table: which resolved commands would hang without a terminal.

type Kind = 'editor' | 'pager' | 'monitor' | 'repl' | 'client' | 'remote' | 'debugger' | 'selector';

const TABLE: Record<string, Kind> = {
  vim: 'editor', vi: 'editor', nvim: 'editor', nano: 'editor', emacs: 'editor', pico: 'editor', notepad: 'editor',
  less: 'pager', more: 'pager', most: 'pager',
  top: 'monitor', htop: 'monitor', btop: 'monitor', btm: 'monitor', watch: 'monitor',
  python: 'repl', python3: 'repl', node: 'repl', irb: 'repl', ruby: 'repl', pry: 'repl', php: 'repl', ghci: 'repl',
  psql: 'client', mysql: 'client', sqlite3: 'client', 'redis-cli': 'client', mongo: 'client', mongosh: 'client',
  ssh: 'remote', telnet: 'remote', ftp: 'remote', sftp: 'remote',
  gdb: 'debugger', lldb: 'debugger',
  fzf: 'selector', peco: 'selector',
};

/** Flags that make a REPL or client run non-interactively. */
const BATCH_FLAGS: Record<string, string[]> = {
  python: ['-c', '-m'],
  python3: ['-c', '-m'],
  node: ['-e', '--eval', '-p', '--print', '-v', '--check', '-h', '-c'],
  ruby: ['-e'],
  php: ['-r', '-f'],
  psql: ['-c', '--command', '-f', '--file', '-l', '--list'],
  mysql: ['-e', '--execute'],
  mongo: ['--eval', '-f', '--file'],
  mongosh: ['--eval', '-f', '--file'],
};

/** ssh options that take a value, so the value is not counted as a positional. */
const SSH_VALUES = new Set(['-b', '-c', '-D', '-E', '-e', '-F', '-I', '-i', '-J', '-L', '-l', '-m', '-O', '-o', '-p', '-Q', '-R', '-S', '-W', '-w', '-B']);

/** Multi-word interactive forms matched at a command boundary: program, subcommand, flags. */
const MULTI: { program: string; sub?: string; flags: string[]; label: string }[] = [
  { program: 'git', sub: 'rebase', flags: ['-i', '--interactive'], label: 'git rebase -i' },
  { program: 'git', sub: 'add', flags: ['-i', '--interactive'], label: 'git add -i' },
  { program: 'git', sub: 'add', flags: ['-p', '--patch'], label: 'git add -p' },
  { program: 'git', sub: 'commit', flags: ['-p', '--patch'], label: 'git commit -p' },
  { program: 'tail', flags: ['-f', '--follow', '-F'], label: 'tail -f' },
  { program: 'journalctl', flags: ['-f', '--follow'], label: 'journalctl -f' },
  { program: 'kubectl', sub: 'logs', flags: ['-f', '--follow'], label: 'kubectl logs -f' },
  { program: 'docker', sub: 'logs', flags: ['-f', '--follow'], label: 'docker logs -f' },
  { program: 'docker', sub: 'attach', flags: [], label: 'docker attach' },
];

const GIT_VALUES = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix']);

function countPositionals(args: readonly string[], values?: ReadonlySet<string>): number {
  let count = 0;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg.startsWith('-')) {
      if (values?.has(arg)) i++;
      continue;
    }
    count++;
  }
  return count;
}

function hasFlag(args: readonly string[], flag: string): boolean {
  return args.some((arg) => arg === flag || (flag.startsWith('--') && arg.startsWith(`${flag}=`)));
}

/** A match of the interactive table. */
export interface InteractiveMatch {
  /** The matched program or multi-word form, e.g. `vim` or `git rebase -i`. */
  command: string;
  /** The table's kind of program, used to pick a suggestion. */
  kind: Kind | 'follow' | 'git';
}

function multiWord(program: string, args: readonly string[]): InteractiveMatch | undefined {
  for (const form of MULTI) {
    if (form.program !== program) continue;
    let rest = args;
    if (form.sub !== undefined) {
      let index = 0;
      while (index < args.length && (args[index] as string).startsWith('-')) {
        index += program === 'git' && GIT_VALUES.has(args[index] as string) ? 2 : 1;
      }
      if (args[index] !== form.sub) continue;
      rest = args.slice(index + 1);
    }
    const clusters = rest.filter((arg) => /^-[A-Za-z]+$/.test(arg));
    const hit =
      form.flags.length === 0 ||
      form.flags.some((flag) => hasFlag(rest, flag) || (flag.length === 2 && clusters.some((c) => c.includes(flag[1] as string)))) ;
    if (hit) return { command: form.label, kind: program === 'git' ? 'git' : 'follow' };
  }
  return undefined;
}

/** Whether a resolved command needs a terminal; `notepad` counts only on Windows. */
export function interactiveMatch(program: string, args: readonly string[], platform: NodeJS.Platform): InteractiveMatch | undefined {
  const multi = multiWord(program, args);
  if (multi !== undefined) return multi;
  const kind = TABLE[program];
  if (kind === undefined) return undefined;
  if (program === 'notepad' && platform !== 'win32') return undefined;
  if (kind === 'repl' || kind === 'client') {
    const batch = BATCH_FLAGS[program] ?? [];
    if (batch.some((flag) => hasFlag(args, flag))) return undefined;
    if (hasFlag(args, '--version') || hasFlag(args, '--help')) return undefined;
    if (program === 'sqlite3') return countPositionals(args) >= 2 ? undefined : { command: program, kind };
    if (program === 'redis-cli') return countPositionals(args) >= 1 ? undefined : { command: program, kind };
    if (countPositionals(args) > 0) return undefined;
    return { command: program, kind };
  }
  if (program === 'ssh') return countPositionals(args, SSH_VALUES) >= 2 ? undefined : { command: program, kind };
  return { command: program, kind };
}

/** A platform-specific suggestion for running the matched command without a terminal. */
export function interactiveSuggestion(match: InteractiveMatch, platform: NodeJS.Platform): string {
  const windows = platform === 'win32';
  switch (match.kind) {
    case 'editor':
      return windows
        ? 'Edit files non-interactively: write the content with Set-Content or Out-File, or use the file editing tools.'
        : "Edit files non-interactively: use sed -i, a here-document (cat <<'EOF' > file), or the file editing tools.";
    case 'pager':
      return windows
        ? 'Print the file without a pager (non-interactive): use type FILE, or Get-Content FILE in PowerShell.'
        : 'Print the file without a pager (non-interactive): use cat, head or tail, or pipe into cat.';
    case 'monitor':
      return windows
        ? 'Take a non-interactive snapshot instead: use tasklist, or Get-Process in PowerShell.'
        : 'Take a non-interactive snapshot instead: use ps aux, or top -b -n 1.';
    case 'repl':
      return 'Run it non-interactively: run a script file or pass the code with a flag (python -c, node -e, ruby -e, php -r) instead of starting a REPL.';
    case 'client':
      return 'Run it non-interactively: pass the query on the command line (psql -c, mysql -e, mongosh --eval, sqlite3 DB "SQL") instead of opening a shell.';
    case 'remote':
      return 'Run a single remote command non-interactively (ssh host COMMAND) or use a batch mode instead of an interactive session.';
    case 'debugger':
      return 'Run the debugger non-interactively in batch mode (gdb -batch -ex ..., lldb --batch).';
    case 'selector':
      return 'Filter non-interactively with grep or rg instead of an interactive selector.';
    case 'follow':
      return followSuggestion(match.command, windows);
    case 'git':
      return 'Use the non-interactive form: GIT_SEQUENCE_EDITOR for rebase, explicit paths for git add, git commit with -m.';
  }
}

/**
 * What to run instead of a command that follows a log forever: the same tool's bounded form
 * (container and cluster logs have their own `--tail`), and on Windows, where `tail` is an MSYS
 * build that fails in the sandbox, the file tool or PowerShell rather than `tail -n`.
 */
function followSuggestion(command: string, windows: boolean): string {
  const lead = 'Read a bounded part of the log non-interactively instead of following it:';
  if (command === 'kubectl logs -f') return `${lead} drop -f and use kubectl logs --tail=100.`;
  if (command === 'docker logs -f') return `${lead} drop -f and use docker logs --tail 100.`;
  if (command === 'journalctl -f') return `${lead} journalctl -n 100.`;
  return windows
    ? `${lead} the read_file tool (offset and limit), or Get-Content FILE -Last 100 in PowerShell.`
    : `${lead} tail -n 100 FILE.`;
}
