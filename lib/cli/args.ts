// SPDX-License-Identifier: MIT
// A small strict argument parser shared by every subcommand: unknown flags are usage errors (with
// the closest known flag suggested).
import { closest } from '../did-you-mean.js';

/** A usage error: printed on stderr with a pointer to --help; the process exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface FlagSpec {
  /** Long name without dashes, e.g. `json`. */
  name: string;
  /** One-letter alias without the dash, e.g. `c`. */
  short?: string;
  /** boolean: a switch; string: one value (last wins); list: repeatable value. */
  type: 'boolean' | 'string' | 'list';
}

export interface ParsedArgs {
  flags: Record<string, boolean | string | string[] | undefined>;
  positionals: string[];
  /** Everything after a literal `--`, when the command accepts it. */
  rest: string[] | undefined;
  help: boolean;
}

export interface ParseOptions {
  flags: FlagSpec[];
  /** Whether `--` ends option parsing and collects the rest. */
  acceptsRest?: boolean;
  /**
   * Whether the first operand also ends option parsing, as in `env`, `timeout` or `sudo`:
   * `run ls -la` runs `ls -la` (the operand and everything after it go to `rest`).
   */
  operandStartsRest?: boolean;
  /** The most positionals accepted (default 0). */
  maxPositionals?: number;
}

/** Parses argv strictly. `--flag=value`, `--flag value` and `-f value` are accepted. */
export function parseArgs(argv: string[], options: ParseOptions): ParsedArgs {
  const byLong = new Map(options.flags.map((flag) => [flag.name, flag]));
  const byShort = new Map(
    options.flags.filter((flag) => flag.short !== undefined).map((flag) => [flag.short as string, flag]),
  );
  const flags: ParsedArgs['flags'] = {};
  const positionals: string[] = [];
  let rest: string[] | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      if (!options.acceptsRest) throw new UsageError('unexpected argument "--"');
      rest = argv.slice(i + 1);
      break;
    }
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    let spec: FlagSpec | undefined;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      if (eq !== -1) inline = arg.slice(eq + 1);
      spec = byLong.get(name);
      if (spec === undefined) throw new UsageError(`unknown flag --${name}${suggest(name, options.flags)}`);
    } else if (arg.startsWith('-') && arg.length > 1) {
      // `-p value` and `-p=value`.
      const eq = arg.indexOf('=');
      if (eq === 2) inline = arg.slice(3);
      spec = byShort.get(eq === 2 ? arg.slice(1, 2) : arg.slice(1));
      if (spec === undefined) throw new UsageError(`unknown flag ${eq === 2 ? arg.slice(0, 2) : arg}${suggest(arg.replace(/^-+/, '').split('=')[0] ?? '', options.flags)}`);
    } else if (options.operandStartsRest) {
      rest = argv.slice(i);
      break;
    } else {
      positionals.push(arg);
      continue;
    }
    if (spec.type === 'boolean') {
      if (inline !== undefined) throw new UsageError(`flag --${spec.name} takes no value`);
      flags[spec.name] = true;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`--${spec.name} requires a value`);
      value = argv[++i] as string;
      // `--model --skip-permissions-unsafe cmd` would take the next flag as the value and drop it
      // unseen: a value that looks like a flag must be written inline. Numbers and `-` stay values.
      if (looksLikeFlag(value)) {
        throw new UsageError(`--${spec.name} requires a value: the next argument, ${value}, is a flag; write --${spec.name}=${value} if it is the value`);
      }
    }
    if (spec.type === 'string') {
      flags[spec.name] = value;
    } else {
      const list = (flags[spec.name] as string[] | undefined) ?? [];
      list.push(value);
      flags[spec.name] = list;
    }
  }
  const max = options.maxPositionals ?? 0;
  if (!help && positionals.length > max) {
    throw new UsageError(`unexpected argument "${positionals[max]}"`);
  }
  return { flags, positionals, rest, help };
}

/** Whether a separate value is really the next flag: it starts with `-`, and is neither `-` nor a number. */
function looksLikeFlag(value: string): boolean {
  return value.startsWith('-') && value !== '-' && !Number.isFinite(Number(value));
}

function suggest(name: string, flags: readonly FlagSpec[]): string {
  const hint = closest(name, [...flags.map((flag) => flag.name), 'help']);
  return hint === undefined ? '' : ` (did you mean --${hint}?)`;
}

export function flagString(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags[name];
  return typeof value === 'string' ? value : undefined;
}

export function flagList(args: ParsedArgs, name: string): string[] {
  const value = args.flags[name];
  return Array.isArray(value) ? value : [];
}

export function flagBool(args: ParsedArgs, name: string): boolean {
  return args.flags[name] === true;
}

/** Parses `--timeout SECONDS` into milliseconds (undefined when the flag is absent). */
export function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout must be a positive number of seconds, not "${value}"`);
  return Math.max(1, Math.round(seconds * 1000));
}
