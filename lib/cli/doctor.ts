// SPDX-License-Identifier: MIT
// `zero-sandbox doctor [--json]`: what this machine can enforce, measured, with fixes.
import { SandboxError } from '../errors.js';
import { probe, type LayerName, type ProbeReport } from '../probe.js';
import type { CanaryResult } from '../selftest.js';
import { flagBool, parseArgs } from './args.js';
import type { CliIo } from './io.js';

export const DOCTOR_HELP = `Usage: zero-sandbox doctor [--json]

Measures which isolation layers this machine can enforce by trying each one in a
short-lived child process (user, mount, pid, network, IPC and UTS namespaces,
Landlock, seccomp) and whether the shell command analyzer loads, and says why a missing
layer is missing and how to fix it.
Then runs real canaries inside a sandbox (read a denied file, write outside the
workspace, connect to a host listener, open a host Unix socket) and reports each
as enforced or not.

Options:
  --json      print the probe report as JSON
  -h, --help  show this help

Exit status: 0 when the native backend can enforce the default policy and every
canary was stopped, 1 when a layer is missing or a canary got through, 2 for
usage errors.
`;

const LAYER_ORDER: LayerName[] = ['userns', 'mountns', 'pidns', 'netns', 'ipcns', 'utsns', 'landlock', 'seccomp'];

/** The shell command analyzer's layer: the parser every shell-string decision depends on. */
interface AnalyzerLayer {
  available: boolean;
  measuredBy: string;
  reason?: string;
  fix?: string;
}

type DoctorReport = ProbeReport & { canaries: CanaryResult[]; canariesSkipped?: string; analyzer: AnalyzerLayer };

/** Loads the shell parser and parses one command, as the engine would. */
async function probeAnalyzer(): Promise<AnalyzerLayer> {
  const { loadShellParser, parseShell, PARSER_FIX } = await import('../bash/parse.js');
  const status = await loadShellParser();
  const probe = status.state === 'ready' ? parseShell('true && echo "$(printf ok)"') : undefined;
  if (probe?.ok === true) return { available: true, measuredBy: 'parsed a test command with tree-sitter-bash (WebAssembly)' };
  const reason = status.state === 'failed' ? status.reason : (probe?.ok === false ? probe.reason : 'the parser did not load');
  return { available: false, measuredBy: 'loading tree-sitter-bash (WebAssembly)', reason, fix: PARSER_FIX };
}

function formatText(report: DoctorReport): string {
  const lines: string[] = [];
  lines.push('zero-sandbox doctor');
  lines.push(`platform   ${report.platform} ${report.arch} (kernel ${report.kernelRelease || 'unknown'})`);
  lines.push(`user       ${report.isRoot ? 'root' : 'not root'} (uid ${report.uid})`);
  lines.push(`backend    ${report.backend}`);
  lines.push('');
  const rows: (readonly [string, string, string])[] = LAYER_ORDER.filter((name) => report.layers[name] !== undefined).map((name) => {
    const layer = report.layers[name]!;
    let state = layer.available ? 'ok' : 'MISSING';
    if (name === 'landlock' && layer.available) state = `ok (ABI ${report.landlockAbi})`;
    const detail = layer.available ? layer.measuredBy : `${layer.reason ?? ''}`;
    return [name, state, detail] as const;
  });
  const analyzer = report.analyzer;
  rows.push(['analyzer', analyzer.available ? 'ok' : 'MISSING', analyzer.available ? analyzer.measuredBy : (analyzer.reason ?? '')]);
  lines.push(`${'layer'.padEnd(10)}${'status'.padEnd(12)}detail`);
  for (const [name, state, detail] of rows) lines.push(`${name.padEnd(10)}${state.padEnd(12)}${detail}`);
  lines.push('');
  if (!report.macos.applicable) lines.push('macos      not this platform');
  if (!report.windows.applicable) lines.push('windows    not this platform');
  else lines.push(...networkProbeLines(report.windows));
  if (report.disabledForTesting.length > 0) {
    lines.push(`test       layers disabled for testing: ${report.disabledForTesting.join(', ')}`);
  }
  if (report.canaries.length > 0) {
    lines.push('canaries (run inside a real sandbox)');
    for (const canary of report.canaries) {
      lines.push(`  ${canary.name.padEnd(26)}${(canary.enforced ? 'enforced' : 'NOT ENFORCED').padEnd(14)}${canary.layer.padEnd(18)}${canary.detail}`);
    }
  } else if (report.canariesSkipped !== undefined) {
    lines.push(`canaries   skipped: ${report.canariesSkipped}`);
  }
  lines.push('');
  if (!analyzer.available) {
    lines.push(`Analyzer: shell commands cannot be analyzed, so every one needs approval (headless: denied).`);
    lines.push(`  missing analyzer: ${analyzer.reason ?? ''}`);
    lines.push(`    fix: ${analyzer.fix ?? ''}`);
  }
  const breached = report.canaries.filter((c) => !c.enforced);
  if (breached.length > 0) {
    lines.push(`Result: ${breached.length} canary got through (${breached.map((c) => c.name).join(', ')}); do not rely on this sandbox here.`);
  } else if (report.canEnforceDefaultPolicy) {
    lines.push('Result: the native backend can enforce the default policy.');
  } else {
    lines.push('Result: the default policy cannot be enforced here; commands will be refused, not run weaker.');
    for (const item of report.missing) {
      lines.push(`  missing ${item.layer}: ${item.reason}`);
      lines.push(`    fix: ${item.fix}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Windows: the connection tried from inside a container, with the codes the container saw. */
function networkProbeLines(windows: ProbeReport['windows']): string[] {
  const found = windows.networkProbe;
  if (found === undefined) return [`netprobe   not run: ${windows.networkProbeSkipped ?? 'not measured'}`];
  const seen = (a: typeof found.loopback): string => `${a.target} ${a.result}${a.code === undefined ? '' : ` ${a.code}`}`;
  const label = found.outcome === 'isolated' ? 'ok' : found.outcome === 'inconclusive' ? 'INCONCLUSIVE' : 'REFUSES DENY';
  return [
    `netprobe   ${label} (${found.outcome}, ${found.durationMs} ms): ${found.detail}`,
    `           seen from inside: ${seen(found.loopback)} (arrived at the listener: ${found.loopbackArrivals}); ${seen(found.testNet)}`,
  ];
}

export async function runDoctor(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { flags: [{ name: 'json', type: 'boolean' }] });
  if (args.help) {
    io.stdout(DOCTOR_HELP);
    return 0;
  }
  let probed: ProbeReport;
  try {
    // This platform's backend module first: on Windows probe() tries a connection from inside a
    // container through it (lib/backend/current.ts hands probe() the way there).
    await import('../backend/current.js');
    probed = await probe();
  } catch (error) {
    if (!(error instanceof SandboxError) || error.code !== 'native_unavailable') throw error;
    return reportWithoutAddon(error, flagBool(args, 'json'), io);
  }
  const report: DoctorReport = { ...probed, canaries: [], analyzer: await probeAnalyzer() };
  if (probed.canEnforceDefaultPolicy) {
    const { runSelfTest } = await import('../selftest.js');
    report.canaries = await runSelfTest();
  } else {
    report.canariesSkipped = 'the sandbox cannot be set up here, so no command would run';
  }
  if (flagBool(args, 'json')) {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    io.stdout(formatText(report));
  }
  return report.canEnforceDefaultPolicy && report.canaries.every((c) => c.enforced) && report.analyzer.available ? 0 : 1;
}

/**
 * No native addon (an install without a prebuild for this platform that could not compile one):
 * nothing can be measured or run, and every sandboxed run is refused; the analyzer, which needs no
 * native code, is still checked. Exit 1.
 */
async function reportWithoutAddon(error: SandboxError, json: boolean, io: CliIo): Promise<number> {
  const analyzer = await probeAnalyzer();
  const fix = 'run `npm rebuild zero-sandbox` with python3, make and a C++ compiler installed (or install a release that ships a prebuild for this platform)';
  const addon = { available: false, reason: error.message, fix };
  if (json) {
    const report = {
      platform: process.platform,
      arch: process.arch,
      backend: 'unavailable',
      canEnforceDefaultPolicy: false,
      addon,
      missing: [{ layer: 'addon', reason: error.message, fix }],
      analyzer,
      canaries: [],
      canariesSkipped: 'the native addon is missing, so no command would run',
    };
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
    return 1;
  }
  const lines = [
    'zero-sandbox doctor',
    `platform   ${process.platform} ${process.arch}`,
    'backend    unavailable',
    '',
    `${'layer'.padEnd(10)}${'status'.padEnd(12)}detail`,
    `${'addon'.padEnd(10)}${'MISSING'.padEnd(12)}${error.message}`,
    `${'analyzer'.padEnd(10)}${(analyzer.available ? 'ok' : 'MISSING').padEnd(12)}${analyzer.available ? analyzer.measuredBy : (analyzer.reason ?? '')}`,
    '',
    'Result: the native addon is missing; every sandboxed run is refused (native_unavailable), never run unsandboxed.',
    `  fix: ${fix}`,
  ];
  io.stdout(`${lines.join('\n')}\n`);
  return 1;
}
