// Benign work works inside the sandbox: exit codes and signals, large output on both streams,
// stdin, Python and Node scripts, reading system files, --allow-write, a relative cwd.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed } from '../../lib/sandbox/run.js';
import { spawnSandboxed } from '../../lib/sandbox/process.js';
import { runCli } from '../helpers/cli.js';
import { makeTree, rejection, sandboxTest, sh } from '../helpers/sandbox.js';

sandboxTest('exit codes and signals come back as the command left them', async () => {
  const t = makeTree();
  try {
    assert.is((await sh(t, 'exit 0')).exitCode, 0);
    assert.is((await sh(t, 'exit 42')).exitCode, 42);
    const killed = await sh(t, 'kill -TERM $$');
    assert.is(killed.exitCode, null);
    assert.is(killed.signal, 'SIGTERM');
    const segv = await sh(t, 'kill -SEGV $$');
    assert.is(segv.signal, 'SIGSEGV');
    const missing = await runSandboxed(['definitely-not-a-command-zs'], { workspace: t.ws });
    assert.is(missing.exitCode, 127);
    assert.is(missing.execError?.code, 'ENOENT');
    writeFileSync(join(t.ws, 'noexec.sh'), 'echo hi');
    const notExec = await runSandboxed(['./noexec.sh'], { workspace: t.ws });
    assert.is(notExec.exitCode, 126);
    assert.is(notExec.execError?.code, 'EACCES');
  } finally {
    t.cleanup();
  }
});

sandboxTest('large output on both streams and stdin round-trip intact', async () => {
  const t = makeTree();
  try {
    const r = await sh(t, 'head -c 8000000 /dev/zero | tr "\\0" a; head -c 3000000 /dev/zero | tr "\\0" b >&2');
    assert.is(r.stdout.length, 8_000_000);
    assert.is(r.stderr.length, 3_000_000);
    assert.ok(/^a+$/.test(r.stdout) && /^b+$/.test(r.stderr));
    const input = 'line\n'.repeat(100_000);
    const echoed = await runSandboxed(['cat'], { workspace: t.ws, input });
    assert.is(echoed.stdout, input);
    const error = await rejection(sh(t, 'head -c 100000 /dev/zero', { maxBuffer: 1000, onMaxBuffer: 'kill' }));
    assert.is(error.code, 'max_buffer_exceeded');
  } finally {
    t.cleanup();
  }
});

sandboxTest('Python and Node scripts run and can read system files', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.ws, 'a.py'), 'import json, sys\nprint(json.dumps({"py": sys.version_info[0]}))\n');
    writeFileSync(join(t.ws, 'a.mjs'), 'import { readFileSync } from "node:fs";\nconsole.log(readFileSync("/etc/os-release", "utf8").length > 0, process.env.ZERO_SANDBOXED);\n');
    const py = await runSandboxed(['python3', 'a.py'], { workspace: t.ws });
    assert.is(py.stdout.trim(), '{"py": 3}', py.stderr);
    const node = await runSandboxed([process.execPath, 'a.mjs'], { workspace: t.ws });
    assert.is(node.stdout.trim(), 'true 1', node.stderr);
    const sys = await sh(t, 'cat /etc/passwd | head -1; ls /usr/bin | wc -l');
    assert.match(sys.stdout, /^root:/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('--allow-write opens one more directory; a relative cwd resolves against the workspace', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'sub'));
    const r = await sh(t, `pwd; echo x > ${t.outside}/allowed`, { allowWrite: [t.outside], cwd: 'sub' });
    assert.is(r.stdout.trim(), join(t.ws, 'sub'));
    assert.is(readFileSync(join(t.outside, 'allowed'), 'utf8'), 'x\n');
    const outside = await rejection(sh(t, 'true', { cwd: t.outside }));
    assert.is(outside.code, 'invalid_argument');
    assert.match(outside.message, /outside the write roots/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('more than 32 separate write roots work (one mount slot each); past the limit an invalid_argument', async () => {
  const t = makeTree();
  try {
    const dirs = Array.from({ length: 40 }, (_, i) => join(t.outside, `r${i}`));
    for (const dir of dirs) mkdirSync(dir);
    mkdirSync(join(t.outside, 'not-allowed'));
    const r = await sh(t, `for d in ${dirs.join(' ')}; do echo x > "$d/f" || exit 1; done; echo y > ${t.outside}/not-allowed/f`, { allowWrite: dirs });
    assert.ok(dirs.every((dir) => readFileSync(join(dir, 'f'), 'utf8') === 'x\n'), 'every root is writable');
    assert.is.not(r.exitCode, 0);
    assert.throws(() => readFileSync(join(t.outside, 'not-allowed', 'f')), 'a sibling not allowed stays read-only');
    const many = Array.from({ length: 256 }, (_, i) => join(t.outside, `m${i}`));
    for (const dir of many) mkdirSync(dir);
    const refused = await rejection(sh(t, 'true', { allowWrite: many }));
    assert.is(refused.code, 'invalid_argument');
    assert.match(refused.message, /at most 256/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('spawnSandboxed streams and kill() stops the whole sandbox', async () => {
  const t = makeTree();
  try {
    const child = spawnSandboxed(['/bin/sh', '-c', 'echo ready; sleep 30'], { workspace: t.ws });
    const first = await new Promise<string>((resolve) => child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    assert.is(first, 'ready\n');
    assert.ok(child.kill('SIGTERM'));
    const exit = await child.exited;
    assert.is(exit.signal, 'SIGTERM');
    assert.not.ok(child.kill(), 'kill after exit reports false');
  } finally {
    t.cleanup();
  }
});

sandboxTest('zero-sandbox run passes stdio through and returns the exit code', async () => {
  const t = makeTree();
  try {
    const r = await runCli(['run', '--workspace', t.ws, '--', 'sh', '-c', 'cat; echo err >&2; exit 7'], { input: 'from-stdin' });
    assert.is(r.code, 7);
    assert.is(r.stdout, 'from-stdin');
    assert.is(r.stderr, 'err\n');
    const killed = await runCli(['run', '--workspace', t.ws, '-c', 'kill -KILL $$']);
    assert.is(killed.code, 137);
    const timeout = await runCli(['run', '--workspace', t.ws, '--timeout', '0.3', '--', 'sleep', '10']);
    assert.is(timeout.code, 124);
    const notFound = await runCli(['run', '--workspace', t.ws, '--', 'no-such-command-zs']);
    assert.is(notFound.code, 127);
    assert.match(notFound.stderr, /command not found/);
    const usage = await runCli(['run', '--network', 'maybe', '--', 'true']);
    assert.is(usage.code, 2);
    assert.match(usage.stderr, /--network must be deny or allow/);
    const noCommand = await runCli(['run']);
    assert.is(noCommand.code, 2);
    const badWorkspace = await runCli(['run', '--workspace', join(t.base, 'nope'), '--', 'true']);
    assert.is(badWorkspace.code, 2);
    assert.match(badWorkspace.stderr, /workspace .*nope does not exist/);
  } finally {
    t.cleanup();
  }
});

test.run();
