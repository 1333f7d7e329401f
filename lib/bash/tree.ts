// SPDX-License-Identifier: MIT
// The syntax tree the shell analysis walks: tree-sitter-bash's nodes, or the fast parser's.

/** A syntax node copied out of tree-sitter. Offsets are UTF-16 indexes into the parsed text. */
export interface ShNode {
  /** tree-sitter-bash node type, e.g. `command`, `word`, `pipeline`, `&&`. */
  type: string;
  /** Start offset (inclusive). */
  start: number;
  /** End offset (exclusive). */
  end: number;
  /** Child nodes, named and anonymous, in source order. */
  children: ShNode[];
}
