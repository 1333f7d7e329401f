// SPDX-License-Identifier: MIT
// Runs the built seccomp filters in an independent classic-BPF interpreter and checks every verdict.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildSeccompProgram, type SeccompArch, type SeccompProgram } from '../../lib/backend/linux/seccomp.js';
import { ARCHES, MODES, readSeccompFixture } from '../fixtures/seccomp/shared.js';

// ---- An interpreter written from the kernel's rules, sharing no constant with lib/ ----

/** Synthetic `struct seccomp_data`. */
interface SyscallData {
  arch: number;
  nr: number;
  args?: bigint[];
}

type Verdict = { action: 'allow' } | { action: 'errno'; errno: number } | { action: 'kill_process' } | { action: 'other'; raw: number };

/** Reads a u32 from a little-endian seccomp_data the way BPF_LD|BPF_W|BPF_ABS does. */
function loadWord(data: SyscallData, offset: number): number {
  if (offset % 4 !== 0 || offset < 0 || offset >= 64) throw new Error(`load at invalid offset ${offset}`);
  if (offset === 0) return data.nr >>> 0;
  if (offset === 4) return data.arch >>> 0;
  if (offset < 16) return 0; // instruction_pointer: 0 in these tests
  const index = Math.floor((offset - 16) / 8);
  const value = BigInt.asUintN(64, data.args?.[index] ?? 0n);
  const high = (offset - 16) % 8 === 4;
  return Number(high ? value >> 32n : value & 0xffffffffn);
}

function toVerdict(raw: number): Verdict {
  const action = (raw & 0xffff0000) >>> 0;
  if (raw >>> 0 === 0x80000000) return { action: 'kill_process' };
  if (action === 0x7fff0000) return { action: 'allow' };
  if (action === 0x00050000) return { action: 'errno', errno: raw & 0xffff };
  return { action: 'other', raw };
}

/** Executes a program like the kernel does; throws on anything the kernel would reject. */
function run(program: SeccompProgram, data: SyscallData): Verdict {
  const insns = program.instructions;
  const last = insns[insns.length - 1];
  if (insns.length === 0 || insns.length > 4096) throw new Error(`bad length ${insns.length}`);
  if (last === undefined || (last.code & 0x07) !== 0x06) throw new Error('last instruction is not a return');
  let acc = 0;
  let pc = 0;
  for (let steps = 0; steps <= insns.length; steps += 1) {
    const insn = insns[pc];
    if (insn === undefined) throw new Error(`pc ${pc} out of range`);
    const cls = insn.code & 0x07;
    if (cls === 0x00) {
      if (insn.code !== 0x20) throw new Error(`unsupported load 0x${insn.code.toString(16)}`);
      acc = loadWord(data, insn.k);
      pc += 1;
    } else if (cls === 0x06) {
      if (insn.code !== 0x06) throw new Error(`unsupported return 0x${insn.code.toString(16)}`);
      return toVerdict(insn.k);
    } else if (cls === 0x05) {
      if ((insn.code & 0x08) !== 0) throw new Error('jump with X source');
      const op = insn.code & 0xf0;
      let taken: boolean;
      if (op === 0x00) {
        pc += 1 + insn.k;
        continue;
      } else if (op === 0x10) taken = acc === insn.k >>> 0;
      else if (op === 0x20) taken = acc > insn.k >>> 0;
      else if (op === 0x30) taken = acc >= insn.k >>> 0;
      else if (op === 0x40) taken = ((acc & insn.k) >>> 0) !== 0;
      else throw new Error(`unsupported jump 0x${insn.code.toString(16)}`);
      if (insn.jt > 255 || insn.jf > 255) throw new Error('jump offset out of range');
      pc += 1 + (taken ? insn.jt : insn.jf);
    } else {
      throw new Error(`unsupported class ${cls}`);
    }
  }
  throw new Error('program did not terminate');
}

// ---- Facts, transcribed independently in the fixture ----

interface DeniedFixture {
  x86_64: Record<string, number | null>;
  aarch64: Record<string, number | null>;
  argumentFiltered: Record<SeccompArch, Record<'socket' | 'ioctl' | 'personality', number>>;
  mustStayAllowed: Record<SeccompArch, Record<string, number>>;
}
const fixture = readSeccompFixture<DeniedFixture>('denied-syscalls.json');

const AUDIT: Record<SeccompArch, number> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };
const EPERM: Verdict = { action: 'errno', errno: 1 };
const ALLOW: Verdict = { action: 'allow' };
const KILL: Verdict = { action: 'kill_process' };
const HIGH = 0xdead_beef_0000_0000n;

function each(fn: (arch: SeccompArch, program: SeccompProgram, blocksUnix: boolean, label: string) => void): void {
  for (const arch of ARCHES) {
    for (const mode of MODES) {
      const program = buildSeccompProgram({ arch, ...mode });
      fn(arch, program, mode.network === 'deny' || mode.blockUnixSockets, `${arch} ${JSON.stringify(mode)}`);
    }
  }
}

function call(arch: SeccompArch, nr: number, args: bigint[] = []): SyscallData {
  return { arch: AUDIT[arch], nr, args };
}

test('every denied syscall returns EPERM, in every mode', () => {
  each((arch, program, _unix, label) => {
    let checked = 0;
    for (const [name, nr] of Object.entries(fixture[arch])) {
      if (nr === null) continue;
      for (const args of [[], [1n, 2n, 3n], [HIGH, HIGH, HIGH, HIGH, HIGH, HIGH]]) {
        assert.equal(run(program, call(arch, nr, args)), EPERM, `${label}: ${name} (${nr})`);
      }
      checked += 1;
    }
    assert.is(checked, arch === 'x86_64' ? 39 : 38, label);
  });
});

test('everyday syscalls and loopback networking stay allowed, in every mode', () => {
  each((arch, program, _unix, label) => {
    for (const [name, nr] of Object.entries(fixture.mustStayAllowed[arch])) {
      assert.equal(run(program, call(arch, nr, [1n, 0n, 0n])), ALLOW, `${label}: ${name}`);
    }
    // socketpair(AF_UNIX) stays allowed: Node and Python use it for child IPC.
    const socketpair = fixture.mustStayAllowed[arch].socketpair as number;
    assert.equal(run(program, call(arch, socketpair, [1n, 1n, 0n])), ALLOW, `${label}: socketpair(AF_UNIX)`);
  });
});

test('sweep: with zero arguments exactly the denied numbers fail, all else is allowed', () => {
  each((arch, program, _unix, label) => {
    const denied = new Set(Object.values(fixture[arch]).filter((nr): nr is number => nr !== null));
    for (let nr = 0; nr < 1024; nr += 1) {
      const expected = denied.has(nr) ? EPERM : ALLOW;
      assert.equal(run(program, call(arch, nr)), expected, `${label}: nr ${nr}`);
    }
  });
});

test('socket(): AF_VSOCK always denied, AF_UNIX denied under deny or blockUnixSockets, others allowed', () => {
  each((arch, program, blocksUnix, label) => {
    const socket = fixture.argumentFiltered[arch].socket;
    const verdict = (domain: bigint): Verdict => run(program, call(arch, socket, [domain, 1n, 0n]));
    assert.equal(verdict(40n), EPERM, `${label}: AF_VSOCK`);
    assert.equal(verdict(40n | HIGH), EPERM, `${label}: AF_VSOCK with high bits`);
    assert.equal(verdict(1n), blocksUnix ? EPERM : ALLOW, `${label}: AF_UNIX`);
    // The kernel truncates `int domain`, so high bits must not hide AF_UNIX.
    assert.equal(verdict(1n | HIGH), blocksUnix ? EPERM : ALLOW, `${label}: AF_UNIX with high bits`);
    for (const domain of [0n, 2n, 10n, 16n, 17n, 41n, 0x100000001n - 1n]) {
      assert.equal(verdict(domain), ALLOW, `${label}: domain ${domain}`);
    }
    // Only the domain (args[0]) matters: AF_UNIX in another argument is not a match.
    assert.equal(run(program, call(arch, socket, [2n, 1n, 1n])), ALLOW, `${label}: AF_INET, protocol 1`);
  });
});

test('ioctl(): TIOCSTI and TIOCLINUX denied on the low 32 bits of the request, others allowed', () => {
  each((arch, program, _unix, label) => {
    const ioctl = fixture.argumentFiltered[arch].ioctl;
    const verdict = (cmd: bigint, fd = 0n): Verdict => run(program, call(arch, ioctl, [fd, cmd, 0n]));
    assert.equal(verdict(0x5412n), EPERM, `${label}: TIOCSTI`);
    assert.equal(verdict(0x541cn), EPERM, `${label}: TIOCLINUX`);
    assert.equal(verdict(0x5412n | HIGH), EPERM, `${label}: TIOCSTI with high bits set`);
    assert.equal(verdict(0x541cn | 0x1_0000_0000n), EPERM, `${label}: TIOCLINUX with bit 32 set`);
    for (const cmd of [0x5401n, 0x541bn, 0x5413n, 0x5411n, 0x80045412n, 0n]) {
      assert.equal(verdict(cmd), ALLOW, `${label}: cmd 0x${cmd.toString(16)}`);
    }
    // The request is args[1]: a TIOCSTI-valued fd is not a match.
    assert.equal(verdict(0x5401n, 0x5412n), ALLOW, `${label}: fd 0x5412`);
  });
});

test('personality(): queries and harmless personas allowed, the rest denied', () => {
  each((arch, program, _unix, label) => {
    const personality = fixture.argumentFiltered[arch].personality;
    const verdict = (persona: bigint): Verdict => run(program, call(arch, personality, [persona]));
    for (const persona of [0n, 0x8n, 0x20000n, 0x20008n, 0xffffffffn, 0xffffffffn | HIGH]) {
      assert.equal(verdict(persona), ALLOW, `${label}: 0x${persona.toString(16)}`);
    }
    // READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, ADDR_LIMIT_32BIT, MMAP_PAGE_ZERO, PER_BSD, PER_SVR4.
    for (const persona of [0x0400000n, 0x0040000n, 0x0800000n, 0x0100000n, 0x6n, 0x04100001n, HIGH | 0x0400000n]) {
      assert.equal(verdict(persona), EPERM, `${label}: 0x${persona.toString(16)}`);
    }
  });
});

test('a foreign architecture is killed, whatever the syscall', () => {
  // i386 (int 0x80 on x86_64), 32-bit ARM (compat on arm64), the other supported arch, big-endian arm64.
  const foreign = [0x40000003, 0x40000028, 0x800000b7, 0xc000003e, 0xc00000b7, 0];
  each((arch, program, _unix, label) => {
    for (const auditArch of foreign) {
      if (auditArch === AUDIT[arch]) continue;
      for (const nr of [0, 1, 3, 41, 59, 101, 117, 165, 1023]) {
        assert.equal(run(program, { arch: auditArch, nr }), KILL, `${label}: arch 0x${auditArch.toString(16)} nr ${nr}`);
      }
    }
  });
});

test('x32 syscall numbers are killed on x86_64', () => {
  each((arch, program, _unix, label) => {
    if (arch !== 'x86_64') return;
    for (const nr of [0, 1, 16, 39, 41, 101, 165, 512, 547]) {
      assert.equal(run(program, call(arch, 0x40000000 + nr)), KILL, `${label}: x32 nr ${nr}`);
    }
    assert.equal(run(program, call(arch, 0x40000000 + 41, [1n])), KILL, `${label}: x32 socket(AF_UNIX)`);
  });
});

test('the interpreter itself rejects what the kernel rejects', () => {
  const program = buildSeccompProgram({ arch: 'x86_64', network: 'deny', blockUnixSockets: false });
  const broken = (instructions: SeccompProgram['instructions']): SeccompProgram => ({ ...program, instructions });
  assert.throws(() => run(broken([{ code: 0x20, jt: 0, jf: 0, k: 4 }]), call('x86_64', 0)), /return/);
  assert.throws(() => run(broken([{ code: 0x20, jt: 0, jf: 0, k: 64 }, { code: 0x06, jt: 0, jf: 0, k: 0 }]), call('x86_64', 0)), /offset/);
  assert.throws(() => run(broken([{ code: 0x15, jt: 5, jf: 0, k: 0 }, { code: 0x06, jt: 0, jf: 0, k: 0 }]), call('x86_64', 0)), /out of range/);
  assert.throws(() => run(broken([{ code: 0x04, jt: 0, jf: 0, k: 0 }, { code: 0x06, jt: 0, jf: 0, k: 0 }]), call('x86_64', 0)), /class/);
});

test.run();
