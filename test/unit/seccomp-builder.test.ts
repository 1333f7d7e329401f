// SPDX-License-Identifier: MIT
// The seccomp builder's API: options validation, fail-closed architectures, encoding, the assembler.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import {
  buildBpfProgram,
  decodeBpfInstruction,
  encodeBpfInstructions,
  formatBpfProgram,
  type BpfSourceLine,
} from '../../lib/backend/linux/bpf.js';
import {
  buildSeccompProgram,
  encodeSeccompProgram,
  seccompArchFor,
  type SeccompOptions,
} from '../../lib/backend/linux/seccomp.js';

function thrown(fn: () => unknown): SandboxError {
  try {
    fn();
  } catch (error) {
    assert.instance(error, SandboxError);
    return error as SandboxError;
  }
  throw new Error('expected a SandboxError, nothing was thrown');
}

test('seccompArchFor maps process.arch values', () => {
  assert.is(seccompArchFor('x64'), 'x86_64');
  assert.is(seccompArchFor('arm64'), 'aarch64');
  for (const other of ['ia32', 'arm', 'riscv64', 'ppc64', 's390x', 'loong64', 'mips', '', 'x86_64', 'aarch64']) {
    assert.is(seccompArchFor(other), undefined, other);
  }
});

test('an unknown architecture fails closed with sandbox_unavailable (layer seccomp)', () => {
  for (const arch of ['riscv64', 'x64', 'i386', '', undefined, 'toString']) {
    const options = { arch, network: 'deny', blockUnixSockets: false } as unknown as SeccompOptions;
    const error = thrown(() => buildSeccompProgram(options));
    assert.is(error.code, 'sandbox_unavailable', String(arch));
    assert.is(error.layer, 'seccomp');
    assert.match(error.message, /architecture/);
    assert.match(error.message, /x86_64, aarch64/);
  }
  // The process's own architecture, mapped through seccompArchFor, never silently skips the filter.
  const arch = seccompArchFor('riscv64');
  const options = { arch, network: 'allow', blockUnixSockets: false } as unknown as SeccompOptions;
  const error = thrown(() => buildSeccompProgram(options));
  assert.is(error.code, 'sandbox_unavailable');
  assert.match(error.message, /this CPU architecture .*x64 and arm64/);
});

test('malformed options are invalid_argument errors that name the field', () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ arch: 'x86_64', network: 'none', blockUnixSockets: false }, /options\.network/],
    [{ arch: 'x86_64', network: undefined, blockUnixSockets: false }, /options\.network/],
    [{ arch: 'aarch64', network: 'deny', blockUnixSockets: 'yes' }, /options\.blockUnixSockets/],
    [{ arch: 'aarch64', network: 'allow' }, /options\.blockUnixSockets/],
  ];
  for (const [options, field] of bad) {
    const error = thrown(() => buildSeccompProgram(options as SeccompOptions));
    assert.is(error.code, 'invalid_argument');
    assert.match(error.message, field);
  }
  assert.is(thrown(() => buildSeccompProgram(null as unknown as SeccompOptions)).code, 'sandbox_unavailable');
});

test('deniedSyscalls and argumentFilters describe the program', () => {
  const x86 = buildSeccompProgram({ arch: 'x86_64', network: 'allow', blockUnixSockets: false });
  const arm = buildSeccompProgram({ arch: 'aarch64', network: 'deny', blockUnixSockets: false });
  assert.is(x86.arch, 'x86_64');
  assert.is(arm.arch, 'aarch64');
  assert.ok(x86.deniedSyscalls.includes('uselib'));
  assert.not.ok(arm.deniedSyscalls.includes('uselib'), 'aarch64 has no uselib');
  assert.is(x86.deniedSyscalls.length, 39);
  assert.is(arm.deniedSyscalls.length, 38);
  for (const name of ['ptrace', 'mount', 'open_tree_attr', 'io_uring_setup', 'bpf', 'vhangup']) {
    assert.ok(x86.deniedSyscalls.includes(name), name);
    assert.ok(arm.deniedSyscalls.includes(name), name);
  }
  assert.equal(x86.argumentFilters.slice(0, 3), ['socket(domain=AF_VSOCK)', 'ioctl(cmd=TIOCSTI)', 'ioctl(cmd=TIOCLINUX)']);
  assert.ok(arm.argumentFilters.includes('socket(domain=AF_UNIX)'));
  assert.not.ok(x86.argumentFilters.includes('socket(domain=AF_UNIX)'));
  assert.ok(x86.argumentFilters.some((f) => f.startsWith('personality(')));
});

test('encodeSeccompProgram packs code<<48 | jt<<40 | jf<<32 | k and round-trips', () => {
  const program = buildSeccompProgram({ arch: 'x86_64', network: 'deny', blockUnixSockets: true });
  const words = encodeSeccompProgram(program);
  assert.is(words.length, program.instructions.length);
  // ld [4]; jeq #AUDIT_ARCH_X86_64, 0, kill
  assert.is(words[0], 0x0020_00_00_00000004n);
  const second = program.instructions[1]!;
  assert.is(words[1], (0x15n << 48n) | (BigInt(second.jf) << 32n) | 0xc000003en);
  // The final instruction is ret SECCOMP_RET_KILL_PROCESS: k has its top bit set, stays unsigned.
  assert.is(words[words.length - 1], 0x0006_00_00_80000000n);
  words.forEach((word, index) => {
    assert.ok(word >= 0n && word < 1n << 64n);
    assert.equal(decodeBpfInstruction(word), program.instructions[index]);
  });
});

test('encoding rejects fields out of range', () => {
  for (const insn of [
    { code: 0x10000, jt: 0, jf: 0, k: 0 },
    { code: 6, jt: 256, jf: 0, k: 0 },
    { code: 6, jt: 0, jf: -1, k: 0 },
    { code: 6, jt: 0, jf: 0, k: 2 ** 32 },
    { code: 6, jt: 0, jf: 0, k: 1.5 },
  ]) {
    const error = thrown(() => encodeBpfInstructions([{ code: 6, jt: 0, jf: 0, k: 0 }, insn]));
    assert.is(error.code, 'invalid_argument');
    assert.match(error.message, /instruction 1/);
  }
});

test('the assembler resolves labels and refuses broken programs', () => {
  const ok = buildBpfProgram([
    { op: 'load', offset: 0 },
    { op: 'jeq', k: 7, ifTrue: 'yes', ifFalse: 'no' },
    { op: 'label', name: 'no' },
    { op: 'ret', value: 1 },
    { op: 'label', name: 'yes' },
    { op: 'ja', to: 'end' },
    { op: 'label', name: 'end' },
    { op: 'ret', value: 2 },
  ]);
  assert.equal(ok, [
    { code: 0x20, jt: 0, jf: 0, k: 0 },
    { code: 0x15, jt: 1, jf: 0, k: 7 },
    { code: 0x06, jt: 0, jf: 0, k: 1 },
    { code: 0x05, jt: 0, jf: 0, k: 0 },
    { code: 0x06, jt: 0, jf: 0, k: 2 },
  ]);

  const jumpOver = (skipped: number): BpfSourceLine[] => [
    { op: 'load', offset: 0 },
    { op: 'jeq', k: 1, ifTrue: 'far' },
    ...Array.from({ length: skipped }, (): BpfSourceLine => ({ op: 'ret', value: 0 })),
    { op: 'label', name: 'far' },
    { op: 'ret', value: 1 },
  ];
  assert.is(buildBpfProgram(jumpOver(255))[1]?.jt, 255, 'the longest conditional jump fits');
  const broken: Array<[BpfSourceLine[], RegExp]> = [
    [[], /empty/],
    [[{ op: 'ret', value: 0 }, { op: 'label', name: 'a' }, { op: 'label', name: 'a' }], /defined twice/],
    [[{ op: 'jeq', k: 0, ifTrue: 'nowhere' }, { op: 'ret', value: 0 }], /not defined/],
    [[{ op: 'label', name: 'back' }, { op: 'ret', value: 0 }, { op: 'ja', to: 'back' }, { op: 'ret', value: 0 }], /backwards/],
    [[{ op: 'ret', value: 0 }, { op: 'jeq', k: 0, ifTrue: 'end' }, { op: 'label', name: 'end' }], /past the last/],
    [jumpOver(256), /is 256 long \(max 255\)/],
    [[{ op: 'load', offset: 0 }], /does not end with a return/],
    [[{ op: 'load', offset: 2 }, { op: 'ret', value: 0 }], /word-aligned/],
    [[{ op: 'ret', value: -1 }], /unsigned 32-bit/],
    [[{ op: 'jeq', k: 2 ** 32 }, { op: 'ret', value: 0 }], /unsigned 32-bit/],
    [Array.from({ length: 4097 }, (): BpfSourceLine => ({ op: 'ret', value: 0 })), /BPF_MAXINSNS/],
  ];
  for (const [lines, message] of broken) {
    const error = thrown(() => buildBpfProgram(lines));
    assert.is(error.code, 'internal_error');
    assert.is(error.layer, 'seccomp');
    assert.match(error.message, message);
  }
});

test('formatBpfProgram lists instructions readably and losslessly', () => {
  assert.equal(
    formatBpfProgram([
      { code: 0x20, jt: 0, jf: 0, k: 4 },
      { code: 0x15, jt: 0, jf: 3, k: 0xc000003e },
      { code: 0x45, jt: 2, jf: 0, k: 0x40000000 },
      { code: 0x05, jt: 0, jf: 0, k: 1 },
      { code: 0x06, jt: 0, jf: 0, k: 0x50001 },
      { code: 0x06, jt: 0, jf: 0, k: 0 },
      // Stray fields, an X-source jump and an ALU op: printed raw, never as a cleaner instruction.
      { code: 0x06, jt: 1, jf: 0, k: 0 },
      { code: 0x1d, jt: 0, jf: 0, k: 0 },
      { code: 0x04, jt: 0, jf: 0, k: 3 },
    ]),
    [
      '0: ld [4]',
      '1: jeq #0xc000003e -> 2, 5',
      '2: jset #0x40000000 -> 5, 3',
      '3: ja -> 5',
      '4: ret #0x50001',
      '5: ret #0',
      '6: .word 0x0006010000000000',
      '7: .word 0x001d000000000000',
      '8: .word 0x0004000000000003',
    ],
  );
  // Lossless over every built program: equal text after the index means equal instruction.
  const byText = new Map<string, string>();
  for (const arch of ['x86_64', 'aarch64'] as const) {
    for (const network of ['deny', 'allow'] as const) {
      const { instructions } = buildSeccompProgram({ arch, network, blockUnixSockets: true });
      formatBpfProgram(instructions).forEach((line, index) => {
        const text = `${line.slice(line.indexOf(':'))} @${index}`;
        const insn = JSON.stringify(instructions[index]);
        assert.is(byText.get(text) ?? insn, insn, text);
        byText.set(text, insn);
      });
    }
  }
});

test.run();
