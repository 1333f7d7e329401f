#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Cross-compiles the freestanding init helper (native/linux/init_main.cc and its sources in binding.gyp) for aarch64 with the
// flags binding.gyp gives it, checks that it links with no undefined symbols, and runs it under
// qemu-user inside a new user + pid namespace: a command's output and exit status, the exec
// failure report, and the refusal to run as anything but pid 1. Exits non-zero on any failure.
// Usage: node scripts/check-arm64-init.mjs
//   (needs: apt-get install -y g++-aarch64-linux-gnu qemu-user-static)
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cxx = process.env.ZERO_SANDBOX_ARM64_CXX ?? 'aarch64-linux-gnu-g++';
const qemu = process.env.ZERO_SANDBOX_QEMU_ARM64 ?? 'qemu-aarch64-static';
const outDir = join(root, 'build', 'check-arm64');
const binary = join(outDir, 'zero_sandbox_init');
const INSTALL = 'apt-get install -y g++-aarch64-linux-gnu qemu-user-static';

function fail(message) {
  process.stderr.write(`check:arm64-init: ${message}\n`);
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', ...options });
  if (result.error?.code === 'ENOENT') fail(`${command} not found on PATH; install it with: ${INSTALL}`);
  if (result.error) fail(`${command}: ${result.error.message}`);
  return result;
}

/** The init target's freestanding settings, read from binding.gyp (comments stripped). */
function freestandingFlags() {
  const text = readFileSync(join(root, 'binding.gyp'), 'utf8').split('\n').map((line) => line.replace(/^\s*#.*$/, '')).join('\n');
  const gyp = JSON.parse(text);
  const init = gyp.targets.find((target) => target.target_name === 'zero_sandbox_init');
  const linux = init?.conditions?.find(([cond]) => cond === "OS=='linux'")?.[1];
  const arch = linux?.conditions?.find(([cond]) => cond.includes("target_arch=='arm64'"))?.[1];
  if (linux === undefined || arch === undefined) fail('binding.gyp has no freestanding arm64 settings for zero_sandbox_init');
  return {
    initSources: linux.sources,
    cflags: [...linux.cflags_cc, ...arch.cflags_cc, ...arch.defines.map((d) => `-D${d}`)],
    ldflags: arch.ldflags,
  };
}

mkdirSync(outDir, { recursive: true });
const { cflags, ldflags, initSources } = freestandingFlags();
const compile = run(cxx, ['-O2', '-fno-exceptions', '-fno-rtti', '-Inative', ...cflags, ...ldflags, '-o', binary, ...initSources]);
if (compile.status !== 0) fail(`compile failed:\n${compile.stderr}`);
process.stdout.write(`compile ${initSources.join(' ')} for aarch64 (${cflags.join(' ')})\n`);
const nm = run('aarch64-linux-gnu-nm', ['-u', binary]);
if (nm.status !== 0 || nm.stdout.trim() !== '') fail(`undefined symbols in the freestanding init:\n${nm.stdout}${nm.stderr}`);

/** Runs the init under qemu as pid 1 of a new pid namespace; returns its exit status and report. */
function runInit(args, { asPid1 = true } = {}) {
  const report = join(outDir, 'report');
  const inner = asPid1
    ? `exec ${qemu} ${binary} "$@" 3>${report}`
    : `${qemu} ${binary} "$@" 3>${report}; echo "exit=$?"`;
  const result = run('unshare', ['-Urpf', '--mount-proc', 'sh', '-c', inner, 'sh', ...args], { timeout: 30_000 });
  const bytes = readFileSync(report);
  const records = [];
  for (let i = 0; i + 8 <= bytes.length; i += 8) records.push([bytes.readInt32LE(i), bytes.readInt32LE(i + 4)]);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, records };
}

const echoed = runInit(['/bin/echo', 'hello-arm64']);
if (echoed.stdout !== 'hello-arm64\n' || echoed.status !== 0 || JSON.stringify(echoed.records) !== '[[2,0]]') {
  fail(`echo under the init: ${JSON.stringify(echoed)}`);
}
const exited = runInit(['/bin/sh', '-c', 'sleep 30 & exit 7']);
if (JSON.stringify(exited.records) !== JSON.stringify([[2, 7 << 8]])) fail(`exit 7 with a background child: ${JSON.stringify(exited)}`);
const missing = runInit(['zero-sandbox-no-such-command']);
if (JSON.stringify(missing.records) !== JSON.stringify([[1, 2], [2, 127 << 8]])) fail(`missing command: ${JSON.stringify(missing)}`);
// Not pid 1 (the shell is): it must refuse before starting anything.
const refused = runInit(['/bin/echo', 'must-not-run'], { asPid1: false });
if (refused.stdout !== 'exit=125\n' || JSON.stringify(refused.records) !== JSON.stringify([[1, 22]])) {
  fail(`the init ran although it was not pid 1: ${JSON.stringify(refused)}`);
}
process.stdout.write('ok: aarch64 init links freestanding and runs commands under qemu (output, exit status, exec failure, pid-1 guard)\n');
