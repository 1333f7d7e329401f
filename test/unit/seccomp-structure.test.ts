// SPDX-License-Identifier: MIT
// Static checks of the seccomp programs: the corpus structure vectors, jump ranges, exact output.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { formatBpfProgram } from '../../lib/backend/linux/bpf.js';
import {
  buildSeccompProgram,
  type SeccompArch,
  type SeccompProgram,
} from '../../lib/backend/linux/seccomp.js';
import { ARCHES, MODES, readSeccompFixture } from '../fixtures/seccomp/shared.js';

const RET_ERRNO_EPERM = 327681;

interface Comparison {
  index: number;
  /** The seccomp_data offset loaded into the accumulator on every path here, or -1 if mixed. */
  source: number;
  op: number;
  k: number;
  takenTarget: number;
}

interface Analysis {
  loads: Set<number>;
  returns: Set<number>;
  comparisons: Comparison[];
  unreachable: number[];
  maxJump: number;
  targetsInRange: boolean;
}

/** Forward data flow over the program: which seccomp_data field each comparison looks at. */
function analyze(program: SeccompProgram): Analysis {
  const insns = program.instructions;
  const sources: Array<Set<number> | undefined> = insns.map(() => undefined);
  sources[0] = new Set([-1]);
  const result: Analysis = {
    loads: new Set(), returns: new Set(), comparisons: [], unreachable: [], maxJump: 0, targetsInRange: true,
  };
  const flow = (to: number, from: Set<number>): void => {
    if (to >= insns.length) {
      result.targetsInRange = false;
      return;
    }
    const set = (sources[to] ??= new Set());
    for (const s of from) set.add(s);
  };
  insns.forEach((insn, index) => {
    const here = sources[index];
    if (here === undefined) {
      result.unreachable.push(index);
      return;
    }
    const cls = insn.code & 0x07;
    if (cls === 0x00) {
      result.loads.add(insn.k);
      flow(index + 1, new Set([insn.k]));
    } else if (cls === 0x06) {
      result.returns.add(insn.k);
    } else if (cls === 0x05 && (insn.code & 0xf0) === 0x00) {
      flow(index + 1 + insn.k, here);
    } else {
      result.maxJump = Math.max(result.maxJump, insn.jt, insn.jf);
      const [only] = here;
      result.comparisons.push({
        index, source: here.size === 1 && only !== undefined ? only : -1, op: insn.code, k: insn.k,
        takenTarget: index + 1 + insn.jt,
      });
      flow(index + 1 + insn.jt, here);
      flow(index + 1 + insn.jf, here);
    }
  });
  return result;
}

function comparedWith(analysis: Analysis, source: number): number[] {
  return analysis.comparisons.filter((c) => c.source === source).map((c) => c.k);
}

function deniedNumbers(program: SeccompProgram, analysis: Analysis): number[] {
  return analysis.comparisons
    .filter((c) => c.source === 0 && c.op === 0x15 && program.instructions[c.takenTarget]?.k === RET_ERRNO_EPERM)
    .filter((c) => program.instructions[c.takenTarget]?.code === 0x06)
    .map((c) => c.k);
}

interface StructureVector {
  id: string;
  options: { network: 'deny' | 'allow'; blockUnixSockets: boolean };
  expect: {
    allJumpsInRange: boolean;
    comparesAuditArch?: Record<SeccompArch, number>;
    comparesNr?: Record<SeccompArch, number[]>;
    mustNotCompareNr?: Record<SeccompArch, number[]>;
    comparesArg0?: number[];
    deniedSyscallNumbers?: Record<SeccompArch, number[]>;
    loadsSeccompDataOffsets?: Record<string, number>;
    returns: Record<string, number>;
  };
}

const { vectors } = readSeccompFixture<{ vectors: StructureVector[] }>('structure-vectors.json');

for (const vector of vectors) {
  for (const arch of ARCHES) {
    test(`${vector.id} (${arch})`, () => {
      const program = buildSeccompProgram({ arch, ...vector.options });
      const analysis = analyze(program);
      const { expect } = vector;
      assert.is(analysis.targetsInRange && analysis.maxJump <= 255, expect.allJumpsInRange);
      if (expect.comparesAuditArch) {
        assert.equal(comparedWith(analysis, 4), [expect.comparesAuditArch[arch]], 'the arch is compared once');
      }
      const nrs = comparedWith(analysis, 0);
      for (const nr of expect.comparesNr?.[arch] ?? []) assert.ok(nrs.includes(nr), `compares nr ${nr}`);
      for (const nr of expect.mustNotCompareNr?.[arch] ?? []) assert.not.ok(nrs.includes(nr), `must not compare nr ${nr}`);
      for (const k of expect.comparesArg0 ?? []) assert.ok(comparedWith(analysis, 16).includes(k), `compares args[0] with ${k}`);
      const denied = deniedNumbers(program, analysis);
      for (const nr of expect.deniedSyscallNumbers?.[arch] ?? []) assert.ok(denied.includes(nr), `denies nr ${nr}`);
      for (const offset of Object.values(expect.loadsSeccompDataOffsets ?? {})) {
        assert.ok(analysis.loads.has(offset), `loads seccomp_data offset ${offset}`);
      }
      for (const [name, value] of Object.entries(expect.returns)) {
        assert.ok(analysis.returns.has(value), `returns ${name} (${value})`);
      }
    });
  }
}

test('every program: all code reachable, jumps in range, only known loads and verdicts, arch checked first', () => {
  for (const arch of ARCHES) {
    for (const mode of MODES) {
      const program = buildSeccompProgram({ arch, ...mode });
      const analysis = analyze(program);
      const label = `${arch} ${JSON.stringify(mode)}`;
      assert.equal(analysis.unreachable, [], `${label}: unreachable instructions`);
      assert.ok(analysis.targetsInRange, `${label}: a jump leaves the program`);
      assert.ok(analysis.maxJump <= 255, `${label}: jump of ${analysis.maxJump}`);
      assert.ok(program.instructions.length < 256, `${label}: ${program.instructions.length} instructions`);
      // Only nr, arch and the low words of args[0] and args[1] are ever read.
      assert.equal([...analysis.loads].sort((a, b) => a - b), [0, 4, 16, 24], label);
      assert.equal([...analysis.returns].sort((a, b) => a - b), [RET_ERRNO_EPERM, 0x7fff0000, 0x80000000], label);
      // The first comparison is the arch check, made before anything else is looked at.
      const [first] = analysis.comparisons;
      assert.is(first?.source, 4, label);
      assert.is(program.instructions[0]?.k, 4, `${label}: first instruction loads the arch`);
      // No comparison ever sees a mix of fields.
      assert.not.ok(analysis.comparisons.some((c) => c.source === -1), `${label}: comparison on a mixed accumulator`);
    }
  }
});

// The golden file holds every (arch, mode) program as a formatBpfProgram listing. After an
// intended change, review the new listing line by line, then rewrite the file with
// formatBpfProgram(buildSeccompProgram(...).instructions) for the eight keys below.
test('the filter output is exactly the reviewed golden listing (fixtures/seccomp/programs.golden.json)', () => {
  const golden = readSeccompFixture<Record<string, string[]>>('programs.golden.json');
  let compared = 0;
  for (const arch of ARCHES) {
    for (const mode of MODES) {
      const key = `${arch} network=${mode.network} blockUnixSockets=${mode.blockUnixSockets}`;
      const listing = formatBpfProgram(buildSeccompProgram({ arch, ...mode }).instructions);
      assert.equal(listing, golden[key], `${key} differs from the golden program; review the change, then regenerate`);
      compared += 1;
    }
  }
  assert.is(compared, Object.keys(golden).length);
});

test('building is deterministic and does not share state between calls', () => {
  for (const arch of ARCHES) {
    const a = buildSeccompProgram({ arch, network: 'deny', blockUnixSockets: false });
    a.instructions[0]!.k = 0;
    a.deniedSyscalls.push('read');
    const b = buildSeccompProgram({ arch, network: 'deny', blockUnixSockets: false });
    const c = buildSeccompProgram({ arch, network: 'deny', blockUnixSockets: false });
    assert.equal(b, c);
    assert.is(b.instructions[0]?.k, 4);
    assert.not.ok(b.deniedSyscalls.includes('read'));
  }
});

test.run();
