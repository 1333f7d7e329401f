// SPDX-License-Identifier: MIT
// .github/workflows/ci.yml cannot run here, so its structure is checked: it parses (PyYAML when the
// machine has it, else an indentation-aware reader of this file's subset), and it holds the OS
// matrix, the smoke-test steps per OS, the cross-compile check and the prebuild upload legs.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CURRENT_RUNNER_LABELS } from '../helpers/runner-labels.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const path = join(root, '.github', 'workflows', 'ci.yml');
const text = readFileSync(path, 'utf8');

type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

/** Parses with PyYAML when available; returns undefined when python3 or PyYAML is missing. */
function parseWithPyYaml(source: string): Yaml | undefined {
  const script = 'import sys, json, yaml\nd = yaml.safe_load(sys.stdin.read())\nprint(json.dumps(d, default=str))';
  const result = spawnSync('python3', ['-c', script], { input: source, encoding: 'utf8' });
  if (result.error !== undefined || /No module named/.test(result.stderr)) return undefined;
  if (result.status !== 0) throw new Error(`YAML does not parse:\n${result.stderr}`);
  const parsed = JSON.parse(result.stdout) as { [key: string]: Yaml };
  // YAML 1.1 reads the key `on` as true.
  if ('true' in parsed && !('on' in parsed)) parsed.on = parsed.true!;
  return parsed;
}

/** Minimal checks for this file's style: no tabs in indentation, two-space indentation steps. */
function checkLexically(source: string): void {
  source.split('\n').forEach((line, i) => {
    const indent = /^ */.exec(line)![0].length;
    if (/^\t/.test(line.slice(indent)) || /^ *\t/.test(line)) throw new Error(`line ${i + 1}: tab in indentation`);
    if (line.trim() !== '' && indent % 2 !== 0) throw new Error(`line ${i + 1}: odd indentation`);
  });
}

test('ci.yml is well-formed YAML', () => {
  checkLexically(text);
  assert.throws(() => checkLexically('a:\n\tb: 1\n'), /tab/);
  assert.throws(() => checkLexically('a:\n   b: 1\n'), /odd indentation/);
  const parsed = parseWithPyYaml(text);
  if (parsed !== undefined) {
    assert.type(parsed, 'object');
    assert.throws(() => parseWithPyYaml('a: [1, 2\n'), /does not parse/);
  }
});

const parsed = parseWithPyYaml(text) as { [key: string]: any } | undefined;

if (parsed !== undefined) {
  test('the test job runs on ubuntu, macos and windows and installs, builds and unit-tests everywhere', () => {
    const job = parsed.jobs.test;
    const os: string[] = job.strategy.matrix.os;
    for (const family of ['ubuntu', 'macos', 'windows']) assert.ok(os.some((o) => o.startsWith(family)), family);
    assert.is(job.env.ZERO_SANDBOX_MUST_WORK, '1');
    const runs: Array<{ run?: string; if?: string }> = job.steps;
    const find = (needle: string) => runs.find((s) => s.run?.includes(needle));
    assert.ok(find('npm ci'));
    assert.ok(find('npm run compile'));
    const unit = find('run-tests.mjs unit');
    assert.ok(unit !== undefined && unit.if === undefined, 'unit tests run on every OS');
    assert.is(find('npm run check:windows')?.if, "runner.os == 'Linux'");
    assert.is(find('g++-mingw-w64-x86-64')?.if, "runner.os == 'Linux'");
  });

  test('real sandbox smoke tests run on each OS', () => {
    const steps: Array<{ run?: string; if?: string }> = parsed.jobs.test.steps;
    for (const os of ['Linux', 'macOS', 'Windows']) {
      const step = steps.find((s) => s.if === `runner.os == '${os}'` && /run-tests\.mjs .*(attacks|every-os-escapes)/.test(s.run ?? ''));
      assert.ok(step, `no attack-test step for ${os}`);
    }
  });

  test('prebuild legs cover every OS, smoke-test the tarball and upload prebuilds; a package job merges them', () => {
    const prebuild = parsed.jobs.prebuild;
    assert.equal(prebuild.needs, 'test');
    const names: string[] = prebuild.strategy.matrix.include.map((leg: { name: string }) => leg.name);
    for (const name of ['linux-x64-glibc', 'linux-x64-musl', 'darwin-arm64', 'darwin-x64', 'win32-x64']) {
      assert.ok(names.includes(name), name);
    }
    const steps: Array<{ run?: string; uses?: string; with?: Record<string, string> }> = prebuild.steps;
    const smoke = steps.filter((s) => s.run?.includes('npm run smoke:pack'));
    assert.is(smoke.length, 2, 'one smoke:pack step on the runner, one inside the Alpine container');
    // No leg runs JavaScript actions inside an Alpine job container (unsupported by the runner).
    for (const leg of prebuild.strategy.matrix.include as Array<{ container: string }>) {
      assert.not.ok(leg.container.includes('alpine'), leg.container);
    }
    const upload = steps.find((s) => s.uses?.startsWith('actions/upload-artifact'));
    assert.is(upload?.with?.path, 'prebuilds/');
    const pkg = parsed.jobs.package;
    assert.equal(pkg.needs, 'prebuild');
    assert.ok(pkg.steps.some((s: { uses?: string; with?: Record<string, unknown> }) =>
      s.uses?.startsWith('actions/download-artifact') && s.with?.['merge-multiple'] === true));
  });

  const runs = (): string[] => (Object.values(parsed.jobs) as Array<{ steps: Array<{ run?: string }> }>)
    .flatMap((job) => job.steps.map((s) => s.run ?? ''));

  test('every `node <path>` the workflow runs names a file that exists (after npm run compile)', () => {
    const paths = runs().flatMap((run) => [...run.matchAll(/\bnode ([\w./-]+\.m?js)\b/g)].map((m) => m[1]!));
    assert.ok(paths.length >= 3, paths.join(' '));
    for (const file of paths) assert.ok(existsSync(join(root, file)), `node ${file}: no such file`);
  });

  test('every test selector given to run-tests.mjs matches a test file (as scripts/run-tests.mjs filters)', () => {
    const tests: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const full = join(dir, name);
        if (statSync(full).isDirectory()) walk(full);
        else if (name.endsWith('.test.ts')) tests.push(relative(join(root, 'test'), full).split(/[\\/]/).join('/').replace(/\.ts$/, '.js'));
      }
    };
    walk(join(root, 'test'));
    const selectors = runs().flatMap((run) => [...run.matchAll(/run-tests\.mjs((?: [\w./-]+)*)/g)].flatMap((m) => m[1]!.trim().split(/\s+/).filter((x) => x !== '')));
    assert.ok(selectors.length >= 4, selectors.join(' '));
    for (const selector of selectors) assert.ok(tests.some((t) => t.includes(selector)), `run-tests.mjs ${selector} selects no test file`);
    // The matcher is not vacuous.
    assert.not.ok(tests.some((t) => t.includes('no-such-selector')));
  });

  test('runner images are current: no retired label (macos-13 and older, ubuntu-20.04, windows-2019)', () => {
    const current = CURRENT_RUNNER_LABELS;
    const test = parsed.jobs.test.strategy.matrix.os as string[];
    const prebuild = (parsed.jobs.prebuild.strategy.matrix.include as Array<{ os: string }>).map((leg) => leg.os);
    const others = Object.values(parsed.jobs as Record<string, { 'runs-on': string }>).map((job) => job['runs-on']).filter((r) => !r.includes('${{'));
    for (const label of [...test, ...prebuild, ...others]) assert.ok(current.has(label), `runner image ${label} is retired or unknown`);
    assert.ok(test.includes('macos-15-intel') && test.includes('macos-15'), 'both macOS architectures are tested');
  });

  test('the macOS and Windows legs run the real attack tests that apply there, which cannot skip under ZERO_SANDBOX_MUST_WORK=1', () => {
    const steps: Array<{ run?: string; if?: string }> = parsed.jobs.test.steps;
    assert.is(parsed.jobs.test.env.ZERO_SANDBOX_MUST_WORK, '1');
    for (const os of ['macOS', 'Windows']) {
      const step = steps.find((s) => s.if === `runner.os == '${os}'` && s.run?.includes('run-tests.mjs'));
      assert.ok(step?.run?.includes('every-os-escapes'), `the ${os} leg does not run the every-OS attack tests`);
    }
    const attacks = readFileSync(join(root, 'test', 'attacks', 'every-os-escapes.test.ts'), 'utf8');
    assert.match(attacks, /platformSandboxTestsEnabled\(\)/);
    const helper = readFileSync(join(root, 'test', 'helpers', 'probe.ts'), 'utf8');
    assert.match(helper, /platformSandboxTestsEnabled[\s\S]*if \(MUST_WORK\) return true;/);
  });

  test('every script the workflow runs exists in package.json', () => {
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const jobs = Object.values(parsed.jobs) as Array<{ steps: Array<{ run?: string }> }>;
    const scripts = jobs.flatMap((job) => job.steps.flatMap((s) => [...(s.run ?? '').matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!)));
    assert.ok(scripts.length >= 3);
    for (const name of scripts) assert.ok(pkg.scripts[name] !== undefined, `npm run ${name} is not a script`);
  });
} else {
  process.stdout.write('ci-workflow: PyYAML not available; only the lexical checks ran\n');
}

test.run();
