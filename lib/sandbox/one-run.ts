// SPDX-License-Identifier: MIT
// Whether this process runs one sandbox and then exits (the CLI's `run`). What this package keeps
// across the runs of a process (the protected-path guard's look, the credential deny set, the
// watched looks at write roots, the repository scan's watch on each directory) costs bookkeeping
// on every run that only a later run of the same process can use: the paths a look went through,
// their stamps, inotify watches. A process that says it runs once skips that bookkeeping. Nothing
// else changes: every look and computation is still made for its run, afresh, as the first run
// of a long-lived process makes it.

let once = false;

/** Says this process runs one sandbox: called by the CLI's `run` entry only, before the run. */
export function declareOneRun(): void {
  once = true;
}

/** True when this process runs one sandbox (nothing kept for a later run would be used). */
export function oneRun(): boolean {
  return once;
}
