// SPDX-License-Identifier: MIT
// Wrapper and launcher resolution: finds the program behind sudo/env/timeout/xargs/... and the
// payloads of shell launchers (bash -c, pwsh -Command, cmd /c, eval, su -c, watch, find -exec).
import { normalizeProgramToken, type Word } from './words.js';

/** A wrapper: options that take a value, and how many leading positionals it consumes. */
interface WrapperSpec {
  values: ReadonlySet<string>;
  positionals: number;
}

const spec = (values: string[], positionals = 0): WrapperSpec => ({ values: new Set(values), positionals });

/** Wrappers run the rest of their arguments as a command. */
export const WRAPPERS: Record<string, WrapperSpec> = {
  sudo: spec(['-u', '--user', '-g', '--group', '-p', '--prompt', '-C', '--close-from', '-r', '--role', '-T', '--command-timeout', '-U', '--other-user', '-h', '--host', '-D', '--chdir', '-R', '--chroot', '-t', '--type']),
  doas: spec(['-u', '-C']),
  env: spec(['-u', '--unset', '-C', '--chdir']),
  command: spec([]),
  builtin: spec([]),
  nohup: spec([]),
  coproc: spec([]),
  time: spec(['-f', '--format', '-o', '--output']),
  exec: spec(['-a']),
  nice: spec(['-n', '--adjustment']),
  timeout: spec(['-s', '--signal', '-k', '--kill-after'], 1),
  stdbuf: spec(['-i', '-o', '-e', '--input', '--output', '--error']),
  setsid: spec([]),
  ionice: spec(['-c', '--class', '-n', '--classdata', '-p', '--pid']),
  xargs: spec(['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var']),
  chroot: spec(['--userspec', '--groups'], 1),
  chrt: spec([], 1),
  taskset: spec([], 1),
  unbuffer: spec([]),
  caffeinate: spec(['-t', '-w']),
  busybox: spec([]),
  runuser: spec(['-u', '-g', '-G', '--user', '--group']),
  // tracers, fakers and proxies that run their arguments as a command
  strace: spec(['-o', '-e', '-p', '-s', '-u', '-E', '-a', '-b', '-I', '-O', '-P', '-S', '-X']),
  ltrace: spec(['-o', '-e', '-p', '-s', '-u', '-a', '-n']),
  valgrind: spec([]),
  fakeroot: spec(['-l', '-s', '-i', '-b']),
  proxychains: spec(['-f']),
  proxychains4: spec(['-f']),
  torsocks: spec(['-u', '-p', '-a', '-P']),
  unshare: spec(['-S', '-G', '-R', '-w', '--setuid', '--setgid', '--root', '--wd']),
  parallel: spec(['-j', '--jobs', '-a', '--arg-file', '-S', '--sshlogin', '-d', '--delimiter', '-I', '--joblog']),
};

/** POSIX-family shells whose `-c` (or `--command`) argument is a script. */
export const SHELLS = new Set(['sh', 'bash', 'zsh', 'ksh', 'dash', 'ash', 'mksh', 'yash', 'fish']);

/** What resolving a word list produced: the program's words, and payloads to parse. */
export interface Resolution {
  /** Index of the program word in the input, or -1 when there is none (dynamic, or `command -v`). */
  programIndex: number;
  /** The normalized program. */
  program: string;
  /** The wrappers passed on the way, outermost first. */
  wrappers: string[];
  /** Launcher payloads (shell source text) to analyze, with the launcher label. */
  payloads: { label: string; text: string }[];
  /** Argument lists of commands nested in the arguments (find -exec), with their label. */
  nested: { label: string; words: Word[] }[];
  /** Why part of the command cannot be analyzed (opaque or dynamic payloads). */
  opaque: string | undefined;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function isOption(text: string): boolean {
  return text.startsWith('-') && text.length > 1;
}

function joinWords(words: readonly Word[], from: number): string {
  return words.slice(from).map((word) => word.text).join(' ');
}

function shellPayload(words: readonly Word[], start: number, res: Resolution, label: string): boolean {
  let wantsCommand = false;
  let i = start;
  for (; i < words.length; i++) {
    const text = (words[i] as Word).text;
    if (text === '--' || text === '-') {
      i++;
      break;
    }
    if (text === '--command') {
      wantsCommand = true;
      continue;
    }
    if (text.startsWith('--command=')) {
      res.payloads.push({ label: `${label} --command`, text: text.slice('--command='.length) });
      return true;
    }
    if (text.startsWith('--')) {
      if (text === '--rcfile' || text === '--init-file') i++;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(text)) {
      if (text.startsWith('-') && text.includes('c')) wantsCommand = true;
      if (/[oO]$/.test(text)) i++;
      continue;
    }
    break;
  }
  if (!wantsCommand) return false;
  const payload = words[i];
  if (payload === undefined) {
    res.opaque = `${label} -c has no command string`;
    return true;
  }
  if (!payload.literal || (payload.dynamic && payload.text.trim() === '')) {
    res.opaque = `the script given to ${label} -c is built at run time and cannot be analyzed`;
    return true;
  }
  res.payloads.push({ label: `${label} -c`, text: payload.text });
  return true;
}

const PWSH_COMMAND = /^[-/]c(?:o(?:m(?:m(?:a(?:n(?:d)?)?)?)?)?)?:?$/i;
const PWSH_ENCODED = /^[-/](?:e|ec|en|enc|enco|encod|encode|encoded|encodedc|encodedco|encodedcom|encodedcomm|encodedcomma|encodedcomman|encodedcommand)$/i;
const PWSH_FILE = /^[-/]f(?:i(?:l(?:e)?)?)?$/i;
const PWSH_VALUES = /^[-/](?:ex|ep|executionpolicy|wd|workingdirectory|w|windowstyle|of|outputformat|if|inputformat|v|version|settingsfile|configurationname|psconsolefile)$/i;

function powershellPayload(program: string, words: readonly Word[], start: number, res: Resolution): boolean {
  for (let i = start; i < words.length; i++) {
    const text = (words[i] as Word).text;
    if (PWSH_COMMAND.test(text)) {
      res.payloads.push({ label: `${program} -Command`, text: joinWords(words, i + 1) });
      return true;
    }
    if (PWSH_ENCODED.test(text)) {
      res.opaque = `${program} -EncodedCommand hides its script`;
      return true;
    }
    if (PWSH_FILE.test(text)) return false;
    if (PWSH_VALUES.test(text)) {
      i++;
      continue;
    }
    if (text.startsWith('-')) continue;
    if (program === 'pwsh') return false;
    res.payloads.push({ label: `${program} -Command`, text: joinWords(words, i) });
    return true;
  }
  return false;
}

function cmdPayload(words: readonly Word[], start: number, res: Resolution): boolean {
  for (let i = start; i < words.length; i++) {
    const text = (words[i] as Word).text;
    const lower = text.toLowerCase();
    if (lower === '/c' || lower === '/k' || lower === '/r') {
      res.payloads.push({ label: `cmd ${lower}`, text: joinWords(words, i + 1) });
      return true;
    }
    if (!lower.startsWith('/')) return false;
  }
  return false;
}

function suPayload(words: readonly Word[], start: number, res: Resolution): boolean {
  for (let i = start; i < words.length; i++) {
    const text = (words[i] as Word).text;
    if (text === '-c' || text === '--command') {
      const payload = words[i + 1];
      if (payload !== undefined) res.payloads.push({ label: 'su -c', text: payload.text });
      return true;
    }
    if (text.startsWith('--command=')) {
      res.payloads.push({ label: 'su -c', text: text.slice('--command='.length) });
      return true;
    }
  }
  return false;
}

function watchPayload(words: readonly Word[], start: number, res: Resolution): void {
  let i = start;
  while (i < words.length && isOption((words[i] as Word).text)) {
    const text = (words[i] as Word).text;
    i += text === '-n' || text === '--interval' || text === '-q' || text === '--equexit' ? 2 : 1;
  }
  if (i < words.length) res.payloads.push({ label: 'watch', text: joinWords(words, i) });
}

const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);

function findNested(words: readonly Word[], start: number, res: Resolution): void {
  for (let i = start; i < words.length; i++) {
    const action = (words[i] as Word).text;
    if (!FIND_EXEC.has(action)) continue;
    const inner: Word[] = [];
    let j = i + 1;
    for (; j < words.length; j++) {
      const text = (words[j] as Word).text;
      if (text === ';' || text === '+') break;
      inner.push(words[j] as Word);
    }
    if (inner.length > 0) res.nested.push({ label: `find ${action}`, words: inner });
    i = j;
  }
}

/**
 * Resolves the program of a simple command given its words (program word first): skips
 * assignments, wrapper options (with their values), numbers and dynamic tokens after wrappers.
 */
export function resolveWords(words: readonly Word[]): Resolution {
  const res: Resolution = { programIndex: -1, program: '', wrappers: [], payloads: [], nested: [], opaque: undefined };
  let wrapper: WrapperSpec | undefined;
  let pendingPositionals = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as Word;
    if (!word.literal || (word.dynamic && word.text === '')) {
      if (wrapper !== undefined) continue;
      return res;
    }
    const text = word.text;
    if (ASSIGNMENT.test(text)) continue;
    if (isOption(text)) {
      if (wrapper !== undefined && !text.includes('=') && wrapper.values.has(text)) i++;
      if (res.wrappers[res.wrappers.length - 1] === 'command' && (text === '-v' || text === '-V')) return res;
      if (res.wrappers[res.wrappers.length - 1] === 'env' && (text === '-S' || text === '--split-string' || text.startsWith('--split-string=') || /^-S./.test(text))) {
        const inline = text.startsWith('--split-string=') ? text.slice(15) : /^-S./.test(text) ? text.slice(2) : words[i + 1]?.text;
        if (inline !== undefined) res.payloads.push({ label: 'env -S', text: `${inline} ${joinWords(words, i + (inline === words[i + 1]?.text ? 2 : 1))}`.trim() });
        return res;
      }
      continue;
    }
    if (pendingPositionals > 0) {
      pendingPositionals--;
      continue;
    }
    if (/^\d+$/.test(text)) continue;
    const program = normalizeProgramToken(word.raw ?? text);
    const wrapperSpec = WRAPPERS[program];
    if (wrapperSpec !== undefined) {
      res.wrappers.push(program);
      wrapper = wrapperSpec;
      pendingPositionals = wrapperSpec.positionals;
      continue;
    }
    res.programIndex = i;
    res.program = program;
    if (SHELLS.has(program) || program === 'script') shellPayload(words, i + 1, res, program);
    else if (program === 'pwsh' || program === 'powershell' || program === 'pwsh-preview') powershellPayload(program, words, i + 1, res);
    else if (program === 'cmd') cmdPayload(words, i + 1, res);
    else if (program === 'eval') {
      if (words.slice(i + 1).some((w) => !w.literal)) res.opaque = 'eval of a string built at run time cannot be analyzed';
      res.payloads.push({ label: 'eval', text: joinWords(words, i + 1) });
    } else if (program === 'su') suPayload(words, i + 1, res);
    else if (program === 'watch') watchPayload(words, i + 1, res);
    else if (program === 'find') findNested(words, i + 1, res);
    return res;
  }
  return res;
}
