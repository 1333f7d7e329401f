// SPDX-License-Identifier: MIT
// Cross-checks the syscall number tables against the hand-made fixture and, when present, the
// kernel headers installed on this machine.
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { DENIED_SYSCALLS } from '../../lib/backend/linux/seccomp.js';
import { SYSCALL_TABLE, syscallNumber, type SeccompArch } from '../../lib/backend/linux/syscalls.js';
import { ARCHES, readSeccompFixture } from '../fixtures/seccomp/shared.js';

const fixture = readSeccompFixture<Record<SeccompArch, Record<string, number | null>>>('denied-syscalls.json');

/** `#define __NR_name 123` lines of a unistd header. */
function parseUnistd(text: string): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const match of text.matchAll(/^#define\s+__NR_(\w+)\s+(\d+)\s*$/gm)) {
    numbers.set(match[1] as string, Number(match[2]));
  }
  return numbers;
}

test('the table agrees with the independently transcribed fixture for every denied syscall', () => {
  for (const arch of ARCHES) {
    assert.equal(Object.keys(fixture[arch]).sort(), [...DENIED_SYSCALLS].sort(), `${arch}: same names`);
    for (const name of DENIED_SYSCALLS) {
      assert.is(SYSCALL_TABLE[name]?.[arch], fixture[arch][name], `${arch} ${name}`);
    }
  }
});

test('numbers are unique per architecture and only uselib is missing (on aarch64)', () => {
  for (const arch of ARCHES) {
    const seen = new Map<number, string>();
    for (const [name, numbers] of Object.entries(SYSCALL_TABLE)) {
      const nr = numbers[arch];
      if (nr === null) {
        assert.equal([arch, name], ['aarch64', 'uselib'], `${name} has no ${arch} number`);
        continue;
      }
      assert.ok(Number.isInteger(nr) && nr >= 0 && nr < 1024, `${arch} ${name}: ${nr}`);
      assert.is(seen.get(nr), undefined, `${arch}: ${name} and ${seen.get(nr)} share ${nr}`);
      seen.set(nr, name);
    }
  }
});

test('syscallNumber looks up own entries only', () => {
  assert.is(syscallNumber('ptrace', 'x86_64'), 101);
  assert.is(syscallNumber('ptrace', 'aarch64'), 117);
  assert.is(syscallNumber('uselib', 'aarch64'), undefined);
  assert.is(syscallNumber('uselib', 'x86_64'), 134);
  for (const name of ['no_such_syscall', 'toString', '__proto__', 'constructor', '']) {
    assert.is(syscallNumber(name, 'x86_64'), undefined, name);
  }
});

const HEADERS: Array<{ arch: SeccompArch; candidates: string[] }> = [
  // Debian/Ubuntu multiarch layout first, then Fedora/Arch/Alpine.
  { arch: 'x86_64', candidates: ['/usr/include/x86_64-linux-gnu/asm/unistd_64.h', '/usr/include/asm/unistd_64.h'] },
  // arm64 uses the generic table; this header exists on any Linux with kernel headers installed.
  { arch: 'aarch64', candidates: ['/usr/include/asm-generic/unistd.h'] },
];

for (const { arch, candidates } of HEADERS) {
  const path = candidates.find((candidate) => existsSync(candidate));
  if (path === undefined) {
    test.skip(`${arch} numbers match the kernel header (none of ${candidates.join(', ')} exists)`, () => undefined);
    continue;
  }
  const name = `${arch} numbers match ${path} for every syscall the header defines`;
  test(name, () => {
    const header = parseUnistd(readFileSync(path, 'utf8'));
    assert.ok(header.size > 250, `${path}: parsed only ${header.size} definitions`);
    let compared = 0;
    const newer: string[] = [];
    for (const [syscall, numbers] of Object.entries(SYSCALL_TABLE)) {
      const expected = header.get(syscall);
      if (expected === undefined) {
        // Syscalls newer than the installed headers, or absent on the architecture.
        newer.push(syscall);
        continue;
      }
      assert.is(numbers[arch], expected, `${arch} ${syscall}`);
      compared += 1;
    }
    // Only syscalls the headers may predate (open_tree_attr, Linux 6.15) or the arch lacks.
    const allowedMissing = new Set(['open_tree_attr', ...(arch === 'aarch64' ? ['uselib'] : [])]);
    for (const syscall of newer) assert.ok(allowedMissing.has(syscall), `${path} lacks ${syscall}`);
    assert.ok(compared >= Object.keys(SYSCALL_TABLE).length - allowedMissing.size, `compared ${compared}`);
  });
}

test.run();
