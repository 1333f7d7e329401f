// SPDX-License-Identifier: MIT
// Where the user's zero-sandbox settings live (the user config file and the grants file): the one
// rule both files and the host-handover check share.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** `$XDG_CONFIG_HOME/zero`, else `~/.config/zero`. */
export function userSettingsDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  if (xdg) return join(resolve(xdg), 'zero');
  const home = env.HOME?.trim() || env.USERPROFILE?.trim() || homedir();
  return join(home, '.config', 'zero');
}

/** The grants file: `$ZERO_SANDBOX_GRANTS_PATH`, else `sandbox-grants.json` in the settings dir. */
export function grantsFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.ZERO_SANDBOX_GRANTS_PATH?.trim();
  if (override) return resolve(override);
  return join(userSettingsDir(env), 'sandbox-grants.json');
}
