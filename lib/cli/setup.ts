// SPDX-License-Identifier: MIT
// `zero-sandbox setup [--json]`: the one-time elevated step some sandboxes need. None of ours
// does (Linux and macOS need nothing; the Windows AppContainer profile and ACLs are created per
// run as the user), so it reports that, in the Go Zero CLI's output shape (scripts that run its
// setup read ours), with the backend's state.
import { probe } from '../probe.js';
import { flagBool, parseArgs } from './args.js';
import type { CliIo } from './io.js';

export const SETUP_HELP = `Usage: zero-sandbox setup [--json]

Performs the one-time setup a native sandbox backend needs. No backend of
zero-sandbox needs one: Linux and macOS need nothing, and on Windows the
AppContainer profile and its ACLs are created per run as the current user.
Prints what the backend needs and whether it is available here.

Options:
  --json      print the result as JSON
  -h, --help  show this help

Exit status: 0 when the backend is available, 1 when it is not (see doctor).
`;

const PLATFORM_NAMES: Record<string, string> = { linux: 'linux', darwin: 'darwin', win32: 'windows' };

export async function runSetup(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { flags: [{ name: 'json', type: 'boolean' }] });
  if (args.help) {
    io.stdout(SETUP_HELP);
    return 0;
  }
  const report = await probe();
  const platform = PLATFORM_NAMES[report.platform] ?? report.platform;
  const backend = report.backend === 'unavailable' ? 'unavailable' : report.backend;
  const message = `No native sandbox setup is required for ${platform}`;
  const result = {
    platform,
    backend,
    ran: false,
    message,
    available: report.canEnforceDefaultPolicy,
    ...(report.canEnforceDefaultPolicy ? {} : { missing: report.missing }),
  };
  if (flagBool(args, 'json')) {
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    io.stdout(`${message}.\nbackend: ${backend} (${report.canEnforceDefaultPolicy ? 'available' : 'unavailable: run zero-sandbox doctor'})\n`);
  }
  return report.canEnforceDefaultPolicy ? 0 : 1;
}
