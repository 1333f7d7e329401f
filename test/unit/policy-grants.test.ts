// SPDX-License-Identifier: MIT
// Grant matching vectors (grants.json), the persistent store, its migrations and its fail-closed reads.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { deriveScope, grantCovers, resolveScopeAbs, selectGrant } from '../../lib/policy/grants/grant-match.js';
import { GrantStore, resolveGrantsPath } from '../../lib/policy/grants/grants-store.js';
import { loadAnalyzer } from '../../lib/policy/engine/analyzer.js';
import { formatGrantList } from '../../lib/policy/output/report.js';
import { threadStart } from '../../lib/sandbox/runtime-lease.js';
import type { Grant } from '../../lib/policy/schema.js';
import { loadVectors, makePlaces } from '../fixtures/policy/vectors.js';

type V = Record<string, any>;

// The shell analyzer's prefix rules, as the CLI and the engine give them to the store.
const prefixAnalyzer = await loadAnalyzer();

const kindOf = (kind: string | undefined) => (kind === 'toolWide' || kind === undefined ? '' : kind);
const toGrant = (g: V): Grant => {
  const grant: Grant = { toolName: g.toolName ?? 'tool', decision: g.decision ?? 'allow', approvedAt: '2026-06-05T14:00:00Z' };
  if (g.scope !== undefined) grant.scope = g.scope;
  if (kindOf(g.scopeKind) !== '') grant.scopeKind = kindOf(g.scopeKind) as Grant['scopeKind'];
  return grant;
};

function tempStore(name = 'grants.json'): { dir: string; path: string; store: GrantStore } {
  const dir = mkdtempSync(join(tmpdir(), 'zs-grants-'));
  const path = join(dir, 'zero', name);
  return { dir, path, store: new GrantStore(path, { now: () => new Date('2026-06-05T14:30:00Z') }) };
}

for (const vector of loadVectors<V>('grants.json')) {
  test(`grants ${vector.id}`, () => {
    const places = makePlaces();
    try {
      const v = places.subDeep(vector);
      const platform = v.platform === 'windows' ? 'win32' : 'linux';
      switch (v.check) {
        case 'lookup':
          assert.is(selectGrant(v.grants.map(toGrant), v.requestScope, platform) !== undefined, v.expect.matched);
          break;
        case 'grantCovers':
          assert.is(grantCovers(toGrant(v.grant), v.requestScope, platform), v.expect.covers);
          break;
        case 'deriveScope': {
          const scope = deriveScope(v.toolName, v.args);
          assert.equal(scope, { raw: v.expect.raw, kind: kindOf(v.expect.kind) });
          break;
        }
        case 'resolveScopeAbs':
          assert.is(resolveScopeAbs(v.scope, v.workspaceRoot), v.expect.resolved);
          break;
        case 'grantInput': {
          const { dir, store } = tempStore();
          try {
            assert.throws(() => store.grant(v.input), (e: unknown) => e instanceof SandboxError && e.code === 'invalid_argument');
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
          break;
        }
        case 'grantStorePath':
          assert.is(resolveGrantsPath(v.env), v.expect.path);
          break;
        case 'storeSequence': {
          const { dir, path, store } = tempStore();
          try {
            for (const call of v.grantCalls) store.grant({ toolName: call.toolName, decision: call.decision });
            const reopened = new GrantStore(path);
            assert.equal(reopened.list().map((g) => g.toolName), v.expect.listOrder);
            const found = reopened.lookup(v.expect.lookup.toolName, v.expect.lookup.requestScope);
            assert.is(found !== undefined, v.expect.lookup.matched);
            assert.is(found?.decision, v.expect.lookup.decision);
            assert.is(reopened.revoke(v.expect.revoke.toolName), v.expect.revoke.removed);
            assert.is(reopened.clear(), v.expect.clearRemoved);
            assert.equal(reopened.list(), v.expect.listAfterClear);
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
          break;
        }
        case 'resolveScopeAbsDiffers':
          assert.is(resolveScopeAbs(v.scope, v.workspaceRoot) !== resolveScopeAbs(v.scope, v.otherRoot), v.expect.differs);
          break;
        default:
          withStore(v.check, (path) => storeCheck(v, path));
      }
    } finally {
      places.cleanup();
    }
  });
}

/** Runs `check` with a grants path in a fresh directory (not created), then removes the directory. */
function withStore(check: string, run: (path: string) => void): void {
  if (!STORE_CHECKS.has(check)) throw new Error(`unhandled check ${check}`);
  const dir = mkdtempSync(join(tmpdir(), 'zs-grants-'));
  try {
    run(join(dir, 'zero', 'sandbox-grants.json'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const STORE_CHECKS = new Set(['storeGrantSequence', 'fileLookup', 'noticeNoWrite', 'migration', 'fileError', 'persistPrefix', 'prefixStore', 'revokePath']);
const FIXED = () => new Date('2026-06-05T14:30:00Z');
const inputOf = (call: V) => ({
  toolName: call.toolName,
  decision: call.decision,
  ...(call.scope === undefined ? {} : { scope: call.scope }),
  ...(call.scopeKind === undefined || call.scopeKind === 'toolWide' ? {} : { scopeKind: call.scopeKind }),
});

/** The vectors that go through a grants file: what it holds, how it migrates and what it refuses. */
function storeCheck(v: V, path: string): void {
  const e = v.expect;
  const validatePrefix = (prefix: readonly string[]) => prefixAnalyzer.validateCommandPrefix(prefix);
  const writeFile = (text: string) => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, text, { mode: 0o600 });
  };
  switch (v.check) {
    case 'storeGrantSequence': {
      const store = new GrantStore(path, { now: FIXED });
      for (const call of v.grantCalls) store.grant(inputOf(call));
      assert.equal(store.list().map((g) => g.decision), e.listDecisions);
      break;
    }
    case 'fileLookup':
      writeFile(v.fileText);
      assert.is(new GrantStore(path).lookup(v.toolName, v.requestScope) !== undefined, e.matched);
      break;
    case 'noticeNoWrite': {
      const store = new GrantStore(path);
      assert.is(store.consumeMigrationNotice() ?? '', e.notice);
      assert.is(existsSync(dirname(path)), e.dirCreated, 'asking for the notice made the grants directory');
      break;
    }
    case 'migration': {
      writeFile(v.fileText);
      const store = new GrantStore(path, { validatePrefix });
      const grants = store.list();
      const notice = store.consumeMigrationNotice() ?? '';
      const again = store.consumeMigrationNotice() ?? '';
      if (e.grants !== undefined) {
        const triples = (e.grants[0]?.length ?? 0) === 3;
        assert.equal(grants.map((g) => (triples ? [g.toolName, g.decision, g.reason] : [g.toolName, g.decision])), e.grants);
      }
      if (e.grantDecisions !== undefined) assert.equal(grants.map((g) => g.decision), e.grantDecisions);
      if (e.prefixes !== undefined) assert.equal(store.listCommandPrefixes().map((p) => p.prefix), e.prefixes);
      if (e.noticeContains !== undefined) assert.match(notice, e.noticeContains);
      if (e.secondNoticeEmpty) assert.is(again, '');
      const text = readFileSync(path, 'utf8');
      for (const part of e.fileContains ?? []) assert.match(text, part);
      if (e.backup !== undefined) assert.is(readFileSync(`${path}${e.backup}`, 'utf8'), v.fileText, 'the backup holds the old file');
      break;
    }
    case 'fileError':
      writeFile(v.fileText);
      assert.throws(() => new GrantStore(path).list(), (error: unknown) => error instanceof Error && error.message.includes(e.errorContains));
      break;
    case 'persistPrefix': {
      const store = new GrantStore(path, { validatePrefix });
      let accepted = true;
      try {
        store.grantCommandPrefix('bash', v.prefix);
      } catch {
        accepted = false;
      }
      assert.is(accepted, e.accepted, JSON.stringify(v.prefix));
      break;
    }
    case 'prefixStore': {
      const store = new GrantStore(path, { now: FIXED, validatePrefix });
      assert.is(store.grantCommandPrefix('bash', ['git', 'status'], 'status checks').approvedAt, e.approvedAt);
      store.grantCommandPrefix('bash', ['git', 'status'], 'updated');
      const reopened = new GrantStore(path, { validatePrefix });
      assert.equal(reopened.listCommandPrefixes().map((p) => [p.toolName, p.prefix, p.reason]), e.listAfterRegrant);
      assert.equal(reopened.lookupCommandPrefix('bash', ['git', 'status', '--short'])?.prefix, e.lookupMatch);
      assert.is(reopened.lookupCommandPrefix('bash', e.lookupMiss), undefined);
      const text = formatGrantList(reopened.list(), reopened.listCommandPrefixes(), reopened.listApprovedCommands());
      for (const part of e.textContains) assert.match(text, part);
      assert.is(reopened.revoke('bash'), e.revokeRemoved);
      assert.is(reopened.listCommandPrefixes().length, e.prefixesAfterRevoke);
      break;
    }
    case 'revokePath': {
      const store = new GrantStore(path, { now: FIXED });
      for (const call of v.grantCalls) store.grant(inputOf(call));
      assert.is(store.revokePath('write_file', v.revoke), e.removed);
      const left = store.list();
      assert.is(left.length, e.left);
      assert.not.ok(left.some((g) => g.scope === v.revoke));
      assert.is(store.revokePath('write_file', v.revokeMissing), e.removedMissing);
      break;
    }
  }
}

test('the file is written 0600 in a 0700 directory, pretty-printed, schema 3 / policy 2', () => {
  const { dir, path, store } = tempStore();
  try {
    store.grant({ toolName: 'write_file', decision: 'allow', scope: '/repo/src/main.go', scopeKind: 'file', reason: 'key sk-abcdefghijklmnopqrstu' });
    assert.is(statSync(path).mode & 0o777, 0o600);
    assert.is(statSync(join(dir, 'zero')).mode & 0o777, 0o700);
    const text = readFileSync(path, 'utf8');
    assert.ok(text.endsWith('}\n'));
    const data = JSON.parse(text);
    assert.is(data.schemaVersion, 3);
    assert.is(data.policyVersion, 2);
    assert.equal(data.grants.write_file[0], {
      toolName: 'write_file',
      decision: 'allow',
      approvedAt: '2026-06-05T14:30:00Z',
      scope: '/repo/src/main.go',
      scopeKind: 'file',
      reason: 'key [REDACTED]',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('re-granting the same scope replaces; deny beats allow; most specific allow wins', () => {
  const { dir, store } = tempStore();
  try {
    store.grant({ toolName: 'write_file', decision: 'allow', scope: '/p/src', scopeKind: 'dir' });
    store.grant({ toolName: 'write_file', decision: 'allow', scope: '/p/src', scopeKind: 'dir' });
    store.grant({ toolName: 'write_file', decision: 'allow', scope: '/p/src/a.go', scopeKind: 'file' });
    assert.is(store.list().length, 2);
    assert.is(store.lookup('write_file', '/p/src/a.go')?.scopeKind, 'file');
    assert.is(store.lookup('write_file', '/p/src/b.go')?.scopeKind, 'dir');
    store.grant({ toolName: 'write_file', decision: 'deny', scope: '/p/src/secret', scopeKind: 'dir' });
    assert.is(store.lookup('write_file', '/p/src/secret/x')?.decision, 'deny');
    assert.is(store.revokePath('write_file', '/p/src/a.go'), 1);
    assert.is(store.list().length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('whitespace-padded tool keys in the file still match', () => {
  const { dir, path, store } = tempStore();
  try {
    store.grant({ toolName: 'read_file', decision: 'allow' });
    writeFileSync(path, readFileSync(path, 'utf8').replace('"read_file": [', '" read_file ": ['));
    assert.is(new GrantStore(path).lookup('read_file', '')?.decision, 'allow');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('v1 file: migrated once with a byte-identical backup and a one-time notice', () => {
  const { dir, path } = tempStore();
  try {
    const v1 = '{"schemaVersion":1,"grants":{"write_file":{"toolName":"write_file","decision":"allow","approvedAt":"2026-06-05T14:30:00Z","reason":"legacy"}}}';
    store0(path, v1);
    const store = new GrantStore(path);
    assert.equal(store.list().map((g) => [g.toolName, g.decision, g.reason]), [['write_file', 'allow', 'legacy']]);
    assert.is(readFileSync(`${path}.v1.backup`, 'utf8'), v1);
    assert.is(statSync(`${path}.v1.backup`).mode & 0o777, 0o600);
    const data = JSON.parse(readFileSync(path, 'utf8'));
    assert.is(data.schemaVersion, 3);
    assert.is(data.policyVersion, 2);
    const notice = new GrantStore(path).consumeMigrationNotice();
    assert.is(notice, `sandbox grants updated for policy v2: migrated 1, invalidated 0; backup: ${path}.v1.backup`);
    assert.is(store.consumeMigrationNotice(), undefined);
    assert.is(new GrantStore(path).consumeMigrationNotice(), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function store0(path: string, text: string): void {
  new GrantStore(path).clear();
  writeFileSync(path, text);
}

test('v2 file: drops legacy shell allows and invalid prefixes, keeps denies and valid prefixes', () => {
  const { dir, path } = tempStore();
  try {
    const at = '2026-01-01T00:00:00Z';
    store0(
      path,
      JSON.stringify({
        schemaVersion: 2,
        grants: {
          exec_command: [{ toolName: 'exec_command', decision: 'allow', approvedAt: at }],
          bash: [{ toolName: 'bash', decision: 'deny', approvedAt: at }],
          'bad key!': [{ decision: 'allow', approvedAt: at }],
        },
        commandPrefixes: { bash: [{ prefix: ['git', 'status'], approvedAt: at }, { prefix: ['python3'], approvedAt: at }] },
      }),
    );
    const store = new GrantStore(path, { validatePrefix: (p) => p[0] !== 'python3' });
    assert.equal(store.list().map((g) => `${g.toolName}:${g.decision}`), ['bash:deny']);
    assert.equal(store.listCommandPrefixes().map((p) => p.prefix.join(' ')), ['git status']);
    assert.ok(existsSync(`${path}.v2.backup`));
    assert.match(store.consumeMigrationNotice() ?? '', 'migrated 2, invalidated 3');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('policy-version change keeps only denies, drops prefixes, backs up as .policy-v1.backup (.1 when taken)', () => {
  const { dir, path } = tempStore();
  try {
    const at = '2026-01-01T00:00:00Z';
    const old = JSON.stringify({
      schemaVersion: 3,
      policyVersion: 1,
      grants: { write_file: [{ decision: 'allow', approvedAt: at }, { decision: 'deny', approvedAt: at, scope: '/s', scopeKind: 'dir' }] },
      commandPrefixes: { bash: [{ prefix: ['cargo', 'build'] }] },
    });
    store0(path, old);
    writeFileSync(`${path}.policy-v1.backup`, 'taken');
    const store = new GrantStore(path);
    assert.equal(store.list().map((g) => g.decision), ['deny']);
    assert.equal(store.listCommandPrefixes(), []);
    assert.is(readFileSync(`${path}.policy-v1.backup.1`, 'utf8'), old);
    assert.is(readFileSync(`${path}.policy-v1.backup`, 'utf8'), 'taken');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const [name, text] of [
  ['truncated', '{"schemaVersion":3,"policyVersion":2,"grants":{"bash":[{"toolName":"ba'],
  ['garbage', '\u0000\u0001not json at all'],
  ['empty', ''],
  ['from the future', '{"schemaVersion":4,"grants":{}}'],
  ['invalid entry', '{"schemaVersion":3,"policyVersion":2,"grants":{"bash":[{"decision":"maybe","approvedAt":"x"}]}}'],
] as const) {
  test(`a ${name} grants file is an error, left byte-identical by reads and writes`, () => {
    const { dir, path } = tempStore();
    try {
      store0(path, text);
      const store = new GrantStore(path);
      const isInvalid = (e: unknown) => e instanceof SandboxError && e.code === 'grants_invalid' && e.message.includes(path);
      assert.throws(() => store.list(), isInvalid);
      assert.throws(() => store.lookup('bash', ''), isInvalid);
      assert.throws(() => store.grant({ toolName: 'bash', decision: 'deny' }), isInvalid);
      assert.throws(() => store.clear(), isInvalid);
      assert.throws(() => store.revoke('bash'), isInvalid);
      assert.throws(() => store.consumeMigrationNotice(), isInvalid);
      assert.is(readFileSync(path, 'utf8'), text);
      assert.not.ok(existsSync(`${path}.lockfile`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('the future-schema error says so', () => {
  const { dir, path } = tempStore();
  try {
    store0(path, '{"schemaVersion":9,"grants":{}}');
    assert.throws(() => new GrantStore(path).list(), /unsupported schemaVersion 9 \(written by a newer version/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a held lock times out with grants_locked; a stale lock of a dead process is broken', () => {
  const { dir, path } = tempStore();
  try {
    const store = new GrantStore(path, { lockTimeoutMs: 100 });
    store.clear();
    writeFileSync(`${path}.lockfile`, `${process.pid}:feedface\n`);
    assert.throws(() => store.grant({ toolName: 'bash', decision: 'deny' }), (e: unknown) => e instanceof SandboxError && e.code === 'grants_locked');
    if (process.platform === 'linux') {
      // A worker thread's lock names its thread: held while that thread runs, abandoned after.
      const main = `${process.pid}-${threadStart(process.pid, process.pid) ?? ''}`;
      writeFileSync(`${path}.lockfile`, `${process.pid}:feedface thread ${main}\n`);
      assert.throws(() => store.grant({ toolName: 'bash', decision: 'deny' }), (e: unknown) => e instanceof SandboxError && e.code === 'grants_locked');
      writeFileSync(`${path}.lockfile`, `${process.pid}:feedface thread 999999999-1\n`);
      store.grant({ toolName: 'bash', decision: 'deny' });
      assert.not.ok(existsSync(`${path}.lockfile`));
    }
    writeFileSync(`${path}.lockfile`, '999999999:deadbeef\n');
    store.grant({ toolName: 'bash', decision: 'deny' });
    assert.is(store.list().length, 1);
    assert.not.ok(existsSync(`${path}.lockfile`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('command prefixes persist, replace in place, and match as argv prefixes', () => {
  const { dir, path, store } = tempStore();
  try {
    store.grantCommandPrefix('bash', ['git', 'status']);
    store.grantCommandPrefix('bash', ['git', 'status']);
    const reopened = new GrantStore(path);
    assert.is(reopened.listCommandPrefixes().length, 1);
    assert.ok(reopened.lookupCommandPrefix('bash', ['git', 'status', '-s']));
    assert.is(reopened.lookupCommandPrefix('bash', ['git', 'diff']), undefined);
    assert.throws(() => store.grantCommandPrefix('bash', ['rm', '*']), (e: unknown) => e instanceof SandboxError && e.code === 'invalid_argument');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a grants path that cannot be created is a grants_invalid error naming it, not a crash', () => {
  const { dir } = tempStore();
  try {
    writeFileSync(join(dir, 'blocker'), 'a file where a directory should be');
    const store = new GrantStore(join(dir, 'blocker', 'zero', 'grants.json'));
    const named = (e: unknown) => e instanceof SandboxError && e.code === 'grants_invalid' && e.message.includes(join(dir, 'blocker', 'zero'));
    assert.throws(() => store.list(), named);
    assert.throws(() => store.grant({ toolName: 'bash', decision: 'deny' }), named);
    const unwritable = new GrantStore(join(dir, 'blocker2', 'grants.json'));
    writeFileSync(join(dir, 'blocker2'), '');
    assert.throws(() => unwritable.clear(), (e: unknown) => e instanceof SandboxError && /cannot write the sandbox grants file at/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
