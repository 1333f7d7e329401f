// SPDX-License-Identifier: MIT
// Config loading (strict, file + JSON path in every error, project may only tighten) and the
// shipped JSON Schema staying equal to what the zod schema generates.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { loadSandboxConfig, resolveConfigPaths } from '../../lib/policy/config/config.js';
import { buildConfigJsonSchema } from '../../lib/policy/config/config-schema.js';
import { GrantsFileSchema, SandboxConfigSchema } from '../../lib/policy/schema.js';
import { parseGrantsText, serializeGrantsState } from '../../lib/policy/grants/grants-file.js';
import { REPO_ROOT } from '../helpers/cli.js';

function place() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'zs-config-')));
  const user = join(root, 'cfg', 'zero', 'config.json');
  const project = join(root, 'ws', '.zero', 'config.json');
  const write = (file: string, text: string) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  return { root, user, project, write, done: () => rmSync(root, { recursive: true, force: true }) };
}

test('the shipped schema/config.schema.json equals what the zod schema generates', () => {
  const shipped = JSON.parse(readFileSync(join(REPO_ROOT, 'schema', 'config.schema.json'), 'utf8'));
  assert.equal(shipped, buildConfigJsonSchema());
  const sandbox = (shipped.properties as Record<string, any>).sandbox;
  assert.is(sandbox.additionalProperties, false, 'unknown sandbox keys are rejected by editors too');
  for (const [key, field] of Object.entries(sandbox.properties as Record<string, { description?: string }>)) {
    assert.ok(field.description, `sandbox.${key} is described`);
  }
});

test('config paths: XDG first, then ~/.config; project under <workspace>/.zero', () => {
  assert.equal(resolveConfigPaths('/ws', { XDG_CONFIG_HOME: '/x' }), { user: '/x/zero/config.json', project: '/ws/.zero/config.json' });
  assert.equal(resolveConfigPaths('', { HOME: '/h' }), { user: '/h/.config/zero/config.json', project: null });
});

test('no files: empty result; other top-level keys of Zero config pass through', async () => {
  const p = place();
  try {
    assert.equal((await loadSandboxConfig({ user: p.user, project: p.project })).files, []);
    p.write(p.user, JSON.stringify({ provider: 'openai', model: 'x', sandbox: { network: 'allow', blockUnixSockets: true, env: { pass: ['GH_TOKEN'] } } }));
    const loaded = await loadSandboxConfig({ user: p.user, project: p.project });
    assert.equal(loaded.policy, { network: 'allow', blockUnixSockets: true });
    assert.equal(loaded.envPass, ['GH_TOKEN']);
    assert.equal(loaded.files, [p.user]);
  } finally {
    p.done();
  }
});

test('a network value other than allow or deny is deny, with a warning naming the file; a project file may not allow', async () => {
  const p = place();
  try {
    for (const value of ['scoped', 'proxy', 'maybe', '']) {
      p.write(p.user, JSON.stringify({ sandbox: { network: value } }));
      const loaded = await loadSandboxConfig({ user: p.user, project: null });
      assert.is(loaded.policy.network, 'deny', value);
      assert.equal(loaded.warnings, [`${p.user}: sandbox.network: ${JSON.stringify(value)} is neither "allow" nor "deny"; network is denied`]);
    }
    p.write(p.user, '{"sandbox":{"network":" Allow "}}');
    let loaded = await loadSandboxConfig({ user: p.user, project: null });
    assert.equal([loaded.policy.network, loaded.warnings], ['allow', []]);
    p.write(p.project, '{"sandbox":{"network":"scoped"}}');
    loaded = await loadSandboxConfig({ user: p.user, project: p.project });
    assert.is(loaded.policy.network, 'deny');
    assert.match(loaded.warnings.join('\n'), `${p.project}: sandbox.network: "scoped" is neither`);
  } finally {
    p.done();
  }
});

test('errors name the file and the JSON path', async () => {
  const p = place();
  try {
    const cases: Array<[string, string]> = [
      ['{"sandbox":{"network":5}}', 'sandbox.network'],
      ['{"sandbox":{"enabled":"yes"}}', 'sandbox.enabled'],
      ['{"sandbox":{"denyRead":["ok", 3]}}', 'sandbox.denyRead[1]'],
      ['{"sandbox":{"env":{"pass":["A"],"block":[]}}}', 'sandbox.env.block: unknown key'],
      ['{"sandbox":{"maxAutonomy":"high"}}', 'sandbox.maxAutonomy: unknown key'],
      ['{"sandbox":[]}', 'sandbox'],
      ['{"sandbox": ', 'not valid JSON'],
    ];
    for (const [text, where] of cases) {
      p.write(p.user, text);
      try {
        await loadSandboxConfig({ user: p.user, project: null });
        assert.unreachable(`${text} must fail`);
      } catch (error) {
        assert.instance(error, SandboxError);
        assert.is((error as SandboxError).code, 'config_invalid');
        assert.match((error as Error).message, `${p.user}: `);
        assert.match((error as Error).message, where);
      }
    }
  } finally {
    p.done();
  }
});

test('a write root the config names that is refused for what it is on disk is invalid_argument (as --allow-write), naming the file, the key and the path', async () => {
  const p = place();
  try {
    const cases: Array<[string, string]> = [
      ['/', 'sandbox.additionalWriteRoots[0]: additional write root / is the filesystem root'],
      ['/no/such/dir', 'sandbox.additionalWriteRoots[0]: additional write root /no/such/dir does not exist'],
      ['/dev', 'sandbox.additionalWriteRoots[0]: additional write root /dev is /dev, system state the host runs from'],
    ];
    for (const [root, message] of cases) {
      if (process.platform === 'win32' && root === '/dev') continue; // no /dev there
      p.write(p.user, JSON.stringify({ sandbox: { additionalWriteRoots: [root] } }));
      const error = await loadSandboxConfig({ user: p.user, project: null }).then(() => undefined, (e: unknown) => e);
      assert.instance(error, SandboxError, root);
      assert.is((error as SandboxError).code, 'invalid_argument');
      assert.match((error as Error).message, `${p.user}: ${message}`);
    }
  } finally {
    p.done();
  }
});

test('a project config may only tighten: loosening settings are reported and ignored, denies add up', async () => {
  const p = place();
  try {
    p.write(p.user, '{"sandbox":{"network":"allow","denyRead":["~/.secret"]}}');
    p.write(p.project, '{"sandbox":{"network":"deny","enabled":false,"denyRead":["private"],"blockUnixSockets":true,"additionalWriteRoots":["/tmp"]}}');
    const loaded = await loadSandboxConfig({ user: p.user, project: p.project });
    assert.equal(loaded.policy, { network: 'deny', denyRead: ['~/.secret', 'private'], blockUnixSockets: true });
    assert.is(loaded.warnings.length, 2);
    assert.match(loaded.warnings.join('\n'), `${p.project}: sandbox.enabled: ignored`);
    assert.match(loaded.warnings.join('\n'), 'sandbox.additionalWriteRoots: ignored');
    p.write(p.project, '{"sandbox":{"network":"allow"}}');
    const again = await loadSandboxConfig({ user: p.user, project: p.project });
    assert.is(again.policy.network, 'allow', 'the user setting stands');
    assert.match(again.warnings[0] ?? '', 'sandbox.network: ignored');
  } finally {
    p.done();
  }
});

test('limits: the user config sets caps (sizes with K/M/G), the project config may only lower them, bad values name the key', async () => {
  const p = place();
  try {
    p.write(p.user, '{"sandbox":{"limits":{"processes":200,"tmpBytes":"64M","openFiles":1024}}}');
    p.write(p.project, '{"sandbox":{"limits":{"tmpBytes":"32M","shmBytes":"8G","processes":500,"cpuSeconds":60}}}');
    const loaded = await loadSandboxConfig({ user: p.user, project: p.project });
    assert.equal(loaded.limits, { processes: 200, tmpBytes: 32 * 1024 * 1024, openFiles: 1024, cpuSeconds: 60 });
    assert.is(loaded.warnings.length, 2, loaded.warnings.join('\n'));
    assert.match(loaded.warnings.join('\n'), `${p.project}: sandbox.limits.shmBytes: ignored; a project config may only tighten the sandbox (it cannot raise a cap above 268435456)`);
    assert.match(loaded.warnings.join('\n'), 'sandbox.limits.processes: ignored');
    for (const bad of ['{"processes":0}', '{"tmpBytes":"4X"}', '{"tmpBytes":-1}', '{"processes":1.5}', '{"nproc":10}']) {
      p.write(p.user, `{"sandbox":{"limits":${bad}}}`);
      const error = await loadSandboxConfig({ user: p.user, project: null }).then(() => undefined, (e: unknown) => e as SandboxError);
      assert.is(error?.code, 'config_invalid', bad);
      assert.match(error?.message ?? '', `${p.user}: sandbox.limits.`);
    }
  } finally {
    p.done();
  }
});

test('the zod grants-file schema accepts what the store writes, and both reject a bad decision', () => {
  const text = serializeGrantsState({
    grants: { write_file: [{ toolName: 'write_file', decision: 'allow', approvedAt: '2026-01-01T00:00:00Z', scope: '/a', scopeKind: 'file' }] },
    commandPrefixes: { bash: [{ toolName: 'bash', prefix: ['cargo', 'build'], approvedAt: '2026-01-01T00:00:00Z' }] },
    approvedCommands: { bash: [{ toolName: 'bash', command: 'rm -rf ./build', risks: ['destructive'], approvedAt: '2026-01-01T00:00:00Z' }] },
  });
  assert.ok(GrantsFileSchema.safeParse(JSON.parse(text)).success);
  assert.is(parseGrantsText(text, () => true).kind, 'current');
  const bad = text.replace('"allow"', '"maybe"');
  assert.not.ok(GrantsFileSchema.safeParse(JSON.parse(bad)).success);
  assert.throws(() => parseGrantsText(bad, () => true));
  assert.ok(SandboxConfigSchema.safeParse({ network: 'deny' }).success);
});

test.run();
