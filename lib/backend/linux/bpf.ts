// SPDX-License-Identifier: MIT
// A tiny classic-BPF assembler for seccomp filters: named jump targets resolved to checked offsets.
import { SandboxError } from '../../errors.js';

/** One classic-BPF instruction, the layout of the kernel's `struct sock_filter`. */
export interface BpfInstruction {
  /** Opcode: class | size | mode (loads), class | op | source (jumps), class | source (returns). */
  code: number;
  /** Forward offset taken when a conditional jump's test is true (0-255). */
  jt: number;
  /** Forward offset taken when a conditional jump's test is false (0-255). */
  jf: number;
  /** The 32-bit constant operand (an offset for loads, a comparand for jumps, a verdict for returns). */
  k: number;
}

/** Opcode parts from `linux/bpf_common.h` (only the ones a seccomp filter needs). */
export const BPF = {
  /** Instruction class: load into the accumulator. */
  LD: 0x00,
  /** Instruction class: jump. */
  JMP: 0x05,
  /** Instruction class: return a verdict. */
  RET: 0x06,
  /** Load size: 32-bit word (seccomp_data fields are only ever read as words). */
  W: 0x00,
  /** Load mode: absolute offset into seccomp_data. */
  ABS: 0x20,
  /** Jump op: unconditional (`k` holds the offset). */
  JA: 0x00,
  /** Jump op: accumulator == k. */
  JEQ: 0x10,
  /** Jump op: accumulator > k (unsigned). */
  JGT: 0x20,
  /** Jump op: accumulator >= k (unsigned). */
  JGE: 0x30,
  /** Jump op: accumulator & k != 0. */
  JSET: 0x40,
  /** Operand source: the constant k. */
  K: 0x00,
} as const;

/** The kernel's limit on a classic-BPF program's length (`BPF_MAXINSNS`). */
export const BPF_MAXINSNS = 4096;

/** Largest offset a conditional jump can encode (jt and jf are 8-bit). */
export const BPF_MAX_COND_JUMP = 255;

/** A named position in a program; jumps refer to labels, the assembler turns them into offsets. */
export type BpfLabel = string;

/** One source line for {@link buildBpfProgram}. */
export type BpfSourceLine =
  /** `A = *(u32 *)(seccomp_data + offset)`. */
  | { op: 'load'; offset: number }
  /** Return `value` as the filter's verdict. */
  | { op: 'ret'; value: number }
  /**
   * Conditional jump on the accumulator against `k`. A missing target means "fall through to the
   * next instruction".
   */
  | { op: 'jeq' | 'jgt' | 'jge' | 'jset'; k: number; ifTrue?: BpfLabel; ifFalse?: BpfLabel }
  /** Unconditional jump. */
  | { op: 'ja'; to: BpfLabel }
  /** Marks the position of the next instruction; emits nothing. */
  | { op: 'label'; name: BpfLabel };

const JUMP_OPS = { jeq: BPF.JEQ, jgt: BPF.JGT, jge: BPF.JGE, jset: BPF.JSET } as const;

function internal(message: string): SandboxError {
  return new SandboxError('internal_error', `seccomp program assembly: ${message}`, { layer: 'seccomp' });
}

function checkU32(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw internal(`${what} ${value} is not an unsigned 32-bit integer`);
  }
  return value;
}

/**
 * Assembles `lines` into instructions. Jumps may only go forward (classic BPF has no backward
 * jumps); each label must be defined exactly once and every conditional offset must fit in 8 bits.
 * Throws SandboxError('internal_error') on any violation: the builder produced a broken program,
 * and installing a half-understood filter would be worse than failing.
 */
export function buildBpfProgram(lines: readonly BpfSourceLine[]): BpfInstruction[] {
  const positions = new Map<BpfLabel, number>();
  let count = 0;
  for (const line of lines) {
    if (line.op !== 'label') {
      count += 1;
      continue;
    }
    if (positions.has(line.name)) throw internal(`label "${line.name}" is defined twice`);
    positions.set(line.name, count);
  }
  if (count === 0) throw internal('the program is empty');
  if (count > BPF_MAXINSNS) throw internal(`${count} instructions exceed BPF_MAXINSNS (${BPF_MAXINSNS})`);

  const offsetTo = (label: BpfLabel | undefined, from: number, max: number): number => {
    if (label === undefined) return 0;
    const target = positions.get(label);
    if (target === undefined) throw internal(`label "${label}" is not defined`);
    const offset = target - (from + 1);
    if (offset < 0) throw internal(`jump from ${from} to "${label}" goes backwards`);
    if (target >= count) throw internal(`label "${label}" is past the last instruction`);
    if (offset > max) throw internal(`jump from ${from} to "${label}" is ${offset} long (max ${max})`);
    return offset;
  };

  const out: BpfInstruction[] = [];
  for (const line of lines) {
    const at = out.length;
    switch (line.op) {
      case 'label':
        break;
      case 'load':
        if (line.offset % 4 !== 0) throw internal(`load offset ${line.offset} is not word-aligned`);
        out.push({ code: BPF.LD | BPF.W | BPF.ABS, jt: 0, jf: 0, k: checkU32(line.offset, 'load offset') });
        break;
      case 'ret':
        out.push({ code: BPF.RET | BPF.K, jt: 0, jf: 0, k: checkU32(line.value, 'return value') });
        break;
      case 'ja':
        out.push({ code: BPF.JMP | BPF.JA, jt: 0, jf: 0, k: offsetTo(line.to, at, count) });
        break;
      default:
        out.push({
          code: BPF.JMP | JUMP_OPS[line.op] | BPF.K,
          jt: offsetTo(line.ifTrue, at, BPF_MAX_COND_JUMP),
          jf: offsetTo(line.ifFalse, at, BPF_MAX_COND_JUMP),
          k: checkU32(line.k, 'jump constant'),
        });
    }
  }
  const last = out[out.length - 1];
  if (last === undefined || last.code !== (BPF.RET | BPF.K)) {
    throw internal('the program does not end with a return');
  }
  return out;
}

/**
 * Packs instructions into the 64-bit words `LinuxSpec.seccomp_program` takes
 * (native/binding/backend.h): `code << 48 | jt << 40 | jf << 32 | k`.
 */
export function encodeBpfInstructions(instructions: readonly BpfInstruction[]): bigint[] {
  return instructions.map((insn, index) => {
    const fits = (value: number, max: number): boolean => Number.isInteger(value) && value >= 0 && value <= max;
    if (!fits(insn.code, 0xffff) || !fits(insn.jt, 0xff) || !fits(insn.jf, 0xff) || !fits(insn.k, 0xffffffff)) {
      throw new SandboxError(
        'invalid_argument',
        `seccomp program instruction ${index} has a field out of range: ${JSON.stringify(insn)}`,
        { layer: 'seccomp' },
      );
    }
    return (BigInt(insn.code) << 48n) | (BigInt(insn.jt) << 40n) | (BigInt(insn.jf) << 32n) | BigInt(insn.k);
  });
}

/** The inverse of {@link encodeBpfInstructions} for one word (used by tests and diagnostics). */
export function decodeBpfInstruction(word: bigint): BpfInstruction {
  return {
    code: Number((word >> 48n) & 0xffffn),
    jt: Number((word >> 40n) & 0xffn),
    jf: Number((word >> 32n) & 0xffn),
    k: Number(word & 0xffffffffn),
  };
}

const JUMP_NAMES: Readonly<Record<number, string>> = {
  [BPF.JEQ]: 'jeq', [BPF.JGT]: 'jgt', [BPF.JGE]: 'jge', [BPF.JSET]: 'jset',
};

/** Small constants (syscall numbers, families, offsets) in decimal, the rest in hex. */
function constant(value: number): string {
  return value < 1024 ? String(value) : `0x${value.toString(16)}`;
}

/**
 * A readable, lossless listing of a program, one line per instruction: `12: jeq #165 -> 61, 13`
 * (jump targets as absolute indices: taken, not taken), `0: ld [4]`, `61: ret #0x50001`,
 * `5: ja -> 9`. Anything else, or an instruction with stray fields, is printed as its raw word
 * (`.word 0x...`), so two different programs never print the same. For reviews and diagnostics.
 */
export function formatBpfProgram(instructions: readonly BpfInstruction[]): string[] {
  return instructions.map((insn, index) => {
    const at = `${index}: `;
    const { code, jt, jf, k } = insn;
    if (code === (BPF.LD | BPF.W | BPF.ABS) && jt === 0 && jf === 0) return `${at}ld [${k}]`;
    if (code === (BPF.RET | BPF.K) && jt === 0 && jf === 0) return `${at}ret #${constant(k)}`;
    if (code === (BPF.JMP | BPF.JA) && jt === 0 && jf === 0) return `${at}ja -> ${index + 1 + k}`;
    const jump = (code & 0x07) === BPF.JMP && (code & 0x08) === BPF.K ? JUMP_NAMES[code & 0xf0] : undefined;
    if (jump !== undefined && code === (BPF.JMP | (code & 0xf0))) {
      return `${at}${jump} #${constant(k)} -> ${index + 1 + jt}, ${index + 1 + jf}`;
    }
    const [word] = encodeBpfInstructions([insn]);
    return `${at}.word 0x${(word ?? 0n).toString(16).padStart(16, '0')}`;
  });
}
