// SPDX-License-Identifier: MIT
// The --limit-* flags of `run` and `exec`: one per resource limit, sizes with a K/M/G suffix.
import type { ResourceLimits } from '../backend/types.js';
import { flagString, UsageError, type ParsedArgs } from './args.js';

/** Each flag, the limit it sets, and whether it takes a size (bytes, with K/M/G suffixes). */
const LIMIT_FLAGS: ReadonlyArray<{ flag: string; limit: keyof ResourceLimits; size: boolean }> = [
  { flag: 'limit-cpu-seconds', limit: 'cpuSeconds', size: false },
  { flag: 'limit-memory', limit: 'memoryBytes', size: true },
  { flag: 'limit-file-size', limit: 'fileSizeBytes', size: true },
  { flag: 'limit-open-files', limit: 'openFiles', size: false },
  { flag: 'limit-processes', limit: 'processes', size: false },
  { flag: 'limit-tmp', limit: 'tmpBytes', size: true },
  { flag: 'limit-shm', limit: 'shmBytes', size: true },
];

/** The flag definitions for parseArgs. */
export const LIMIT_FLAG_DEFS = LIMIT_FLAGS.map(({ flag }) => ({ name: flag, type: 'string' as const }));

/** The --help lines. */
export const LIMIT_FLAGS_HELP = `  --limit-processes N  processes and threads (default 4096)
  --limit-tmp SIZE     size of the private /tmp (default 1G, or a quarter of RAM if less)
  --limit-shm SIZE     size of the private /dev/shm (default 256M, or a sixteenth of RAM)
  --limit-memory SIZE, --limit-file-size SIZE, --limit-cpu-seconds N, --limit-open-files N
                       further kernel limits (none by default); SIZE takes K, M or G
`;

const UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

function parseLimit(flag: string, text: string, size: boolean): number {
  const match = (size ? /^(\d+)([KMGT]?)(i?B)?$/i : /^(\d+)()()$/).exec(text.trim());
  const value = match === null ? NaN : Number(match[1]) * (UNITS[(match[2] as string).toUpperCase()] as number);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new UsageError(`--${flag} must be a positive ${size ? 'size (bytes, or with K, M, G)' : 'integer'}, not "${text}"`);
  }
  return value;
}

/** The limits the --limit-* flags set (absent flags leave the defaults). */
export function buildLimitsFromFlags(args: ParsedArgs): ResourceLimits {
  const limits: ResourceLimits = {};
  for (const { flag, limit, size } of LIMIT_FLAGS) {
    const text = flagString(args, flag);
    if (text !== undefined) limits[limit] = parseLimit(flag, text, size);
  }
  return limits;
}
