// SPDX-License-Identifier: MIT
// Everyday builds stay under the default resource caps (private /tmp 1 GiB, /dev/shm 256 MiB, 4096
// processes): `make -j` with many jobs, `cargo build` of a crate with a build script and several
// units, and `npm install` of a small project with a dependency tree, each in a real sandbox
// with no limits given. A build pushed past a cap fails with a message naming the cap and the flag
// that raises it, and the host keeps starting processes.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import type { RunResult } from '../../lib/sandbox/run.js';
import { CLI_PATH } from '../helpers/cli.js';
import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';

const TIMEOUT = { timeoutMs: 600_000 };

function ok(r: RunResult, what: string): void {
  assert.is(r.exitCode, 0, `${what} failed (exit ${r.exitCode}, signal ${r.signal}):\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`);
  assert.is(r.limitsHit, undefined, `${what} reached no cap`);
  assert.is(r.limitsNotEnforced, undefined, `${what} ran with every default cap`);
}

/** A C project of `n` translation units, each a little heavy, and a Makefile that links them. */
function writeCProject(dir: string, n: number): void {
  const names = Array.from({ length: n }, (_, i) => `u${i}`);
  for (const name of names) {
    writeFileSync(join(dir, `${name}.c`), `#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint ${name}(int x) { char b[64]; snprintf(b, sizeof b, "%d", x); return (int)strlen(b) + x; }\n`);
  }
  writeFileSync(join(dir, 'main.c'), `${names.map((n) => `int ${n}(int);`).join('\n')}\nint main(void) { int s = 0;\n${names.map((n) => `s += ${n}(1);`).join('\n')}\nreturn s == ${n * 2} ? 0 : 1; }\n`);
  writeFileSync(join(dir, 'Makefile'), `OBJS = main.o ${names.map((n) => `${n}.o`).join(' ')}\napp: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%.o: %.c\n\t$(CC) -O1 -c $< -o $@\n`);
}

sandboxTest('make -j64 of a 150-unit C project builds under the default caps', async () => {
  const t = makeTree('zs-caps-make-');
  try {
    writeCProject(t.ws, 150);
    const r = await sh(t, 'make -j64 >/dev/null && ./app && echo built && ls *.o | wc -l', TIMEOUT);
    ok(r, 'make -j64');
    assert.match(r.stdout, /^built\n151\n$/);
  } finally {
    t.cleanup();
  }
});

const cargo = ['/usr/bin/cargo', join(process.env.HOME ?? '/root', '.cargo', 'bin', 'cargo')].find((path) => existsSync(path));

sandboxTest('cargo build of a crate with a build script and several modules builds under the default caps', async () => {
  // A machine without Rust has no cargo to run; every Linux CI image we use has it.
  if (cargo === undefined) {
    assert.ok(spawnSync('sh', ['-c', 'command -v cargo']).status !== 0, 'cargo is found where it is installed');
    return;
  }
  const t = makeTree('zs-caps-cargo-');
  try {
    mkdirSync(join(t.ws, 'src'));
    writeFileSync(join(t.ws, 'Cargo.toml'), '[package]\nname = "capped"\nversion = "0.1.0"\nedition = "2021"\nbuild = "build.rs"\n\n[dependencies]\n');
    writeFileSync(join(t.ws, 'build.rs'), 'fn main() { let out = std::env::var("OUT_DIR").unwrap(); std::fs::write(std::path::Path::new(&out).join("gen.rs"), "pub const N: u32 = 7;").unwrap(); }\n');
    const mods = Array.from({ length: 8 }, (_, i) => `m${i}`);
    for (const m of mods) writeFileSync(join(t.ws, 'src', `${m}.rs`), `pub fn f(x: u32) -> u32 { (0..x).map(|i| i * 2).sum() }\n`);
    writeFileSync(join(t.ws, 'src', 'main.rs'), `include!(concat!(env!("OUT_DIR"), "/gen.rs"));\n${mods.map((m) => `mod ${m};`).join('\n')}\nfn main() { let s: u32 = ${mods.map((m) => `${m}::f(N)`).join(' + ')}; println!("sum={}", s); }\n`);
    const r = await sh(t, `${cargo} build --offline -j 16 2>&1 | tail -n 3 && ./target/debug/capped`, TIMEOUT);
    ok(r, 'cargo build');
    assert.match(r.stdout, /sum=336\n$/, r.stdout);
  } finally {
    t.cleanup();
  }
});

sandboxTest('npm install of a small project with a dependency tree works under the default caps', async () => {
  const t = makeTree('zs-caps-npm-');
  try {
    writeFileSync(join(t.ws, 'package.json'), JSON.stringify({
      name: 'capped-app', version: '1.0.0', private: true,
      dependencies: { chalk: '4.1.2', semver: '7.6.3', ms: '2.1.3', 'is-number': '7.0.0' },
      scripts: { check: 'node -e "require(\'chalk\'); console.log(require(\'semver\').valid(\'1.2.3\'), require(\'ms\')(60000))"' },
    }));
    const r = await sh(t, 'npm install --no-audit --no-fund >/dev/null && npm ls --all --parseable | wc -l && npm run -s check', { ...TIMEOUT, network: 'allow' });
    ok(r, 'npm install');
    const [count, check] = r.stdout.trim().split('\n');
    assert.ok(Number(count) >= 9, `the dependency tree was installed (${count} entries)`);
    assert.is(check, '1.2.3 1m');
  } finally {
    t.cleanup();
  }
});

sandboxTest('a build pushed past a cap fails with a message naming the cap and its flag; the host keeps spawning', async () => {
  const t = makeTree('zs-caps-hit-');
  try {
    writeCProject(t.ws, 60);
    // Tight caps through the CLI: 24 processes for make -j64, and an 8 MiB /tmp filled by the build.
    const procs = spawnSync(process.execPath, [CLI_PATH, 'run', '--workspace', t.ws, '--limit-processes', '24', '--', 'make', '-j64'], { encoding: 'utf8', cwd: t.ws, timeout: 300_000 });
    assert.not.equal(procs.status, 0, 'make failed at the cap');
    if (process.getuid?.() === 0) {
      // The pids cgroup counts refused forks, so the run can name the cap.
      assert.match(procs.stderr, /reached the process cap \(limits\.processes\).*--limit-processes N/, procs.stderr);
    } else {
      assert.match(procs.stderr, /Resource temporarily unavailable|fork/i, procs.stderr);
    }
    const tmp = spawnSync(process.execPath, [CLI_PATH, 'run', '--workspace', t.ws, '--limit-tmp', '8M', '-c', 'head -c 16M /dev/zero > /tmp/big'], { encoding: 'utf8', cwd: t.ws, timeout: 120_000 });
    assert.not.equal(tmp.status, 0);
    assert.match(tmp.stderr, /No space left on device/);
    for (let i = 0; i < 20; i++) assert.is(execFileSync('/bin/echo', ['alive'], { encoding: 'utf8' }), 'alive\n');
  } finally {
    t.cleanup();
  }
});

test.run();
