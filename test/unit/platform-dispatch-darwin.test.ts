// SPDX-License-Identifier: MIT
// The macOS dispatch of runSandboxed/spawnSandboxed, on any POSIX OS: the platform and the probe
// are injected and a stand-in sandbox-exec records what it was given, then runs the command.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { rejection } from '../helpers/sandbox.js';
import { drive, SEEDED_CONFIG, seedRepository, runOnPlatform, spawnOnPlatform } from '../fixtures/platform-dispatch.js';
import { writeFakeLogTool } from '../fixtures/sbpl/fake-log.js';
import { buildProbeReport } from '../../lib/probe.js';
import type { PlatformDeps } from '../../lib/sandbox/platform-backends.js';
import { withMissingCredentials } from '../../lib/backend/macos/seatbelt-plan.js';
import { SandboxedProcess } from '../../lib/sandbox/process.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'zs-dispatch-darwin-')));
const ws = join(base, 'ws');
const tmpRoot = join(base, 'tmp');
mkdirSync(ws);
mkdirSync(tmpRoot);
const argsFile = join(base, 'args.txt');
// Stand-in for sandbox-exec: records its arguments, then runs what follows "--".
const fake = join(base, 'fake-sandbox-exec');
writeFileSync(fake, `#!/bin/sh\nprintf "%s\\n" "$@" > "${argsFile}"\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n`);
chmodSync(fake, 0o755);

const fact = (ok: boolean) => ({ attempted: true, ok, errno: ok ? 0 : 1, value: 0 });
function darwinProbe(ok: boolean) {
  return buildProbeReport({ platform: 'darwin', arch: 'arm64', release: '24.0.0', uid: 501, facts: { sandboxExec: fact(ok), seatbeltEnforced: fact(ok), seatbeltProfile: fact(ok) } }, {});
}

const userDirs = { temp: '/private/var/folders/zz/abc123/T', cache: '/private/var/folders/zz/abc123/C' };
const userCacheDir = join(base, 'user-cache');
// The stand-in sandboxes nothing, so no process runs under a run's profile: off macOS (no addon
// listing there) the listing says so; on macOS it is the real one.
const noMembers = process.platform === 'darwin' ? {} : { runMembers: () => ({ members: [], undecided: 0 }) };
const deps: PlatformDeps = { platform: 'darwin', probe: () => darwinProbe(true), sandboxExecPath: fake, tmpRoot, darwinUserDirs: () => userDirs, userCacheDir, ...noMembers };
const env = { PATH: '/usr/bin:/bin', HOME: base, OPENAI_API_KEY: 'sk-secret', GITHUB_TOKEN: 'ghp-secret', KEEP_ME: 'kept' };

/** The argument after each `-D`, as a name → value map. */
function recordedParams(): Record<string, string> {
  const lines = readFileSync(argsFile, 'utf8').split('\n');
  const params: Record<string, string> = {};
  lines.forEach((line, i) => {
    if (line !== '-D') return;
    const [name, ...value] = (lines[i + 1] ?? '').split('=');
    params[name!] = value.join('=');
  });
  return params;
}

const posix = process.platform !== 'win32';
const contract = (name: string, fn: () => void | Promise<void>): void => {
  if (posix) test(name, fn);
};

contract('run: seatbelt profile, scrubbed environment, private TMPDIR, tool PATH, RunResult shape', async () => {
  rmSync(argsFile, { force: true });
  const result = await runOnPlatform(['/bin/sh', '-c', 'env; printf "cwd=%s\\n" "$(pwd)"; echo err >&2; exit 3'], { workspace: ws, env }, deps);
  assert.equal(Object.keys(result).sort(), ['aborted', 'backend', 'denials', 'durationMs', 'exitCode', 'network', 'outputBytes', 'prewarmed', 'protectedPathViolations', 'scrubbedEnv', 'signal', 'stderr', 'stdout', 'timedOut', 'truncated']);
  assert.is(result.backend, 'macos-seatbelt');
  assert.is(result.network, 'deny');
  assert.is(result.exitCode, 3);
  assert.is(result.signal, null);
  assert.is(result.stderr, 'err\n');
  assert.is(result.prewarmed, false);
  assert.equal(result.protectedPathViolations, []);
  const vars = new Map(result.stdout.trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
  assert.is(vars.get('ZERO_SANDBOXED'), '1');
  assert.is(vars.get('ZERO_SANDBOX_BACKEND'), 'macos-seatbelt');
  assert.is(vars.get('ZERO_SANDBOX_NETWORK'), 'deny');
  assert.is(vars.get('KEEP_ME'), 'kept');
  assert.not.ok(vars.has('OPENAI_API_KEY'), 'provider key scrubbed');
  assert.not.ok(vars.has('GITHUB_TOKEN'), 'token scrubbed');
  assert.is(vars.get('PATH'), '/opt/homebrew/bin:/opt/homebrew/sbin:/usr/local/bin:/usr/local/sbin:/usr/bin:/bin');
  assert.is(vars.get('cwd'), ws);
  const tmp = vars.get('TMPDIR')!;
  assert.ok(tmp.startsWith(join(tmpRoot, 'zero-sandbox-')), tmp);
  assert.is(vars.get('TMP'), tmp);
  // The profile: deny-default with network denied; the private temp dir and workspace as params.
  const args = readFileSync(argsFile, 'utf8');
  assert.ok(args.startsWith('-p\n(version 1)'), args.slice(0, 40));
  assert.match(args, /\(deny default \(with message "zsdeny[0-9a-f]{24}"\)\)/);
  assert.match(args, /\(deny network\* \(with message "zsdeny[0-9a-f]{24}"\)\)/);
  const params = recordedParams();
  assert.is(params.TMPDIR_0, tmp);
  assert.is(params.WRITE_ROOT_0, ws);
  // The per-user temp and cache directories under /var/folders are writable (clang, xcrun, Swift).
  assert.is(params.DARWIN_USER_TEMP_DIR, userDirs.temp);
  assert.is(params.DARWIN_USER_CACHE_DIR, userDirs.cache);
  assert.match(args, /\(allow file-write\* file-read\* \(subpath \(param "DARWIN_USER_TEMP_DIR"\)\)\)/);
  // Removed after the run.
  assert.not.ok(existsSync(tmp), 'private TMPDIR removed');
  assert.equal(readdirSync(tmpRoot), []);
});

contract('run: network allow drops the network deny and is reported', async () => {
  const result = await runOnPlatform(['/bin/sh', '-c', 'printf %s "$ZERO_SANDBOX_NETWORK"'], { workspace: ws, env, network: 'allow' }, deps);
  assert.is(result.network, 'allow');
  assert.is(result.stdout, 'allow');
  assert.not.match(readFileSync(argsFile, 'utf8'), /\(deny network\*[ )]/);
});

contract('run: a shell string runs under /bin/sh -c; input reaches stdin', async () => {
  const result = await runOnPlatform('read line; echo "got:$line"', { workspace: ws, env, input: 'hello\n' }, deps);
  assert.is(result.stdout, 'got:hello\n');
  // After the launcher (sh -c SCRIPT NAME), the command's argv unchanged.
  assert.ok(readFileSync(argsFile, 'utf8').endsWith('\nzero-sandbox\n/bin/sh\n-c\nread line; echo "got:$line"\n'));
});

contract('run: timeout kills the command and reports timedOut', async () => {
  const result = await runOnPlatform(['/bin/sleep', '30'], { workspace: ws, env, timeoutMs: 200 }, deps);
  assert.is(result.timedOut, true);
  assert.is(result.signal, 'SIGKILL');
  assert.equal(readdirSync(tmpRoot), []);
});

contract('run: fails closed when the probe says seatbelt is unavailable; nothing runs', async () => {
  rmSync(argsFile, { force: true });
  const error = await rejection(runOnPlatform(['/bin/true'], { workspace: ws, env }, { ...deps, probe: () => darwinProbe(false) }));
  assert.is(error.code, 'sandbox_unavailable');
  assert.is(error.layer, 'seatbelt');
  assert.match(error.message, /sandboxExec failed/);
  assert.match(error.message, /nothing ran/);
  assert.not.ok(existsSync(argsFile), 'sandbox-exec never started');
  assert.equal(readdirSync(tmpRoot), []);
});

contract('run: limits seatbelt cannot enforce are refused and the temp dir is removed', async () => {
  rmSync(argsFile, { force: true });
  const error = await rejection(runOnPlatform(['/bin/true'], { workspace: ws, env, limits: { cpuSeconds: 5 } }, deps));
  assert.is(error.code, 'sandbox_unavailable');
  assert.match(error.message, /cpuSeconds/);
  assert.not.ok(existsSync(argsFile));
  assert.equal(readdirSync(tmpRoot), []);
});

contract('run: an invalid workspace or maxBuffer is refused naming the option; no temp dir is left', async () => {
  let probed = false;
  const error = await rejection(runOnPlatform(['/bin/true'], { workspace: join(base, 'missing') }, { ...deps, probe: () => ((probed = true), darwinProbe(true)) }));
  assert.is(error.code, 'invalid_argument');
  assert.match(error.message, /workspace/);
  assert.equal(readdirSync(tmpRoot), []);
  const buffer = await rejection(runOnPlatform(['/bin/true'], { workspace: ws, maxBuffer: 0 }, deps));
  assert.is(buffer.code, 'invalid_argument');
  assert.match(buffer.message, /maxBuffer/);
  assert.ok(probed, 'the workspace is checked when the plan is resolved, after the probe');
});

contract('run: unknown platforms are refused', async () => {
  const error = await rejection(runOnPlatform(['/bin/true'], { workspace: ws }, { ...deps, platform: 'freebsd' }));
  assert.is(error.code, 'sandbox_unavailable');
  assert.match(error.message, /freebsd/);
});

contract('spawn: streams, exit event and exited promise with the SandboxExit shape', async () => {
  const child = spawnOnPlatform(['/bin/sh', '-c', 'read line; echo "out:$line"; echo "err:$TMPDIR" >&2; exit 5'], { workspace: ws, env }, deps);
  assert.is(child.backend, 'macos-seatbelt');
  assert.instance(child, SandboxedProcess);
  assert.ok(child.pid > 0);
  const { exit, events, stdout, stderr } = await drive(child, 'ping\n');
  assert.equal(exit, { exitCode: 5, signal: null, timedOut: false, aborted: false, protectedPathViolations: [] });
  assert.equal(events, [exit]);
  assert.is(stdout, 'out:ping\n');
  const tmp = stderr.trim().slice('err:'.length);
  assert.ok(tmp.startsWith(join(tmpRoot, 'zero-sandbox-')), tmp);
  assert.not.ok(existsSync(tmp), 'private TMPDIR removed on exit');
  assert.is(child.kill(), false, 'kill after exit is a no-op');
});

contract('spawn: kill() ends the whole process group; abort is reported', async () => {
  const child = spawnOnPlatform(['/bin/sh', '-c', 'sleep 30 & sleep 30'], { workspace: ws, env, stdio: ['ignore', 'ignore', 'ignore'] }, deps);
  assert.is(child.stdout, null);
  assert.ok(child.kill('SIGKILL'));
  const exit = await child.exited;
  assert.is(exit.signal, 'SIGKILL');
  // The background sleep was in the group too; once init reaps it, the group is empty.
  const groupGone = async (): Promise<boolean> => {
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(-child.pid, 0);
      } catch {
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  };
  assert.ok(await groupGone(), 'no process of the command group survives kill()');
  const controller = new AbortController();
  const aborted = spawnOnPlatform(['/bin/sleep', '30'], { workspace: ws, env, signal: controller.signal }, deps);
  controller.abort();
  const abortExit = await aborted.exited;
  assert.is(abortExit.aborted, true);
  assert.equal(readdirSync(tmpRoot), []);
});

contract('spawn: a missing sandbox-exec is an exec error, not a hang', async () => {
  const child = spawnOnPlatform(['/bin/true'], { workspace: ws, env }, { ...deps, sandboxExecPath: join(base, 'no-such-sandbox-exec') });
  const exit = await child.exited;
  assert.is(exit.exitCode, 127);
  assert.is(exit.execError?.code, 'ENOENT');
  assert.equal(readdirSync(tmpRoot), []);
});

contract('spawn: a .zero the command creates is removed and reported', async () => {
  const child = spawnOnPlatform(['/bin/sh', '-c', 'mkdir .zero'], { workspace: ws, env }, deps);
  const exit = await child.exited;
  assert.equal(exit.protectedPathViolations, [join(ws, '.zero')]);
  assert.not.ok(existsSync(join(ws, '.zero')));
});

contract('run: git init in the workspace root is allowed (no deny rule on a .git/hooks or .git/config that does not exist yet)', async () => {
  const fresh = join(base, 'fresh');
  mkdirSync(fresh);
  await runOnPlatform(['/bin/true'], { workspace: fresh, env }, deps);
  const none = Object.entries(recordedParams()).filter(([name]) => name.startsWith('PROTECTED_')).map(([, value]) => value);
  assert.not.ok(none.some((p) => p.includes('/.git/')), none.join(' '));
  // An existing repository keeps its hooks read-only; its config stays writable (git remote add
  // works) and is compared with its content before the run once the command is gone.
  mkdirSync(join(fresh, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(fresh, '.git', 'config'), '[core]\n');
  await runOnPlatform(['/bin/true'], { workspace: fresh, env }, deps);
  const some = Object.entries(recordedParams()).filter(([name]) => name.startsWith('PROTECTED_')).map(([, value]) => value);
  assert.ok(some.includes(join(fresh, '.git', 'hooks')), some.join(' '));
  assert.not.ok(some.includes(join(fresh, '.git', 'config')), some.join(' '));
});

contract('spawn: a hook planted in an existing .git whose hooks dir was missing is removed and reported', async () => {
  const repo = join(base, 'repo');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const child = spawnOnPlatform(['/bin/sh', '-c', 'mkdir .git/hooks && echo evil > .git/hooks/pre-commit'], { workspace: repo, env }, deps);
  const exit = await child.exited;
  assert.ok(exit.protectedPathViolations.includes(join(repo, '.git', 'hooks')), exit.protectedPathViolations.join(' '));
  assert.not.ok(existsSync(join(repo, '.git', 'hooks')));
});

contract('attack (macOS backend): git files planted for host git are undone once the command group is gone', async () => {
  // The stand-in sandbox-exec enforces nothing, so this is the after-run check the macOS starter
  // runs: the same guard and check as on Linux (a planted program key in an existing config, a
  // repository made two levels down with a hook and a config key that runs a program).
  const repo = join(base, 'git-plant');
  seedRepository(repo);
  const config = SEEDED_CONFIG;
  const script = [
    'printf "[core]\\n\\tfsmonitor = ./evil.sh\\n" >> .git/config',
    'mkdir -p a/b/.git/hooks a/b/.git/objects a/b/.git/refs',
    'echo "ref: refs/heads/main" > a/b/.git/HEAD',
    'printf "[core]\\n\\thooksPath = ../../hooks\\n" > a/b/.git/config',
    'echo evil > a/b/.git/hooks/post-checkout',
    'mkdir -p c/.git && echo gitdir: /elsewhere > c/.git/commondir',
  ].join(' && ');
  const child = spawnOnPlatform(['/bin/sh', '-c', script], { workspace: repo, env, stdio: ['ignore', 'ignore', 'pipe'] }, deps);
  const exit = await child.exited;
  assert.is(exit.exitCode, 1, 'a command that exited 0 but planted for host git fails');
  const violations = exit.protectedPathViolations;
  assert.ok(violations.includes(join(repo, '.git', 'config')), violations.join(' '));
  assert.is(readFileSync(join(repo, '.git', 'config'), 'utf8'), config, 'the config is put back byte for byte');
  assert.ok(violations.includes(join(repo, 'a', 'b', '.git', 'config')), violations.join(' '));
  assert.not.ok(existsSync(join(repo, 'a', 'b', '.git', 'config')));
  assert.not.ok(existsSync(join(repo, 'a', 'b', '.git', 'hooks', 'post-checkout')));
  assert.ok(existsSync(join(repo, 'a', 'b', '.git', 'HEAD')), 'the new repository itself is kept');
  assert.not.ok(existsSync(join(repo, 'c', '.git', 'commondir')));
  assert.ok(exit.protectedPathDetails?.every((v) => v.reason !== undefined && v.reason.length > 0));
});

contract('attack (macOS backend): a run that fails to start leaves no notes held and nothing on the host', async () => {
  const repo = join(base, 'git-nostart');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const missing = { ...deps, sandboxExecPath: join(base, 'no-such-sandbox-exec') };
  const exit = await spawnOnPlatform(['/bin/true'], { workspace: repo, env }, missing).exited;
  assert.is(exit.execError?.code, 'ENOENT');
  assert.equal(exit.protectedPathViolations, []);
  assert.equal(readdirSync(join(repo, '.git')), []);
  // A later run of the same workspace notes the state afresh: a config it finds is its own "before".
  writeFileSync(join(repo, '.git', 'config'), '[core]\n');
  const next = await spawnOnPlatform(['/bin/sh', '-c', 'printf "[alias]\\n\\tx = !evil\\n" >> .git/config'], { workspace: repo, env }, deps).exited;
  assert.is(readFileSync(join(repo, '.git', 'config'), 'utf8'), '[core]\n');
  assert.ok(next.protectedPathViolations.includes(join(repo, '.git', 'config')), next.protectedPathViolations.join(' '));
});

contract('attack: a credential file created while the command runs is denied too (seatbelt denies missing paths)', async () => {
  const home = join(base, 'home-missing-creds');
  mkdirSync(home);
  await runOnPlatform(['/bin/true'], { workspace: ws, env: { ...env, HOME: home } }, deps);
  const denied = Object.entries(recordedParams()).filter(([name]) => name.startsWith('DENY_READ_')).map(([, value]) => value);
  for (const rel of ['.aws', '.git-credentials', '.npmrc', '.netrc', '.docker/config.json', '.kube']) {
    assert.ok(denied.includes(join(home, rel)), `${rel} not denied: ${denied.join(' ')}`);
  }
});

contract('run: the unified-log refusals of this run (tagged deny rules) become structured denials', async () => {
  // Stand-in for /usr/bin/log: reports one refusal carrying the tag it was asked to filter on.
  const fakeLog = join(base, 'fake-log');
  const predicateFile = join(base, 'predicate.txt');
  writeFakeLogTool(fakeLog, predicateFile, ['Sandbox: cat(41) deny(1) file-read-data /Users/dev/.aws/credentials %s']);
  // The command ends once the stand-in has printed (at most ~20 s): on a loaded machine the log
  // tool can start later than the command's end plus the monitor's grace for late lines.
  const waitPrinted = 'i=0; while [ ! -e "$1" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done; exit 1';
  const result = await runOnPlatform(['/bin/sh', '-c', waitPrinted, 'sh', `${predicateFile}.printed`], { workspace: ws, env }, { ...deps, logTool: fakeLog });
  const tag = /zsdeny[0-9a-f]{24}/.exec(readFileSync(predicateFile, 'utf8'))?.[0];
  assert.ok(tag !== undefined);
  // The tag the log was filtered on is the one every deny rule of this run's profile carries.
  assert.ok(readFileSync(argsFile, 'utf8').includes(`(deny default (with message "${tag}"))`));
  assert.equal(result.denials.map((d) => [d.capability.kind, d.capability.scope, d.source]), [['filesystem_read', '/Users/dev/.aws/credentials', 'platform_sandbox']]);
});

contract('run: npm, pip, Go and cargo caches go to the managed per-workspace state; npm reads a token-free npmrc copy', async () => {
  // The user's npmrc is found through our own environment (as on Linux): point it at a test file.
  writeFileSync(join(base, '.npmrc'), 'color=false\n//registry.example/:_authToken=npm_secret_token_value\n');
  // Both spellings: npm itself sets the lower-case one for `npm test`, and it is read first.
  const saved = { upper: process.env.NPM_CONFIG_USERCONFIG, lower: process.env.npm_config_userconfig };
  process.env.NPM_CONFIG_USERCONFIG = join(base, '.npmrc');
  process.env.npm_config_userconfig = join(base, '.npmrc');
  try {
    const result = await runOnPlatform(['/bin/sh', '-c', 'env; echo ---; cat "$npm_config_userconfig"'], { workspace: ws, env }, deps);
    const [envText, npmrc] = result.stdout.split('---\n');
    const vars = new Map(envText!.trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    const state = join(userCacheDir, 'zero', 'runtime', 'v1');
    for (const name of ['npm_config_cache', 'NPM_CONFIG_CACHE', 'PIP_CACHE_DIR', 'GOCACHE', 'GOMODCACHE', 'CARGO_HOME', 'YARN_CACHE_FOLDER']) {
      assert.ok(vars.get(name)?.startsWith(`${state}/`), `${name}=${vars.get(name)}`);
    }
    // The managed cache/ and data/ dirs are write roots of the profile (no protected names there).
    const params = Object.entries(recordedParams());
    const roots = params.filter(([name]) => name.startsWith('WRITE_ROOT_')).map(([, value]) => value);
    assert.ok(roots.some((root) => root.startsWith(state) && root.endsWith('/cache')), roots.join());
    assert.ok(roots.some((root) => root.startsWith(state) && root.endsWith('/data')), roots.join());
    // The user's npmrc is denied; the copy npm is pointed at keeps the settings, not the token.
    assert.ok(params.some(([name, value]) => name.startsWith('DENY_READ_') && value === join(base, '.npmrc')));
    assert.ok(vars.get('npm_config_userconfig')?.startsWith(`${state}/`));
    assert.match(npmrc!, /color=false/);
    assert.not.match(npmrc!, /npm_secret_token_value/);
    assert.not.match(result.stdout, /npm_secret_token_value/);
  } finally {
    if (saved.upper === undefined) delete process.env.NPM_CONFIG_USERCONFIG;
    else process.env.NPM_CONFIG_USERCONFIG = saved.upper;
    if (saved.lower === undefined) delete process.env.npm_config_userconfig;
    else process.env.npm_config_userconfig = saved.lower;
    rmSync(join(base, '.npmrc'), { force: true });
  }
});

test('withMissingCredentials: only missing, clean candidates that neither hold nor lie in a write root', () => {
  const p = { argv: ['/bin/true'], cwd: '/w/ws', env: {}, network: 'deny' as const, workspace: '/w/ws', readRoots: ['/'],
    writeRoots: [{ root: '/w/ws', readOnlySubpaths: [], protectedNames: [] }], denyRead: ['/h/.aws'], denyWrite: [], blockUnixSockets: true, limits: {} };
  const out = withMissingCredentials(p, ['/h/.aws', '/h/.netrc', '/h/.npmrc', '/w', '/w/ws/.env', 'rel/x', '/h/../etc', '/h/.netrc'], (x) => x === '/h/.npmrc');
  assert.equal(out.denyRead, ['/h/.aws', '/h/.netrc']);
  assert.is(withMissingCredentials(p, ['/h/.npmrc'], () => true), p);
  // An allowRead root opts the stores at or below it out, missing ones too.
  const opted = withMissingCredentials({ ...p, readRoots: ['/', '/h/.config'] }, ['/h/.config/gh/hosts.yml', '/h/.config', '/h/.netrc'], () => false);
  assert.equal(opted.denyRead, ['/h/.aws', '/h/.netrc']);
});

test.after(() => rmSync(base, { recursive: true, force: true }));
test.run();
