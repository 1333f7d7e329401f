// SPDX-License-Identifier: MIT
// Parallel `zero-sandbox run` commands under one user namespace count limit
// (user.max_user_namespaces 8, set for a user namespace of the test's own, as a container's limit
// would be): each process is alone, so nothing in it ends to free a namespace; a start refused
// with ENOSPC says so on stderr and tries again after pauses while the other commands' runs end.
// Before, 10 or 11 of 16 such commands failed with exit 125 ("Missing userns ... running inside
// Docker", the probe's guess).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { CLI_PATH } from '../helpers/cli.js';
import { makeTree, sandboxTest } from '../helpers/sandbox.js';

const COUNT = 16;

// Starts COUNT commands at once; each one's exit code and stderr go to files in $2.
const SCRIPT = `
echo 8 > /proc/sys/user/max_user_namespaces || exit 90
cd "$1"
for i in $(seq ${COUNT}); do
  "$3" "$4" run -- /bin/sh -c 'echo s >> log; sleep 0.3' > /dev/null 2> "$2/$i.err" &
  echo $! > "$2/$i.pid"
done
for i in $(seq ${COUNT}); do wait "$(cat "$2/$i.pid")"; echo $? > "$2/$i.code"; done
`;

sandboxTest(`${COUNT} parallel runs where the user may hold 8 user namespaces all succeed, refused starts made again`, () => {
  const t = makeTree('zs-cli-userns-limit-');
  try {
    const results = join(t.base, 'results');
    mkdirSync(results);
    const r = spawnSync('unshare', ['--user', '--map-root-user', '/bin/bash', '-c', SCRIPT, 'limited', t.ws, results, process.execPath, CLI_PATH], { encoding: 'utf8', timeout: 180_000 });
    assert.is(r.status, 0, r.stderr);
    const codes = readdirSync(results).filter((name) => name.endsWith('.code')).map((name) => readFileSync(join(results, name), 'utf8').trim());
    assert.is(codes.length, COUNT);
    const stderr = readdirSync(results).filter((name) => name.endsWith('.err')).map((name) => readFileSync(join(results, name), 'utf8'));
    assert.equal(codes.filter((code) => code !== '0'), [], `every command exits 0; stderr: ${stderr.filter((text) => text !== '').join(' | ').slice(0, 2000)}`);
    const waited = stderr.filter((text) => /namespace count limit .* is reached: nothing ran; trying again for up to \d+ s/.test(text));
    assert.ok(waited.length > 0, 'some starts were refused at the limit and said so (else this tested nothing)');
    assert.is(readFileSync(join(t.ws, 'log'), 'utf8').split('\n').filter((line) => line === 's').length, COUNT, 'each command ran once');
  } finally {
    t.cleanup();
  }
});

test.run();
