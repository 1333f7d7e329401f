// SPDX-License-Identifier: MIT
// The stream-json surface a Node client uses: the zod schemas plus the strict input reader (loads zod).
export * from './schema.js';
export { SandboxDenialSchema } from '../sandbox/denials-schema.js';
export { buildScript, readInput, readInputLine, readInputValue } from './reader.js';
export type { AcceptedInput, InputError, InputErrorCode, ReadResult } from './reader.js';
