// Which workspaces and write roots hand the host over, on simulated Linux, macOS and Windows hosts
// (the rule takes the path semantics and host facts as input), and the exact refusal messages.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { assertNotHostHandover, currentHandoverHost, handoverReasonByRules, hostHandoverReason, type HandoverHost } from '../../lib/sandbox/host-handover.js';

const linux: HandoverHost = {
  platform: 'linux',
  homes: ['/home/ada'],
  nodeDir: '/opt/node-v22/bin',
  packageDir: '/home/ada/proj/node_modules/zero-sandbox',
  tempDir: '/tmp',
};

const mac: HandoverHost = {
  platform: 'darwin',
  homes: ['/Users/ada'],
  nodeDir: '/opt/homebrew/Cellar/node/22.1.0/bin',
  packageDir: '/Users/ada/.npm/_npx/1234/node_modules/zero-sandbox',
  tempDir: '/private/var/folders/xy/abc123/T',
};

const windows: HandoverHost = {
  platform: 'win32',
  homes: ['C:\\Users\\ada'],
  nodeDir: 'C:\\Program Files\\nodejs',
  packageDir: 'C:\\Users\\ada\\AppData\\Roaming\\npm\\node_modules\\zero-sandbox',
  tempDir: 'C:\\Users\\ada\\AppData\\Local\\Temp',
  env: { SystemDrive: 'C:', SystemRoot: 'C:\\WINDOWS' },
};

const refused = (host: HandoverHost, paths: string[]) => {
  for (const path of paths) assert.ok(hostHandoverReason(path, host) !== undefined, `${host.platform}: ${path} should be refused`);
};
const allowed = (host: HandoverHost, paths: string[]) => {
  for (const path of paths) assert.is(hostHandoverReason(path, host), undefined, `${host.platform}: ${path} should be allowed`);
};

test('Linux: the root, the home and its ancestors, system directories and zero-sandbox itself are refused', () => {
  refused(linux, ['/', '/home', '/home/ada', '/etc', '/etc/systemd', '/usr', '/usr/local/bin', '/bin', '/sbin', '/lib', '/lib64', '/libx32/x', '/boot', '/dev', '/dev/shm', '/proc', '/proc/self', '/sys', '/run', '/run/user/1000', '/var', '/var/lib', '/var/lib/dpkg', '/var/log', '/tmp', '/var/tmp']);
  refused(linux, ['/opt/node-v22/bin', '/home/ada/proj/node_modules/zero-sandbox', '/home/ada/proj/node_modules/zero-sandbox/dist']);
  refused(linux, ['/home/ada/.config', '/home/ada/.config/zero', '/home/ada/.ssh', '/home/ada/.local/bin', '/home/ada/.local', '/home/ada/.cache']);
});

test('Linux: ordinary project directories, including subdirectories of /tmp, /var/tmp and /var, stay allowed', () => {
  allowed(linux, ['/home/ada/proj', '/home/ada/proj/node_modules', '/home/ada/.cache/pip', '/home/ada/.local/state', '/tmp/x', '/var/tmp/build', '/var/www/site', '/opt/app', '/opt/node-v22', '/srv/data', '/mnt/disk/work', '/library', '/home/adam']);
});

test('Linux: exact messages', () => {
  const reason = (path: string) => hostHandoverReason(path, linux);
  assert.is(reason('/'), 'is the root of a file system: the command could change any file on it');
  assert.is(reason('/home/ada'), 'is your home directory: the command could change your shell startup files, git config, SSH keys and login programs');
  assert.is(reason('/home'), 'holds your home directory /home/ada: the command could change your shell startup files, git config, SSH keys and login programs');
  assert.is(reason('/etc'), 'is /etc, system state the host runs from');
  assert.is(reason('/usr/local/bin'), 'is inside /usr, system state the host runs from');
  assert.is(reason('/lib64'), 'is /lib64, system state the host runs from');
  assert.is(reason('/tmp'), 'is the temp directory, shared by every program and user of the host; use a subdirectory');
  assert.is(reason('/var/tmp'), 'is /var/tmp, shared by every program and user of the host; use a subdirectory');
  assert.is(reason('/var'), 'is /var, system state the host runs from');
  assert.is(reason('/opt/node-v22/bin'), 'is the directory of the Node binary (/opt/node-v22/bin): the command could replace the node the host runs');
  assert.is(reason('/home/ada/proj/node_modules/zero-sandbox/dist'), "is inside zero-sandbox's own package directory (/home/ada/proj/node_modules/zero-sandbox): the command could rewrite the sandbox the next invocation runs");
  assert.is(reason('/home/ada/.config/zero'), 'is inside /home/ada/.config, programs and settings the host runs at login or on the next command');
});

test('macOS: /System, /Library, /Applications, the /private spellings and the per-user temp dir; case is ignored', () => {
  refused(mac, ['/', '/System', '/System/Library', '/Library', '/Library/LaunchDaemons', '/Applications', '/Applications/Foo.app', '/private', '/private/etc', '/private/var', '/private/var/db', '/private/tmp', '/private/var/tmp', '/private/var/folders', '/private/var/folders/xy/abc123/T', '/Users', '/Users/ada', '/Users/ada/Library', '/Users/ada/Library/LaunchAgents', '/opt/homebrew', '/opt/homebrew/bin', '/Volumes', '/usr/local']);
  refused(mac, ['/system', '/USERS/ADA', '/applications/x.app']);
  allowed(mac, ['/Users/ada/proj', '/private/tmp/x', '/private/var/folders/xy/abc123/T/zs-123', '/Volumes/Work/proj']);
  assert.is(hostHandoverReason('/SYSTEM/Library', mac), 'is inside /System, system state the host runs from');
});

test('Windows: drive and share roots, Windows, Program Files, ProgramData, the profile and its ancestors; case is ignored', () => {
  refused(windows, ['C:\\', 'D:\\', '\\\\server\\share\\', 'C:\\Windows', 'c:\\windows\\system32', 'C:\\Program Files', 'C:\\Program Files\\nodejs', 'C:\\Program Files (x86)\\Git', 'C:\\ProgramData\\Microsoft', 'C:\\Users', 'C:\\Users\\ada', 'c:\\users\\ADA', 'C:\\Users\\ada\\AppData', 'C:\\Users\\ada\\AppData\\Roaming\\Microsoft\\Windows\\Start Menu', 'C:\\Users\\ada\\AppData\\Local\\Temp', 'C:\\Users\\ada\\AppData\\Roaming\\npm\\node_modules\\zero-sandbox']);
  allowed(windows, ['C:\\Users\\ada\\proj', 'D:\\work\\proj', 'C:\\Users\\ada\\AppData\\Local\\Temp\\zs-1', 'C:\\src']);
  assert.is(hostHandoverReason('C:\\', windows), 'is the root of a file system: the command could change any file on it');
  assert.is(hostHandoverReason('C:\\Windows\\System32', windows), 'is inside C:\\WINDOWS, system state the host runs from');
  assert.is(hostHandoverReason('c:\\users', windows), 'holds your home directory C:\\Users\\ada: the command could change your shell startup files, git config, SSH keys and login programs');
});

test('the look-up per component that clears most roots gives the answer of every rule asked in turn', () => {
  const seeds = [
    '/', '/etc/ssh', '/usr/local/lib', '/var/www/site', '/var/lib/dpkg', '/var/tmp/build', '/tmp/proj', '/lib', '/lib64/x', '/libx32',
    '/libexec/a', '/library/x', '/Lib32', '/libfoo/x', '/home/ada/.config/git', '/home/ada/.local/share/x', '/home/ada/.local/bin/x',
    '/home/ada/.cache/x', '/home/ada/proj/node_modules/zero-sandbox/dist', '/home/bob/code', '/opt/node-v22/bin/node', '/opt/other',
    '/work/cfg/zero/config.json', '/work/grants.json', '/work/cache/zero/runtime', '/tmp/zero-runtime-1000/x', '/srv/data', '/mnt/disk/x',
    '/home/ada/.local/state/zero-sandbox/notes', '/System/Library/x', '/private/var/folders/xy/abc123/T/x', '/Users/ada/Library/x',
    '/Users/ada/code/x', '/opt/homebrew/Cellar/node/22.1.0/bin', '/private/tmp/x', '/Volumes/disk', '/nix/store/x', '/snap/bin',
  ];
  const paths = new Set<string>();
  for (const seed of seeds) {
    for (let path = seed; ; path = path.slice(0, Math.max(1, path.lastIndexOf('/')))) {
      for (const variant of [path, path.toUpperCase(), path === '/' ? '/x' : `${path}/x`, path === '/' ? '/x/y' : `${path}/x/y`]) paths.add(variant);
      if (path === '/') break;
    }
  }
  const richer: HandoverHost = { ...linux, settings: ['/work/cfg/zero', '/work/grants.json'], state: ['/work/cache/zero', '/tmp/zero-runtime-1000'], notes: ['/home/ada/.local/state/zero-sandbox'] };
  let refusedCount = 0;
  let allowedCount = 0;
  for (const host of [linux, richer, mac, { ...linux, homes: ['/'] }]) {
    for (const path of paths) {
      const reason = handoverReasonByRules(path, host);
      assert.is(hostHandoverReason(path, host), reason, `${host.platform} ${host.homes.join()}: ${path}`);
      if (reason === undefined) allowedCount++;
      else refusedCount++;
    }
  }
  assert.ok(refusedCount > 100 && allowedCount > 100, `${refusedCount} refused, ${allowedCount} allowed`);
});

test('assertNotHostHandover throws invalid_argument naming the option, the given and the resolved path', () => {
  try {
    assertNotHostHandover('/home/ada', 'allowWrite', '../..', linux);
    assert.unreachable('should throw');
  } catch (error) {
    assert.instance(error, SandboxError);
    assert.is((error as SandboxError).code, 'invalid_argument');
    assert.is((error as SandboxError).path, '/home/ada');
    assert.is((error as Error).message, 'allowWrite ../.. (/home/ada) is your home directory: the command could change your shell startup files, git config, SSH keys and login programs');
  }
  assert.not.throws(() => assertNotHostHandover('/home/ada/proj', 'workspace', '/home/ada/proj', linux));
});

test("Linux: zero-sandbox's own settings (config dir, grants file) are refused with what holds them, wherever they live", () => {
  const host: HandoverHost = { ...linux, settings: ['/work/cfg/zero', '/work/grants.json'] };
  const why = 'the command could turn the sandbox off or grant itself more for the next run';
  assert.is(hostHandoverReason('/work/cfg', host), `holds zero-sandbox's own settings (/work/cfg/zero): ${why}`);
  assert.is(hostHandoverReason('/work/cfg/zero', host), `is zero-sandbox's own settings (/work/cfg/zero): ${why}`);
  assert.is(hostHandoverReason('/work/cfg/zero/x', host), `is inside zero-sandbox's own settings (/work/cfg/zero): ${why}`);
  assert.is(hostHandoverReason('/work', host), `holds zero-sandbox's own settings (/work/cfg/zero): ${why}`);
  allowed(host, ['/work/proj', '/work/cfg2', '/work/grants']);
});

test("Linux: zero-sandbox's own state on the host (runtime roots, markers, the temp fallback) is refused with what lies inside it", () => {
  const host: HandoverHost = { ...linux, state: ['/work/cache/zero', '/tmp/zero-runtime-1000'] };
  const why = 'the command could forge what the host trusts or writes there on the next run';
  assert.is(hostHandoverReason('/work/cache/zero', host), `is zero-sandbox's own state on the host (/work/cache/zero): ${why}`);
  assert.is(hostHandoverReason('/work/cache/zero/runtime/v1', host), `is inside zero-sandbox's own state on the host (/work/cache/zero): ${why}`);
  assert.is(hostHandoverReason('/tmp/zero-runtime-1000/v1', host), `is inside zero-sandbox's own state on the host (/tmp/zero-runtime-1000): ${why}`);
  // What holds it may be a workspace: the runtime state then moves to the temp fallback.
  allowed(host, ['/work/cache', '/work', '/work/cache/zero2']);
});

test('Linux: the fallback directory of the protected-path notes is refused, and so is every directory holding it', () => {
  const host: HandoverHost = { ...linux, notes: ['/home/ada/.local/state/zero-sandbox'] };
  const why = "the protected-path notes of zero-sandbox's runs in flight (/home/ada/.local/state/zero-sandbox): the command could forge what another run restores";
  assert.is(hostHandoverReason('/home/ada/.local/state', host), `holds ${why}`);
  assert.is(hostHandoverReason('/home/ada/.local/state/zero-sandbox', host), `is ${why}`);
  assert.is(hostHandoverReason('/home/ada/.local/state/zero-sandbox/run-notes-1', host), `is inside ${why}`);
  allowed(host, ['/home/ada/.local/state/other', '/home/ada/.local/state/zero-sandbox2', '/home/ada/project']);
});

test('this host: the Node binary directory and this package are refused, a fresh project directory is not', () => {
  const host = currentHandoverHost();
  assert.ok(hostHandoverReason(host.nodeDir, host)?.includes('Node binary'));
  assert.ok(hostHandoverReason(host.packageDir, host)?.includes("zero-sandbox's own package directory"));
  for (const home of host.homes) assert.ok(hostHandoverReason(home, host) !== undefined);
  for (const own of host.settings ?? []) assert.ok(hostHandoverReason(own, host) !== undefined, own);
  assert.ok((host.settings ?? []).length >= 1, 'the settings are among the facts');
  for (const own of host.state ?? []) assert.ok(hostHandoverReason(own, host)?.includes("zero-sandbox's own state"), own);
  assert.is((host.state ?? []).length, 2, 'the state directories are among the facts');
  // process.platform: only Linux runs share their notes through a directory.
  if (process.platform === 'linux') {
    assert.is((host.notes ?? []).length, 1, 'the notes fallback is among the facts');
    for (const own of host.notes ?? []) assert.ok(hostHandoverReason(own, host)?.includes('protected-path notes'), own);
  }
});

test('this host: the same facts give the same host (its rules folded once), a changed HOME a new one that refuses the new home', () => {
  // os.homedir() reads HOME, or USERPROFILE on Windows.
  const saved = { HOME: process.env.HOME, USERPROFILE: process.env.USERPROFILE };
  const dir = mkdtempSync(join(tmpdir(), 'zs-handover-home-'));
  try {
    const first = currentHandoverHost();
    assert.is(currentHandoverHost(), first, 'unchanged facts: the same object');
    process.env.HOME = dir;
    process.env.USERPROFILE = dir;
    const moved = currentHandoverHost();
    assert.is.not(moved, first);
    const home = realpathSync(dir);
    assert.ok(moved.homes.includes(home));
    assert.ok(hostHandoverReason(home, moved)?.includes('home directory'));
    assert.ok(hostHandoverReason(join(home, '.ssh'), moved) !== undefined);
    assert.is(hostHandoverReason(home, first), undefined, 'the earlier host did not know it');
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
