// SPDX-License-Identifier: MIT
// What the Windows glue receives for a plan: argv[0] resolved on the command's PATH and PATHEXT,
// the command line cmd.exe or the program parses, and the AppContainer spec. Pure apart from the
// injected file check.
import { win32 } from 'node:path';

import { SandboxError } from '../../errors.js';
import type { SandboxPlan } from '../types.js';
import { buildBatchCommandLine, buildWindowsCommandLine } from './command-line.js';
import { buildAppContainerSpec, buildNativeWindowsSpec, type NativeWindowsSpec } from './spec.js';

const ABSOLUTE_WINDOWS = /^(?:[A-Za-z]:\\|\\\\[^\\]+\\[^\\]+)/;

/**
 * Resolves argv[0] against the command's PATH and PATHEXT (CreateProcessW would otherwise search
 * node.exe's directory and our current directory first). Throws exec_failed naming the program.
 */
export function resolveWindowsProgram(program: string, env: Readonly<Record<string, string>>, cwd: string, isFile: (path: string) => boolean): string {
  if (ABSOLUTE_WINDOWS.test(program)) return win32.normalize(program);
  const exts = (env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((e) => e !== '');
  const hasExt = exts.some((ext) => program.toLowerCase().endsWith(ext.toLowerCase()));
  const candidates = (base: string): string[] => (hasExt ? [base] : exts.map((ext) => base + ext.toLowerCase()));
  const dirs = /[\\/]/.test(program) ? [cwd] : (env.PATH ?? '').split(';').filter((d) => ABSOLUTE_WINDOWS.test(d));
  for (const dir of dirs) {
    for (const candidate of candidates(win32.join(dir, program))) if (isFile(candidate)) return candidate;
  }
  throw new SandboxError('exec_failed', `${program} was not found on the command's PATH (with PATHEXT ${exts.join(';')})`, { path: program });
}

/** One stdio entry for the Windows glue: NUL, one of ours (0-2), or a named pipe to open. */
export type WindowsStdioEntry = 'ignore' | number | { pipe: string; nonce: string };

/** The object `binding.spawn` receives on Windows (native/windows/spawn_glue_windows.cc). */
export interface WindowsSpawnSpec {
  /** The environment block, `KEY=value`, sorted as Windows expects. */
  env: string[];
  /** The working directory. */
  cwd: string;
  /** stdin, stdout, stderr. */
  stdio: [WindowsStdioEntry, WindowsStdioEntry, WindowsStdioEntry];
  /** The AppContainer spec, flat (`backend::WindowsSpec`). */
  windows: NativeWindowsSpec;
}

/**
 * The host facts of the Windows read set (read-grants.ts), from our own environment: the user's
 * profile, the directory of this node.exe, and the directories ALL APPLICATION PACKAGES already
 * read (never given an ACE). Pure.
 */
export function buildReadGrantFacts(env: Readonly<Record<string, string | undefined>>, execPath: string): NonNullable<Parameters<typeof buildAppContainerSpec>[1]['readGrants']> {
  const get = (name: string): string | undefined => Object.entries(env).find(([key]) => key.toUpperCase() === name.toUpperCase())?.[1];
  const systemDirs = ['SystemRoot', 'ProgramFiles', 'ProgramFiles(x86)', 'ProgramW6432'].map(get).filter((dir): dir is string => dir !== undefined);
  const home = get('USERPROFILE');
  return { ...(home === undefined ? {} : { home }), execDir: win32.dirname(execPath), systemDirs };
}

/** Builds what the Windows glue receives from a plan (argv[0] already resolved). Pure. */
export function buildWindowsSpawnSpec(plan: SandboxPlan, tmpDir: string, stdio: WindowsSpawnSpec['stdio']): WindowsSpawnSpec {
  // The read-all posture cannot be an ACL on a volume: reads are what AppContainers may read.
  const spec = buildAppContainerSpec({ ...plan, readRoots: plan.readRoots.filter((r) => r !== '/') }, { tmpDir, readGrants: buildReadGrantFacts(process.env, process.execPath) });
  const [program, ...rest] = plan.argv;
  // cmd.exe parses its own command line: `/s /c "text"` strips the outer quotes and runs text as typed.
  const shell = rest.length === 4 && rest[0] === '/d' && rest[1] === '/s' && rest[2] === '/c' && /cmd\.exe$/i.test(program ?? '');
  if (shell) spec.commandLine = `${buildWindowsCommandLine([program ?? ''])} /d /s /c "${rest[3] ?? ''}"`;
  else if (/\.(?:cmd|bat)$/i.test(program ?? '')) {
    // A batch file runs under cmd.exe, which re-parses its arguments: quoted for cmd.exe, or refused.
    const root = plan.env.SystemRoot ?? plan.env.SYSTEMROOT ?? 'C:\\Windows';
    spec.commandLine = buildBatchCommandLine(plan.env.ComSpec ?? plan.env.COMSPEC ?? win32.join(root, 'System32', 'cmd.exe'), plan.argv);
  }
  return { env: spec.env, cwd: spec.cwd, stdio, windows: buildNativeWindowsSpec(spec) };
}

