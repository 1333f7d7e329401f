// SPDX-License-Identifier: MIT
// Runs a check on both parse paths: the fast parser with tree-sitter behind it (shipped), and
// tree-sitter alone; each starts without kept trees.
import { forgetRecentTrees, setFastPath } from '../../lib/bash/parse.js';

/** Calls `check` once with the fast path on and once with it off, restoring the setting after. */
export function onBothParsePaths(check: (fast: boolean) => void): void {
  for (const fast of [true, false]) {
    const previous = setFastPath(fast);
    try {
      forgetRecentTrees();
      check(fast);
    } finally {
      setFastPath(previous);
    }
  }
}
