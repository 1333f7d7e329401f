// The after-run check of the agent and editor configs that run programs (tool-configs.ts), on
// the host side alone: what a command would leave is written here between the note and the check.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { checkToolConfigs, holdToolConfigs, noteToolConfigs } from '../../lib/sandbox/tool-configs.js';
import { toolConfigPathFilter, toolConfigPathTest } from '../../lib/sandbox/tool-config-paths.js';
import { AGENT_TOOL_CONFIG_DIRS, AGENT_TOOL_CONFIG_FILES, agentToolConfigPaths } from '../../lib/protected-names.js';
import { inspectMany, toBytes } from '../../lib/sandbox/beneath.js';

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
    assert.equal([...guard.notes.keys()].sort(), [...agentToolConfigPaths(ws), join(ws, '.env')].sort());
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

test('a nested write root settled before the run is not noted name by name (Linux); anything made at its top since is seen by its stamp, without the scan', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'zs-tool-configs-'));
  try {
    const dist = join(ws, 'packages', 'p', 'dist');
    const moved = join(ws, 'packages', 'r', 'dist');
    mkdirSync(dist, { recursive: true });
    mkdirSync(moved, { recursive: true });
    // A directory changed within the last 2 s may change again within its mtime's clock tick unseen.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const fresh = join(ws, 'packages', 'q', 'dist');
    mkdirSync(fresh, { recursive: true });
    const nested = [dist, fresh, moved].map(toBytes);
    const stamps = new Map(inspectMany(nested).map((info, i) => [nested[i] as string, info]));
    const guard = noteToolConfigs([ws, dist, fresh, moved], [], nested, stamps);
    const releaseFirst = holdToolConfigs(guard);
    const linux = process.platform === 'linux';
    assert.is(guard.notes.has(toBytes(join(dist, '.mcp.json'))), !linux, 'a settled nested root: no note per name');
    assert.ok(guard.notes.has(toBytes(join(fresh, '.mcp.json'))), 'a nested root changed within the last 2 s is noted name by name');
    assert.ok(guard.notes.has(toBytes(join(ws, '.mcp.json'))), 'the outer root is noted name by name');
    assert.equal(checkToolConfigs(guard), [], 'nothing changed: nothing found');
    // The command's work between the note and the check: configs made at the top of the nested
    // root, and (where links exist) the other nested root swapped for a link to a tree of its own.
    put(join(dist, '.vscode', 'tasks.json'), '{"tasks": [{"command": "evil", "runOptions": {"runOn": "folderOpen"}}]}');
    put(join(dist, '.mcp.json'), '{"mcpServers": {"evil": {"command": "evil"}}}');
    const links = process.platform !== 'win32';
    if (links) {
      put(join(ws, 'evil', '.mcp.json'), '{"mcpServers": {"evil": {"command": "evil"}}}');
      renameSync(moved, `${moved}.old`);
      symlinkSync(join(ws, 'evil'), moved);
    }
    // A run of the nested root alone, started meanwhile, takes what the first run would have
    // noted there (missing), not the first command's work: its check does not put that back.
    const second = noteToolConfigs([dist]);
    const releaseSecond = holdToolConfigs(second);
    const violations = checkToolConfigs(guard, releaseFirst).map((v) => v.path);
    checkToolConfigs(second, releaseSecond);
    assert.not.ok(existsSync(join(dist, '.mcp.json')), 'the second check does not put the first command\'s file back');
    // Through the link every file directly in that root is unreadable the safe way: each is reported.
    const direct = [...agentToolConfigPaths(moved), join(moved, '.env')].filter((path) => !path.slice(moved.length + 1).includes('/'));
    const expected = [join(dist, '.mcp.json'), join(dist, '.vscode', 'tasks.json'), ...(links ? direct : [])];
    assert.equal(violations.sort(), expected.sort());
    assert.not.ok(existsSync(join(dist, '.mcp.json')));
    assert.not.ok(existsSync(join(dist, '.vscode', 'tasks.json')));
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test('the protected paths of a root are what join() gives, for clean and unclean roots alike', () => {
  for (const root of ['/', '/a/b', '/a//b/', '/a/./b', join(tmpdir(), 'x')]) {
    assert.equal(agentToolConfigPaths(root), [...AGENT_TOOL_CONFIG_FILES, ...AGENT_TOOL_CONFIG_DIRS].map((file) => join(root, ...file.split('/'))), root);
  }
});

test('toolConfigPathTest answers as the set of every root\'s agentToolConfigPaths would', () => {
  const roots = ['/', '/w', '/w/packages/a', '/w/packages/a/dist', '/x/./y', '/z/'];
  const all = new Set(roots.flatMap((root) => agentToolConfigPaths(root)));
  const isTool = toolConfigPathTest(roots);
  const candidates = new Set<string>();
  for (const path of all) {
    candidates.add(path);
    // Near misses: another root, a doubled separator, a deeper or shallower path, a sibling name.
    candidates.add(`/elsewhere${path}`);
    candidates.add(path.replace(/^\//, '//'));
    candidates.add(path.replace(/\/([^/]+)$/, '//$1'));
    candidates.add(`${path}/x`);
    candidates.add(path.replace(/\/[^/]+$/, ''));
    candidates.add(`${path}x`);
  }
  for (const path of ['/w/.git/hooks', '/w/.git/config', '/w/packages/.vscode/tasks.json', '/w/packages/a/dist/.claude', '']) candidates.add(path);
  for (const path of candidates) assert.is(isTool(path), all.has(path), path);
  // Asked with the root the path is likely under (any of them, or one that is not a root): the same answers.
  for (const root of [...roots, '/v', '/w/packages']) for (const path of candidates) assert.is(isTool(path, root), all.has(path), `${root}: ${path}`);
  // Filtered per root: in the plan's order (the root's own paths first), in reverse, and mixed with near misses.
  const notTool = toolConfigPathFilter(roots);
  for (const root of [...roots, '/v']) {
    const own = [`${root}/.git/hooks`, ...agentToolConfigPaths(root), `${root}/extra`];
    for (const paths of [own, [...own].reverse(), [...candidates], [...own, ...candidates, ...own]]) {
      assert.equal(notTool(root, paths), paths.filter((path) => !all.has(path)), root);
    }
  }
});

test.run();
