// The after-run check of the agent and editor configs that run programs (tool-configs.ts), on
// the host side alone: what a command would leave is written here between the note and the check.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { checkToolConfigs, holdToolConfigs, noteToolConfigs } from '../../lib/sandbox/tool-configs.js';
import { agentToolConfigPaths } from '../../lib/protected-names.js';

/** Runs `fn` with a fresh workspace directory, removed afterwards. */
function withWorkspace(fn: (ws: string) => void): void {
  const ws = mkdtempSync(join(tmpdir(), 'zs-tool-configs-'));
  try {
    fn(ws);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

function put(path: string, content: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, content);
}

test('every protected file of a write root is noted, also when its directory is missing', () =>
  withWorkspace((ws) => {
    const guard = noteToolConfigs([ws]);
    assert.equal([...guard.notes.keys()].sort(), agentToolConfigPaths(ws).sort());
  }));

test('a created config is removed; a changed one is put back with its permission bits; a deleted one comes back', () =>
  withWorkspace((ws) => {
    const tasks = join(ws, '.vscode', 'tasks.json');
    const settings = join(ws, '.claude', 'settings.local.json');
    const mcp = join(ws, '.mcp.json');
    put(settings, '{"mine": 1}\n');
    if (process.platform !== 'win32') chmodSync(settings, 0o600);
    put(mcp, '{"mcpServers": {}}\n');
    const guard = noteToolConfigs([ws]);
    put(tasks, '{"tasks": [{"command": "evil", "runOptions": {"runOn": "folderOpen"}}]}');
    writeFileSync(settings, '{"hooks": {"SessionStart": "evil"}}');
    rmSync(mcp);
    const violations = checkToolConfigs(guard);
    assert.equal(violations.map((v) => v.path).sort(), [mcp, settings, tasks].sort());
    assert.not.ok(existsSync(tasks));
    assert.ok(existsSync(join(ws, '.vscode')), 'only the file goes, not the directory around it');
    assert.is(readFileSync(settings, 'utf8'), '{"mine": 1}\n');
    if (process.platform !== 'win32') assert.is(statSync(settings).mode & 0o777, 0o600);
    assert.is(readFileSync(mcp, 'utf8'), '{"mcpServers": {}}\n');
    assert.match(violations.find((v) => v.path === tasks)?.reason ?? '', /created .vscode\/tasks\.json.*it was removed/);
    assert.match(violations.find((v) => v.path === settings)?.reason ?? '', /as it was before the run/);
    assert.equal(checkToolConfigs(guard), [], 'a second check finds nothing left');
  }));

test('the same content written again, or a file left as it was, is no violation', () =>
  withWorkspace((ws) => {
    const path = join(ws, '.gemini', 'settings.json');
    put(path, '{"theme": "x"}');
    const guard = noteToolConfigs([ws]);
    writeFileSync(path, '{"theme": "x"}');
    assert.equal(checkToolConfigs(guard), []);
  }));

test('a config too large to note that changed is removed rather than kept', () =>
  withWorkspace((ws) => {
    const path = join(ws, '.codex', 'config.toml');
    put(path, `# ${'x'.repeat((1 << 20) + 10)}\n`);
    const guard = noteToolConfigs([ws]);
    writeFileSync(path, '[mcp_servers.evil]\ncommand = "evil"\n');
    const violations = checkToolConfigs(guard);
    assert.equal(violations.map((v) => v.path), [path]);
    assert.not.ok(existsSync(path));
  }));

test('a run that starts while another is in flight takes its notes: the first check undoes, the second does not put the change back', () =>
  withWorkspace((ws) => {
    const path = join(ws, '.cursor', 'hooks.json');
    put(path, '{"version": 1}');
    const first = noteToolConfigs([ws]);
    const releaseFirst = holdToolConfigs(first);
    writeFileSync(path, '{"version": 1, "hooks": {"stop": [{"command": "evil"}]}}'); // the first command's work
    const second = noteToolConfigs([ws]);
    const releaseSecond = holdToolConfigs(second);
    assert.equal(checkToolConfigs(first, releaseFirst).map((v) => v.path), [path]);
    assert.is(readFileSync(path, 'utf8'), '{"version": 1}');
    assert.equal(checkToolConfigs(second, releaseSecond), []);
    assert.is(readFileSync(path, 'utf8'), '{"version": 1}');
    // Both released: a later run notes afresh (a change made on the host meanwhile is its "before").
    writeFileSync(path, '{"version": 1, "edited": "on the host"}');
    const third = noteToolConfigs([ws]);
    assert.equal(checkToolConfigs(third), []);
    assert.is(readFileSync(path, 'utf8'), '{"version": 1, "edited": "on the host"}');
  }));

test.run();
