// SPDX-License-Identifier: MIT
// Reads of hidden files are reported from what the kernel saw, never from the command's output:
// on Linux each file mask is an empty file of its own with an inotify watch in the caller, so a
// denial names exactly the files a run opened. A command that only prints a convincing error gets
// no denial, a run beside it that read nothing gets none, and the secret never reaches the output.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { runSandboxed, type RunResult } from '../../lib/sandbox/run.js';
import { makeTree, sandboxTest, type Tree } from '../helpers/sandbox.js';

const SECRET = 'TOPSECRET-MASKED-READ';

function readScopes(r: RunResult): string[] {
  return r.denials.filter((d) => d.capability.kind === 'filesystem_read').map((d) => d.capability.scope ?? '').sort();
}

/** Runs `fn` with a fresh tree whose home (HOME in `env`) holds planted credentials. */
async function withCredentialHome(fn: (t: Tree, home: string, env: Record<string, string>) => Promise<void>): Promise<void> {
  const t = makeTree('zs-masked-read-');
  try {
    const home = join(t.base, 'home');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.netrc'), `machine example login me password ${SECRET}\n`);
    writeFileSync(join(home, '.git-credentials'), `https://me:${SECRET}@example.invalid\n`);
    writeFileSync(join(home, '.ssh', 'id_ed25519'), SECRET);
    await fn(t, home, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home });
  } finally {
    t.cleanup();
  }
}

sandboxTest('a read of a hidden credential file is reported by path, and only the files opened', () => withCredentialHome(async (t, home, env) => {
  const secret = join(t.outside, 'secret.txt');
  writeFileSync(secret, SECRET);
  const r = await runSandboxed(['/bin/sh', '-c', `cat "$HOME/.netrc" ${secret}; ls -l "$HOME/.git-credentials"; echo done`], { workspace: t.ws, env, denyRead: [secret] });
  assert.match(r.stdout, /done/);
  assert.not.match(r.stdout + r.stderr, new RegExp(SECRET));
  // .git-credentials was only listed (no open): not reported. id_ed25519 was not touched.
  assert.equal(readScopes(r), [join(home, '.netrc'), secret].sort());
  for (const denial of r.denials) {
    if (denial.capability.kind !== 'filesystem_read') continue;
    assert.is(denial.source, 'platform_sandbox');
    assert.ok(denial.reason.includes(denial.capability.scope ?? '?'), denial.reason);
    // A store opens to --allow-read; the run's own --deny-read entry does not, as the hint says.
    if (denial.capability.scope === secret) {
      assert.is(denial.nextAction, 'change_command');
      assert.match(denial.reason, `${secret} is in the run's denyRead`);
      assert.not.match(denial.reason, '--allow-read');
    } else {
      assert.is(denial.nextAction, 'request_approval');
      assert.match(denial.reason, `allow it with --allow-read ${join(home, '.netrc')}`);
    }
  }
  // Which the hint promised: an allowRead of the store gives the command its content.
  const opened = await runSandboxed(['/bin/sh', '-c', 'cat "$HOME/.netrc"'], { workspace: t.ws, env, allowRead: [join(home, '.netrc')] });
  assert.match(opened.stdout, SECRET);
  assert.equal(readScopes(opened), []);
}));

sandboxTest('printing a permission error about a credential file is not a denial', () => withCredentialHome(async (t, _home, env) => {
  const r = await runSandboxed(['/bin/sh', '-c', `echo "cat: $HOME/.netrc: Permission denied" >&2; echo sandbox_likely_denied`], { workspace: t.ws, env });
  assert.match(r.stderr, /Permission denied/);
  assert.equal(readScopes(r), []);
}));

sandboxTest('concurrent runs each get only their own reads', () => withCredentialHome(async (t, home, env) => {
  const scripts = ['cat "$HOME/.netrc"; sleep 0.3', 'sleep 0.3; cat "$HOME/.ssh/id_ed25519"', 'sleep 0.3; true'];
  // Twice: the second round may be served by sandboxes set up ahead (prewarmed).
  for (let round = 0; round < 2; round++) {
    const runs = await Promise.all(scripts.map((script) => runSandboxed(['/bin/sh', '-c', script], { workspace: t.ws, env })));
    assert.equal(readScopes(runs[0] as RunResult), [join(home, '.netrc')], `round ${round}`);
    assert.equal(readScopes(runs[1] as RunResult), [join(home, '.ssh', 'id_ed25519')], `round ${round}`);
    assert.equal(readScopes(runs[2] as RunResult), [], `round ${round}`);
  }
}));

sandboxTest('many hidden files in one directory: each reads empty, none can be written, and only the ones opened are reported', () => withCredentialHome(async (t, _home, env) => {
  const dir = join(t.ws, 'many');
  mkdirSync(dir);
  const files = Array.from({ length: 40 }, (_, i) => join(dir, `secret${i}.env`));
  files.forEach((file, i) => writeFileSync(file, `${SECRET}-${i}`));
  const opened = [files[3], files[27]] as string[];
  const script = [
    `cat ${opened.join(' ')}`,
    `for f in ${dir}/*.env; do [ -s "$f" ] && echo "NONEMPTY $f"; echo x 2>/dev/null > "$f" && echo "WROTE $f"; done`,
    'echo done',
  ].join('; ');
  const r = await runSandboxed(['/bin/sh', '-c', script], { workspace: t.ws, env, denyRead: files });
  assert.match(r.stdout, /done/);
  assert.not.match(r.stdout + r.stderr, new RegExp(SECRET));
  assert.not.match(r.stdout, /NONEMPTY|WROTE/);
  // The loop's `[ -s ]` only stats and its writes are refused before any open: only cat opened.
  assert.equal(readScopes(r), [...opened].sort());
}));

test.run();
