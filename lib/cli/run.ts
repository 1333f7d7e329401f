// SPDX-License-Identifier: MIT
// `zero-sandbox run`: one command in the sandbox, stdio passed through, the command's exit code.
import { constants } from 'node:os';
import { resolve } from 'node:path';

import * as risk from '../bash/risk.js';
import * as prefix from '../bash/prefix.js';
import * as parse from '../bash/parse.js';
import { prepareShellParser } from '../bash/analyze.js';
import { SandboxError } from '../errors.js';
import { buildAnalyzer } from '../policy/engine/analyzer.js';
import { createEngine } from '../policy/engine/create-engine.js';
import { authorizeRun, commandText } from '../sandbox/authorize.js';
import { execExhausted, execFailureMessage, startSandboxed, type SandboxedProcess } from '../sandbox/process.js';
import type { SandboxExit } from '../sandbox/contract.js';
import { ALONE_PAUSES_MS } from '../sandbox/run-admission.js';
import { prepareHostBackend, quickBackendInfo } from '../backend/current.js';
import { interruptedRunNotice } from '../sandbox/missed-checks.js';
import { tmpfsCapDenial } from '../sandbox/denials.js';
import type { SandboxOptions } from '../sandbox/options.js';
import { buildLimitsFromFlags, LIMIT_FLAG_DEFS, LIMIT_FLAGS_HELP } from './limit-flags.js';
import { UsageError, flagList, flagString, parseArgs, parseTimeout } from './args.js';
import { isTerminal } from './terminal.js';
import { warnParserFailure } from './io.js';
import type { CliIo } from './io.js';

/** Said on stderr before a run that goes without the default process cap (never silently). */
export const NO_PROCESS_CAP_WARNING = 'zero-sandbox run: warning: no process cap (limits.processes) in this run: the caller is root, no writable pids cgroup was found and the kernel is older than 6.14; run as an ordinary user to get one\n';

export const RUN_HELP = `Usage: zero-sandbox run [options] [--] CMD [ARGS...]
       zero-sandbox run [options] -c 'SHELL STRING'

Options end at the first word that is not one (or at --): \`run ls -la\` runs \`ls -la\`.

Runs one command inside the sandbox: writes only in the workspace (and --allow-write
directories) and a private /tmp, no network unless --network allow, credentials hidden,
secrets scrubbed from the environment. Standard input and output pass through.

The permission engine decides first, with your config ($XDG_CONFIG_HOME/zero/config.json,
<workspace>/.zero/config.json) and grants: a command it denies does not run; when it asks
(network, destructive commands, ...) you are asked on the terminal (once, session, always,
deny); without a terminal the request is denied. --network allow answers the network prompt.

Options:
  --workspace DIR      writable workspace root (default: the current directory)
  --cwd DIR            working directory inside a write root (relative to the workspace)
  --network deny|allow network access (default: deny)
  --allow-write P      also allow writes under directory P (repeatable; --add-dir is the same)
  --allow-read P       extra readable root (repeatable)
  --deny-read P        hide P from the command (repeatable)
  --deny-write P       keep P read-only (repeatable)
  --timeout SECONDS    kill the sandbox after SECONDS
${LIMIT_FLAGS_HELP}  -c STRING            run STRING with /bin/sh -c
  --output-format F    text (default: stdio passed through), stream-json (stream-json v2
                       events on stdout, output captured and redacted) or json (snake_case
                       records, one per line, ending with {"type":"done","exit_code":N})
  -h, --help           show this help

A start refused for want of descriptors, processes or namespaces (the user's limits, which
other commands' sandboxes may hold) is tried again for up to 8 s (at most --timeout), said
once on stderr.

Exit status: the command's; 128+N when killed by signal N; 124 on timeout; 125 when the
sandbox could not be set up or would have been weaker than asked (reason on stderr);
126 not executable; 127 not found; 1 when the permission engine denied the command or
approval was required and not given; 2 for usage errors; 3 for config errors.
`;

const FLAGS = [
  { name: 'workspace', type: 'string' as const },
  { name: 'cwd', type: 'string' as const },
  { name: 'network', type: 'string' as const },
  { name: 'allow-write', type: 'list' as const },
  { name: 'add-dir', type: 'list' as const },
  { name: 'allow-read', type: 'list' as const },
  { name: 'deny-read', type: 'list' as const },
  { name: 'deny-write', type: 'list' as const },
  { name: 'timeout', type: 'string' as const },
  { name: 'command', short: 'c', type: 'string' as const },
  { name: 'output-format', type: 'string' as const },
  ...LIMIT_FLAG_DEFS,
];

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };

export async function runRun(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { flags: FLAGS, acceptsRest: true, operandStartsRest: true });
  if (args.help) {
    io.stdout(RUN_HELP);
    return 0;
  }
  const shell = flagString(args, 'command');
  const rest = args.rest ?? [];
  if (shell !== undefined && rest.length > 0) throw new UsageError('give either -c STRING or -- CMD, not both');
  if (shell === undefined && rest.length === 0) throw new UsageError('no command: use CMD [ARGS...] (or -- CMD) or -c STRING');
  const network = flagString(args, 'network');
  if (network !== undefined && network !== 'deny' && network !== 'allow') {
    throw new UsageError(`--network must be deny or allow, not "${network}"`);
  }
  const timeout = flagString(args, 'timeout');
  const timeoutMs = parseTimeout(timeout);
  const options: SandboxOptions = {
    // One command per process: a prewarmed sandbox would never be used.
    prewarm: false,
    allowWrite: [...flagList(args, 'allow-write'), ...flagList(args, 'add-dir')],
    allowRead: flagList(args, 'allow-read'),
    denyRead: flagList(args, 'deny-read'),
    denyWrite: flagList(args, 'deny-write'),
  };
  const limits = buildLimitsFromFlags(args);
  if (Object.keys(limits).length > 0) options.limits = limits;
  const workspace = flagString(args, 'workspace');
  const cwd = flagString(args, 'cwd');
  if (workspace !== undefined) options.workspace = workspace;
  if (cwd !== undefined) options.cwd = cwd;
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  if (network !== undefined) options.network = network;
  const format = flagString(args, 'output-format') ?? 'text';
  if (format !== 'text') {
    // Structured output: a separate path in lib/stream-json (loaded only here, so text stays cheap).
    if (format !== 'stream-json' && format !== 'json') throw new UsageError(`--output-format must be text, stream-json or json, not "${format}"`);
    const { runCommandStructured } = await import('../stream-json/headless.js');
    return runCommandStructured({ format, io, command: shell ?? rest, runOptions: options });
  }

  const command = shell ?? rest;
  const argv0 = shell === undefined ? (rest[0] as string) : '/bin/sh';
  let cleanup = () => {};
  let exit: SandboxExit;
  try {
    const authorized = await authorize(command, options, workspace, io);
    cleanup = authorized.cleanup;
    await prepareHostBackend(authorized.options.network ?? 'deny');
    // The options are built from flags parsed above, so the API's schema check (and zod) is skipped.
    exit = await startAndWait(() => startSandboxed(command, { ...authorized.options, stdio: 'inherit' }), argv0, io, timeoutMs);
  } catch (error) {
    cleanup();
    if (error instanceof SandboxError && !exitFailures.has(error)) {
      if (error.code === 'config_invalid') throw error;
      io.stderr(`zero-sandbox run: ${error.message} [${error.code}]\n`);
      if (['permission_denied', 'approval_required', 'aborted'].includes(error.code)) return 1;
      return error.code === 'invalid_argument' ? 2 : 125;
    }
    throw error;
  }
  cleanup();
  for (const { path, reason } of exit.interruptedRunRepairs ?? []) io.stderr(`zero-sandbox run: ${interruptedRunNotice(path, reason ?? '')}\n`);
  for (const { path, reason } of exit.protectedPathDetails ?? exit.protectedPathViolations.map((p) => ({ path: p, reason: '' }))) {
    // The reason says what was found and what was done about it (put back, removed); without one,
    // the path was created and removed.
    if (reason !== undefined && reason !== '') io.stderr(`zero-sandbox run: ${path}: ${reason}\n`);
    else io.stderr(`zero-sandbox run: sandbox blocked creation of protected workspace metadata path ${path} (removed)\n`);
  }
  if (exit.protectedPathViolations.length > 0 && exit.exitCode === 0) return 1;
  if (exit.limitsHit?.includes('processes') === true) {
    io.stderr('zero-sandbox run: the command reached the process cap (limits.processes); forks were refused. Raise it with --limit-processes N\n');
  }
  for (const cap of ['tmpBytes', 'shmBytes'] as const) {
    if (exit.limitsHit?.includes(cap) === true) io.stderr(`zero-sandbox run: ${tmpfsCapDenial(cap).reason}\n`);
  }
  if (exit.networkRefusals !== undefined) {
    const sends = `${exit.networkRefusals} network send${exit.networkRefusals === 1 ? '' : 's'}`;
    io.stderr(`zero-sandbox run: the sandbox refused ${sends} to addresses outside it (the network is denied); allow it with --network allow\n`);
  }
  // Reads of hidden files (Linux: the kernel saw the mask opened; macOS: the seatbelt log).
  for (const denial of exit.platformDenials ?? []) io.stderr(`zero-sandbox run: ${denial.reason}\n`);
  if (exit.timedOut) {
    io.stderr(`zero-sandbox run: timed out after ${timeout} s; the sandbox was killed (give it longer with --timeout SECONDS)\n`);
    return 124;
  }
  if (exit.execError !== undefined) {
    io.stderr(`zero-sandbox run: ${execFailureMessage(argv0, exit.execError)}`);
    return exit.exitCode ?? (exit.execError.code === 'ENOENT' ? 127 : 126);
  }
  if (exit.signal !== null) return 128 + (SIGNAL_NUMBERS[exit.signal] ?? constants.signals[exit.signal]);
  return exit.exitCode ?? 125;
}

/** Failures of the host-side work after an exit: not start failures, so reported as before. */
const exitFailures = new WeakSet<SandboxError>();

/**
 * Starts the command and waits for its sandbox to be gone, with Ctrl-C and friends forwarded (the
 * sandbox's init passes them to the command). A start refused for descriptors, processes or
 * namespaces (nothing ran; the command's execve refused with EAGAIN too) is made again after each
 * of runSandboxed's pauses for a start with no other run in flight: what other processes' runs
 * held may be freed meanwhile (a user namespace is freed by the kernel a little after its run).
 */
async function startAndWait(start: () => SandboxedProcess, argv0: string, io: CliIo, timeoutMs: number | undefined): Promise<SandboxExit> {
  // --timeout bounds the waits too: the command never started, but was given no longer.
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  let told = false;
  const wait = async (why: string, pause: number): Promise<void> => {
    if (!told) io.stderr(`zero-sandbox run: ${why}; trying again for up to ${Math.round(ALONE_PAUSES_MS.reduce((sum, ms) => sum + ms, 0) / 1000)} s\n`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, pause));
  };
  for (const pause of [...ALONE_PAUSES_MS, undefined]) {
    let child: SandboxedProcess;
    try {
      child = start();
    } catch (error) {
      if (pause === undefined || Date.now() + pause > deadline || !(error instanceof SandboxError) || error.code !== 'resource_exhausted') throw error;
      await wait(error.message, pause);
      continue;
    }
    if (child.limitsNotEnforced.includes('processes')) io.stderr(NO_PROCESS_CAP_WARNING);
    const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((signal) => {
      const handler = () => child.kill(signal);
      process.on(signal, handler);
      return [signal, handler] as const;
    });
    let exit: SandboxExit;
    try {
      exit = await child.exited;
    } catch (error) {
      if (error instanceof SandboxError) exitFailures.add(error);
      throw error;
    } finally {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    }
    const refused = execExhausted(argv0, exit);
    if (refused === undefined || pause === undefined || Date.now() + pause > deadline) return exit;
    await wait(refused.message, pause);
  }
  throw new Error('unreachable: the last attempt returns or throws');
}

/**
 * The engine with the user's config and grants decides first; a terminal answers its prompts.
 * Everything this needs is imported statically, so the run path's modules load in one batch
 * instead of a chain of dynamic imports (the cold-start budget).
 */
async function authorize(command: string | string[], options: SandboxOptions, workspace: string | undefined, io: CliIo) {
  // Prepared for the text the engine will classify: an argv is quoted into one shell string.
  const parser = await prepareShellParser(commandText(command));
  if (parser.state === 'failed') warnParserFailure(io, 'run', parser.reason);
  const backend = quickBackendInfo();
  const engine = await createEngine({
    workspaceRoot: resolve(workspace ?? process.cwd()),
    analyzer: buildAnalyzer({ risk, prefix, parse }),
    ...(backend === undefined ? {} : { backend }),
  });
  for (const warning of engine.config?.warnings ?? []) io.stderr(`zero-sandbox run: warning: ${warning}\n`);
  const notice = engine.consumeMigrationNotice();
  if (notice !== undefined) io.stderr(`zero-sandbox run: ${notice}\n`);
  const interactive = isTerminal(0) && isTerminal(2);
  const responder = interactive ? (await import('../policy/approval/terminal-prompt.js')).askOnTerminal : undefined;
  return authorizeRun(command, { ...options, engine, ...(responder === undefined ? {} : { onPermissionRequest: responder }) }, 'cli');
}
