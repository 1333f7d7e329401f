// Output over maxBuffer never kills the command: each stream keeps its head and tail around a
// truncation marker cut on character boundaries, reports the bytes it produced, and the run gets
// `truncated` and a typed output-cap denial. Killing stays available as an explicit option.
import { readFileSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { rejection, makeTree, sandboxTest, sh } from '../helpers/sandbox.js';
import { runSandboxed } from '../../lib/sandbox/run.js';
import { SandboxDenialSchema } from '../../lib/sandbox/denials-schema.js';

const MARKER = /\n\[zero\] output truncated: (\d+) bytes omitted from the middle — [^\n]*\n/;

sandboxTest('past maxBuffer the command runs to its end; head, marker and tail of each stream are kept', async () => {
  const t = makeTree();
  try {
    // 3 MB of stdout, then the line a caller most needs: why it failed, on stderr, at the very end.
    const r = await sh(t, 'echo START; head -c 3000000 /dev/zero | tr "\\0" x; echo; echo END; head -c 500000 /dev/zero | tr "\\0" e >&2; echo "fatal: the reason" >&2; exit 7', { maxBuffer: 100_000 });
    assert.is(r.exitCode, 7, 'the command ran to its own exit');
    assert.is(r.signal, null);
    assert.ok(r.truncated);
    assert.is(r.outputBytes.stdout, 6 + 3_000_000 + 1 + 4);
    assert.is(r.outputBytes.stderr, 500_000 + 18);
    assert.ok(r.stdout.startsWith('START\nxxx'));
    assert.ok(r.stdout.endsWith('xxx\nEND\n'));
    assert.ok(r.stderr.endsWith('fatal: the reason\n'));
    const out = MARKER.exec(r.stdout);
    assert.ok(out !== null, 'stdout has the marker');
    assert.is(Number(out![1]) + Buffer.byteLength(r.stdout) - Buffer.byteLength(out![0]), r.outputBytes.stdout, 'kept + omitted = produced');
    assert.ok(Buffer.byteLength(r.stdout) - Buffer.byteLength(out![0]) <= 100_000);
    assert.ok(MARKER.test(r.stderr));
    assert.equal(r.denials.map((d) => [d.capability.kind, d.capability.scope, d.source, d.nextAction]), [
      ['resource_limit', 'maxBuffer.stdout', 'configured_policy', 'change_command'],
      ['resource_limit', 'maxBuffer.stderr', 'configured_policy', 'change_command'],
    ]);
    for (const denial of r.denials) SandboxDenialSchema.parse(denial);
  } finally {
    t.cleanup();
  }
});

sandboxTest('keepOutputFile: all of the output, both streams in arrival order, in a new private file', async () => {
  const t = makeTree();
  try {
    const r = await sh(t, 'echo first; head -c 2000000 /dev/zero | tr "\\0" y; echo; echo err >&2; echo last', { maxBuffer: 10_000, keepOutputFile: true });
    assert.ok(r.truncated);
    assert.ok(r.outputFile !== undefined && r.outputFile.complete);
    const file = r.outputFile!.path;
    assert.is(statSync(file).mode & 0o777, 0o600);
    assert.is(statSync(dirname(file)).mode & 0o777, 0o700);
    const all = readFileSync(file, 'utf8');
    // The two streams are separate pipes: within each the order holds, between them it may not.
    assert.is(all.length, 6 + 2_000_000 + 1 + 4 + 5, 'every byte of both streams');
    assert.ok(all.startsWith(`first\n${'y'.repeat(2_000_000)}\n`), 'stdout whole and in order');
    assert.ok(all.endsWith('err\nlast\n') || all.endsWith('last\nerr\n'), 'stderr and the end of stdout');
    rmSync(dirname(file), { recursive: true });
    const none = await sh(t, 'echo x');
    assert.is(none.outputFile, undefined);
  } finally {
    t.cleanup();
  }
});

sandboxTest('cuts fall on character boundaries: no replacement character, no lone surrogate', async () => {
  const t = makeTree();
  try {
    // 4-byte characters (a surrogate pair each in JavaScript) with an odd cap: every cut lands
    // inside a character unless it is moved back to a boundary.
    for (const cap of [1001, 1002, 1003, 4097]) {
      const r = await runSandboxed([process.execPath, '-e', 'process.stdout.write("a" + "😀".repeat(50000))'], { workspace: t.ws, maxBuffer: cap });
      assert.ok(r.truncated);
      const kept = r.stdout.replace(MARKER, '');
      assert.not.ok(kept.includes('\uFFFD'), `cap ${cap}: no replacement character`);
      assert.ok(/^a(?:😀)+$/u.test(kept), `cap ${cap}: whole characters only`);
      assert.not.ok(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(r.stdout), `cap ${cap}: no lone surrogate`);
    }
  } finally {
    t.cleanup();
  }
});

sandboxTest('output at exactly maxBuffer is kept whole; onMaxBuffer "kill" keeps the old kill', async () => {
  const t = makeTree();
  try {
    const exact = await sh(t, 'head -c 5000 /dev/zero | tr "\\0" q', { maxBuffer: 5000 });
    assert.is(exact.stdout, 'q'.repeat(5000));
    assert.not.ok(exact.truncated);
    assert.equal(exact.denials, []);
    const killed = await rejection(sh(t, 'yes', { maxBuffer: 5000, onMaxBuffer: 'kill' }));
    assert.is(killed.code, 'max_buffer_exceeded');
    const bad = await rejection(sh(t, 'true', { onMaxBuffer: 'drop' as 'kill' }));
    assert.is(bad.code, 'invalid_argument');
  } finally {
    t.cleanup();
  }
});

test.run();
