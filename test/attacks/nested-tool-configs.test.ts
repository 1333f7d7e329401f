// Attack: a sandboxed command plants an editor or agent config that the host runs later, but not
// at the top of the workspace: `packages/app/.vscode/tasks.json` with a task that runs when that
// folder is opened, a VS Code workspace file (`*.code-workspace`, whose `tasks` and `settings` run
// the same way), Gemini CLI settings and workspace extensions (`.gemini/extensions/<name>/`, MCP
// server commands started at each session). Fix: the repository scan the git guard runs before and
// after every run reports these entries too; once the sandbox is gone what the command created is
// removed, what it changed is put back, existing extension directories are read-only during the
// run, and the run fails with the violations. Everyday work stays: dependencies that ship their
// own `.vscode/` under node_modules, deleting a package that has one, other files in `.vscode/`.
// Each test runs in a real sandbox and then looks at the host's files.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { makeTree, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';
import { NESTED, payload, TOP, write } from '../helpers/tool-configs.js';


function plant(t: Tree, file: string, content: string): string {
  const path = join(t.ws, ...file.split('/'));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}

sandboxTest('attack: nested .vscode/tasks.json, workspace files, .gemini settings and extensions are removed after the run, reported, the run fails', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'packages', 'app'), { recursive: true });
    const planted = {
      'packages/app/.vscode/tasks.json': payload(t, TOP['.vscode/tasks.json']),
      'packages/app/.claude/settings.json': payload(t, TOP['.claude/settings.json']),
      'packages/app/.gemini/settings.json': payload(t, TOP['.gemini/settings.json']),
      'evil.code-workspace': payload(t, NESTED['code-workspace']),
      'packages/app/app.code-workspace': payload(t, NESTED['code-workspace']),
      '.gemini/extensions/evil/gemini-extension.json': payload(t, NESTED['gemini-extension.json']),
      'packages/lib/.gemini/extensions/evil/gemini-extension.json': payload(t, NESTED['gemini-extension.json']),
    };
    const r = await sh(t, `${Object.entries(planted).map(([file, content]) => write(file, content)).join(' && ')} && echo written`);
    assert.match(r.stdout, /written/, 'the writes succeed inside the sandbox');
    for (const file of Object.keys(planted)) assert.not.ok(existsSync(join(t.ws, ...file.split('/'))), `${file} is gone after the run`);
    const expected = [
      'packages/app/.vscode/tasks.json',
      'packages/app/.claude/settings.json',
      'packages/app/.gemini/settings.json',
      'evil.code-workspace',
      'packages/app/app.code-workspace',
      '.gemini/extensions',
      'packages/lib/.gemini/extensions',
    ].map((file) => join(t.ws, ...file.split('/')));
    assert.equal([...r.protectedPathViolations].sort(), expected.sort());
    const scopes = r.denials.filter((d) => d.capability.kind === 'protected_metadata').map((d) => d.capability.scope ?? '');
    assert.equal(scopes.sort(), expected.sort());
    assert.is(r.exitCode, 1);
    assert.ok(existsSync(join(t.ws, 'packages', 'app', '.vscode')), 'the directory the command made for the file stays');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: existing nested configs and workspace files changed, replaced or swapped for a link are as they were; an existing extension is read-only', async () => {
  const t = makeTree();
  try {
    const mine = {
      'packages/app/.vscode/settings.json': '{"editor.tabSize": 2}\n',
      'packages/app/.vscode/tasks.json': '{"version": "2.0.0", "tasks": []}\n',
      'team.code-workspace': '{"folders": [{"path": "."}]}\n',
      'packages/lib/.gemini/extensions/ok/gemini-extension.json': '{"name": "ok", "version": "1.0.0"}\n',
    };
    const paths = Object.entries(mine).map(([file, content]) => [plant(t, file, content), content] as const);
    const r = await sh(t, [
      write('packages/app/.vscode/settings.json', payload(t, TOP['.vscode/settings.json'])),
      `rm -f packages/app/.vscode/tasks.json; ${write('packages/app/.vscode/tasks.json', payload(t, TOP['.vscode/tasks.json']))}`,
      `${write('evil/team.json', payload(t, NESTED['code-workspace']))}; rm -f team.code-workspace; ln -s evil/team.json team.code-workspace`,
      `${write('packages/lib/.gemini/extensions/ok/gemini-extension.json', payload(t, NESTED['gemini-extension.json']))} && echo extension-written`,
      `${write('packages/lib/.gemini/extensions/ok/server.js', 'evil')} && echo server-written`,
      'echo done',
    ].join('; '));
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /extension-written|server-written/, 'an existing extension directory is read-only');
    for (const [path, content] of paths) assert.is(readFileSync(path, 'utf8'), content, `${path} is as it was`);
    assert.not.ok(existsSync(join(t.ws, 'packages', 'lib', '.gemini', 'extensions', 'ok', 'server.js')));
    const changed = ['packages/app/.vscode/settings.json', 'packages/app/.vscode/tasks.json', 'team.code-workspace'].map((file) => join(t.ws, ...file.split('/')));
    assert.equal([...r.protectedPathViolations].sort(), changed.sort());
    assert.is(r.exitCode, 1);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a link put on the way to a nested config (packages/app/.vscode -> a directory of the command\'s) is removed', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'packages', 'app'), { recursive: true });
    const r = await sh(t, `${write('evil/tasks.json', payload(t, TOP['.vscode/tasks.json']))} && ln -s ../../evil packages/app/.vscode && echo linked`);
    assert.match(r.stdout, /linked/);
    assert.not.ok(existsSync(join(t.ws, 'packages', 'app', '.vscode')), 'the planted link is gone');
    assert.ok(r.protectedPathViolations.includes(join(t.ws, 'packages', 'app', '.vscode')), JSON.stringify(r.protectedPathViolations));
    assert.is(r.exitCode, 1);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: configs made at the top of write roots nested in the workspace (many dist/ roots) are removed; an existing one there is read-only', async () => {
  const t = makeTree();
  try {
    const roots = ['packages/a/dist', 'packages/b/dist', 'node_modules/dep/dist'].map((dir) => join(t.ws, ...dir.split('/')));
    for (const root of roots) mkdirSync(root, { recursive: true });
    const mine = plant(t, 'packages/b/dist/.claude/settings.json', '{"mine": 1}\n');
    // Settled roots (last changed more than 2 s ago): the guard trusts their stamps.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const made = ['packages/a/dist/.vscode/tasks.json', 'packages/a/dist/.mcp.json', 'node_modules/dep/dist/.cursor/hooks.json'];
    const r = await sh(t, [
      ...made.map((file) => write(file, payload(t, TOP['.vscode/tasks.json']))),
      `${write('packages/b/dist/.claude/settings.json', payload(t, TOP['.claude/settings.json']))} && echo changed`,
      'echo done',
    ].join('; '), { allowWrite: roots });
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /changed/, 'an existing config at the top of a nested root is read-only');
    assert.is(readFileSync(mine, 'utf8'), '{"mine": 1}\n');
    for (const file of made) assert.not.ok(existsSync(join(t.ws, ...file.split('/'))), `${file} is gone after the run`);
    assert.equal([...r.protectedPathViolations].sort(), made.map((file) => join(t.ws, ...file.split('/'))).sort());
    assert.is(r.exitCode, 1);
  } finally {
    t.cleanup();
  }
});

sandboxTest('everyday: dependencies shipping .vscode under node_modules, a deleted package with its configs, other .vscode files: kept, the run succeeds', async () => {
  const t = makeTree();
  try {
    plant(t, 'packages/old/.vscode/settings.json', '{}\n');
    plant(t, 'packages/old/old.code-workspace', '{"folders": []}\n');
    plant(t, 'packages/app/.vscode/settings.json', '{"editor.tabSize": 2}\n');
    const r = await sh(t, [
      write('node_modules/dep/.vscode/settings.json', '{"editor.tabSize": 4}\n'),
      write('node_modules/dep/.vscode/tasks.json', '{"version": "2.0.0", "tasks": []}\n'),
      write('node_modules/dep/dep.code-workspace', '{"folders": []}\n'),
      'rm -rf packages/old',
      write('packages/app/.vscode/extensions.json', '{"recommendations": []}\n'),
      'cat packages/app/.vscode/settings.json >/dev/null',
    ].join(' && '));
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal(r.protectedPathViolations, []);
    assert.ok(existsSync(join(t.ws, 'node_modules', 'dep', '.vscode', 'tasks.json')), 'what a package ships is kept');
    assert.not.ok(existsSync(join(t.ws, 'packages', 'old')), 'a deleted package stays deleted');
    assert.ok(existsSync(join(t.ws, 'packages', 'app', '.vscode', 'extensions.json')));
  } finally {
    t.cleanup();
  }
});

test.run();
