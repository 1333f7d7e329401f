// SPDX-License-Identifier: MIT
// A shell string of any size up to the input limit runs: past 32 KiB it reaches the shell as a
// sealed in-memory file on fd 4, not as an argv string (the kernel refuses one over 128 KiB), and
// the command can neither change that file nor find it on the host's disk.
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { makeTree, rejection, sandboxTest } from '../helpers/sandbox.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { SCRIPT_FD_BYTES, normalizeCommand } from '../../lib/sandbox/options.js';

sandboxTest('a 16 MiB script runs whole, with the shell asked for; short strings keep `sh -c`', async () => {
  const t = makeTree();
  try {
    const filler = `# ${'f'.repeat(1000)}\n`.repeat(16 * 1024 - 8);
    const script = `echo start "$0"\n${filler}echo end\n`;
    assert.ok(Buffer.byteLength(script) > 16 * 1000 * 1000);
    const r = await runSandboxed(script, { workspace: t.ws, shell: '/bin/bash' });
    assert.is(r.exitCode, 0, r.stderr);
    assert.is(r.stdout, 'start /proc/self/fd/4\nend\n');
    const short = await runSandboxed('echo "$0"', { workspace: t.ws });
    assert.is(short.stdout, '/bin/sh\n');
    assert.equal(normalizeCommand('x'.repeat(SCRIPT_FD_BYTES)), ['/bin/sh', '-c', 'x'.repeat(SCRIPT_FD_BYTES)]);
    assert.equal(normalizeCommand('x'.repeat(SCRIPT_FD_BYTES + 1), '/bin/bash'), ['/bin/bash', '/proc/self/fd/4']);
  } finally {
    t.cleanup();
  }
});

sandboxTest('the script file is sealed: the command cannot rewrite what runs next, and it is not on the host', async () => {
  const t = makeTree();
  try {
    const before = new Set(readdirSync(tmpdir()));
    const padding = `# ${'p'.repeat(100)}\n`.repeat(400);
    // Try to overwrite and to extend the script through every path to it, then see what runs.
    const script = `printf 'echo HIJACKED\\n' >> /proc/self/fd/4 2>/dev/null && echo appended
printf 'echo HIJACKED\\n' 1<>/proc/self/fd/4 2>/dev/null && echo overwrote
truncate -s 0 /proc/self/fd/4 2>/dev/null && echo truncated
${padding}echo intact`;
    const r = await runSandboxed(script, { workspace: t.ws, shell: '/bin/bash' });
    assert.is(r.stdout, 'intact\n', r.stderr);
    const after = readdirSync(tmpdir()).filter((name) => !before.has(name) && name.includes('script'));
    assert.equal(after, [], 'no script file was written on the host');
    const bad = await rejection(runSandboxed('x'.repeat(SCRIPT_FD_BYTES + 1), { workspace: t.ws, shell: 'bash' }));
    assert.is(bad.code, 'invalid_argument');
  } finally {
    t.cleanup();
  }
});

test.run();
