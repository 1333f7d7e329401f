// When a nested write root's stamp is trusted to show every later change of its entries
// (settledStamp, root-tops.ts): a directory last changed (mtime and ctime) more than RACY_NANOS
// before now. The stamps are compared as decimal text; this holds them to the arithmetic.
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { RACY_NANOS, settledStamp } from '../../lib/sandbox/root-tops.js';

/** The rule by arithmetic: both times are whole decimals and more than RACY_NANOS before now. */
function byArithmetic(stamp: string, now: bigint): boolean {
  const [, , , mtime, ctime, more] = stamp.split(':');
  if (more !== undefined || mtime === undefined || ctime === undefined) return false;
  const whole = (text: string) => /^(0|[1-9]\d*)$/.test(text);
  if (!whole(mtime) || !whole(ctime)) return false;
  return now - BigInt(mtime) > RACY_NANOS && now - BigInt(ctime) > RACY_NANOS;
}

test('a stamp is settled exactly when both its times are more than RACY_NANOS old', () => {
  const now = 1_764_000_000_123_456_789n;
  const edge = now - RACY_NANOS;
  const times = [0n, 1n, 999n, edge - 1_000_000_000_000n, edge - 10n, edge - 1n, edge, edge + 1n, now, now + 1n, now * 10n];
  const texts = [...times.map(String), '', '-5', '007', `0${edge - 1n}`, '12a', `${edge - 1n} `];
  const linux = process.platform === 'linux';
  for (const mtime of texts) {
    for (const ctime of texts) {
      const stamp = `2049:77:4096:${mtime}:${ctime}`;
      assert.is(settledStamp({ kind: 'dir', stamp }, now), linux && byArithmetic(stamp, now), stamp);
      assert.is(settledStamp({ kind: 'file', stamp }, now), false, `a file: ${stamp}`);
    }
  }
  // A stamp with a field missing, an empty one, no entry, and a clock before RACY_NANOS.
  for (const stamp of ['', '1:2:3:4', `1:2:${edge - 5n}`, `:${edge - 5n}:${edge - 5n}`]) assert.is(settledStamp({ kind: 'dir', stamp }, now), false, stamp);
  assert.is(settledStamp(undefined, now), false);
  assert.is(settledStamp({ kind: 'dir', stamp: '1:2:3:0:0' }, RACY_NANOS), false);
  assert.is(settledStamp({ kind: 'dir', stamp: '1:2:3:0:0' }, RACY_NANOS + 1n), linux);
});

test.run();
