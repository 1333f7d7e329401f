// SPDX-License-Identifier: MIT
// Structured denials from the macOS unified log. The kernel logs every seatbelt refusal as
// `Sandbox: <name>(<pid>) deny(<count>) <operation> <target>`; each deny rule of a run's profile
// carries `(with message "<tag>")` with a random per-run tag, so `log stream` filtered on the tag
// yields this run's refusals only (whatever process of its tree caused them). The tag is never in
// the command's reach (it is in sandbox-exec's argv only, and sandbox-exec execs the command in
// place; other processes' argv cannot be read under the profile), so it cannot forge a line.
// The parser is pure; the monitor that runs `log stream` is best-effort reporting: when it cannot
// start, the run is unaffected (enforcement is the profile's, not the monitor's).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';

import type { SandboxDenial } from '../../sandbox/denials.js';

/** The unified log tool, pinned (a planted `log` on PATH is not used). */
export const LOG_TOOL = '/usr/bin/log';

/** Most denials kept per run: a command that hammers a denied path does not grow memory. */
export const MAX_LOGGED_DENIALS = 64;

/** A fresh tag for one run: `zsdeny` + 24 hex digits (only [a-z0-9], safe inside an SBPL string). */
export function buildDenialTag(bytes: Buffer = randomBytes(12)): string {
  return `zsdeny${bytes.toString('hex')}`;
}

/** True for a tag buildDenialTag could have made; anything else is refused before use. */
export function isDenialTag(tag: string): boolean {
  return /^zsdeny[0-9a-f]{8,64}$/.test(tag);
}

/**
 * Adds `(with message "<tag>")` to every top-level deny rule of an SBPL text, so each refusal the
 * kernel logs names this run. Comments, strings and regex literals are skipped while reading.
 */
export function tagDenyRules(profile: string, tag: string): string {
  if (!isDenialTag(tag)) throw new Error(`not a denial tag: ${JSON.stringify(tag)}`);
  let out = '';
  let depth = 0;
  let inDeny = false;
  for (let i = 0; i < profile.length; i++) {
    const ch = profile[i]!;
    if (ch === ';') {
      const end = profile.indexOf('\n', i);
      const stop = end === -1 ? profile.length : end;
      out += profile.slice(i, stop);
      i = stop - 1;
      continue;
    }
    if (ch === '"') {
      let j = i + 1;
      while (j < profile.length && profile[j] !== '"') j += profile[j] === '\\' ? 2 : 1;
      out += profile.slice(i, j + 1);
      i = j;
      continue;
    }
    if (ch === '(') {
      if (depth === 0) inDeny = profile.startsWith('(deny ', i) || profile.startsWith('(deny\n', i);
      depth++;
    } else if (ch === ')') {
      depth--;
      if (depth === 0 && inDeny) {
        out += ` (with message "${tag}"))`;
        inDeny = false;
        continue;
      }
    }
    out += ch;
  }
  return out;
}

/** The `log stream` arguments that deliver this run's refusals, one JSON object per line. */
export function buildLogStreamArgs(tag: string): string[] {
  if (!isDenialTag(tag)) throw new Error(`not a denial tag: ${JSON.stringify(tag)}`);
  return ['stream', '--style', 'ndjson', '--level', 'default', '--predicate', `eventMessage CONTAINS "${tag}"`];
}

/** What a denial line says, before it becomes a SandboxDenial. */
export interface SeatbeltViolation {
  /** The process name as the kernel printed it (at most 16 characters on macOS). */
  process: string;
  pid: number;
  /** The seatbelt operation, e.g. `file-read-data`, `network-outbound`, `process-exec*`. */
  operation: string;
  /** The path, address or name the operation was on; '' when the kernel printed none. */
  target: string;
}

// The process name is p_comm (MAXCOMLEN, 16 bytes): a name the command chose cannot hold a whole
// forged `(pid) deny(n) <operation>` sequence, and the operation must be one seatbelt names.
const VIOLATION = /Sandbox: (.{1,16}?)\((\d{1,10})\) deny\(\d{1,10}\) ((?:file|network|process-exec)[a-z*-]*)(?: (.*))?$/s;

/**
 * Parses one `log stream --style ndjson` line. Returns undefined for anything that is not a
 * seatbelt refusal carrying `tag` (the banner line, other messages, malformed JSON).
 */
export function parseSeatbeltLogLine(line: string, tag: string): SeatbeltViolation | undefined {
  let message: unknown;
  try {
    message = (JSON.parse(line) as { eventMessage?: unknown }).eventMessage;
  } catch {
    return undefined;
  }
  if (typeof message !== 'string' || !message.includes(tag)) return undefined;
  // The kernel appends the rule's message; where it sits varies by release, so every copy goes.
  const text = message.split(tag).join('').replace(/\s+$/, '');
  const match = VIOLATION.exec(text);
  if (match === null) return undefined;
  return { process: match[1]!, pid: Number(match[2]), operation: match[3]!, target: (match[4] ?? '').trim() };
}

/** The structured denial for a refusal (same vocabulary as the other backends' denials). */
export function buildSeatbeltDenial(v: SeatbeltViolation): SandboxDenial {
  const on = v.target === '' ? '' : ` ${v.target}`;
  const by = `(seatbelt ${v.operation} by ${v.process}[${v.pid}])`;
  if (v.operation.startsWith('network')) {
    return {
      capability: { kind: 'external_network', ...(v.target === '' ? {} : { scope: v.target }) },
      source: 'platform_sandbox',
      reason: `the sandbox blocked a network operation${on} ${by}`,
      recoverable: true,
      nextAction: 'request_approval',
    };
  }
  if (v.operation.startsWith('process-exec')) {
    return {
      capability: { kind: 'process_spawn', ...(v.target === '' ? {} : { scope: v.target }) },
      source: 'platform_sandbox',
      reason: `the sandbox blocked running${on} ${by}`,
      recoverable: false,
      nextAction: 'change_command',
    };
  }
  const write = v.operation.startsWith('file-write') || v.operation === 'file-link';
  return {
    capability: { kind: write ? 'workspace_write' : 'filesystem_read', ...(v.target === '' ? {} : { scope: v.target }) },
    source: 'platform_sandbox',
    reason: `the sandbox blocked ${write ? 'a write to' : 'reading'}${on === '' ? ' a file' : on} ${by}`,
    recoverable: true,
    nextAction: 'request_approval',
  };
}

/**
 * Turns the collected lines into denials: one per operation kind and target (a loop that retries
 * the same path is one denial), at most MAX_LOGGED_DENIALS.
 */
export function collectSeatbeltDenials(lines: readonly string[], tag: string): SandboxDenial[] {
  const seen = new Set<string>();
  const out: SandboxDenial[] = [];
  for (const line of lines) {
    const v = parseSeatbeltLogLine(line, tag);
    if (v === undefined) continue;
    const denial = buildSeatbeltDenial(v);
    const key = `${denial.capability.kind}\0${denial.capability.scope ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(denial);
    if (out.length >= MAX_LOGGED_DENIALS) break;
  }
  return out;
}

/** A running `log stream` for one run. */
export interface DenialMonitor {
  /** Ends the stream after `graceMs` (late log delivery) and returns the denials it saw. */
  stop(graceMs?: number): Promise<SandboxDenial[]>;
}

/** Longest line kept from `log stream` (a longer one is not a kernel sandbox message). */
const MAX_LINE = 16 * 1024;

/**
 * Starts `log stream` for `tag`. Never throws: a log tool that is missing or fails yields a monitor
 * that reports nothing (enforcement does not depend on it).
 */
export function startDenialMonitor(tag: string, logTool: string = LOG_TOOL): DenialMonitor {
  const lines: string[] = [];
  let child: ChildProcess | undefined;
  let partial = '';
  let closed: Promise<void> = Promise.resolve();
  try {
    child = spawn(logTool, buildLogStreamArgs(tag), { stdio: ['ignore', 'pipe', 'ignore'] });
    const started = child;
    closed = new Promise((resolve) => {
      started.on('error', () => resolve());
      started.on('close', () => resolve());
    });
    started.stdout?.setEncoding('utf8');
    started.stdout?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      if (partial.length > MAX_LINE) partial = '';
      for (const part of parts) if (part.length <= MAX_LINE && lines.length < MAX_LOGGED_DENIALS * 16) lines.push(part);
    });
  } catch {
    child = undefined;
  }
  return {
    async stop(graceMs = 150): Promise<SandboxDenial[]> {
      if (child !== undefined && child.exitCode === null && child.pid !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, graceMs));
        child.kill('SIGTERM');
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000))]);
      }
      if (partial !== '') lines.push(partial);
      partial = '';
      return collectSeatbeltDenials(lines, tag);
    },
  };
}
