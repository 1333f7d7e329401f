// SPDX-License-Identifier: MIT
// GitHub-hosted runner images that are current (not retired) as of this package's release. The
// workflow check refuses any other label, and the workflow linter's own label list (which lags
// behind new images) is overridden by this one for runner-label findings only.

/** Runner labels the CI workflow may use. Retired: macos-13 and older, ubuntu-20.04, windows-2019. */
export const CURRENT_RUNNER_LABELS: ReadonlySet<string> = new Set([
  'ubuntu-24.04',
  'ubuntu-24.04-arm',
  'ubuntu-22.04',
  'macos-14',
  'macos-15',
  'macos-15-intel',
  'macos-26',
  'windows-2022',
  'windows-2025',
]);
