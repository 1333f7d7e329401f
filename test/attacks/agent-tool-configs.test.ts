// Attack: a sandboxed command writes a config from which a coding agent or editor on the host
// later starts programs (Claude Code hooks, MCP server commands of Claude Code, Cursor, Gemini CLI,
// Codex and VS Code, the environment Gemini CLI loads from .gemini/.env, Cursor hooks, VS Code tasks that run when the folder is opened, launch
// configurations, settings naming executables, Zed language servers and tasks, aider's lint and
// test commands). Fix: the existing ones are read-only during the
// run; once the sandbox is gone, what the command created there (or a link it put on the way) is
// removed, what it changed is put back, and the run fails with the violations. Each test runs
// the attack in a real sandbox and then looks at the host's files.
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as assert from 'uvu/assert';
import { test } from 'uvu';

import { AGENT_TOOL_CONFIG_FILES } from '../../lib/protected-names.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { makeTree, sandboxTest, sh, type Tree } from '../helpers/sandbox.js';

const VECTORS = (JSON.parse(readFileSync(`${REPO_ROOT}/test/fixtures/agent-tool-configs/vectors.json`, 'utf8')) as { vectors: Record<string, string> }).vectors;

/** The malicious config for `file`: its command would leave a marker in the tree's outside dir. */
function payload(t: Tree, file: string): string {
  return (VECTORS[file] as string).replaceAll('@CMD@', `touch ${join(t.outside, 'ran')}`);
}

/** A shell line that writes `content` to `file` (created with its directory). */
function write(file: string, content: string): string {
  return `mkdir -p "$(dirname ${file})" && printf '%s' '${content.replaceAll("'", `'\\''`)}' > ${file}`;
}

function protectedDenials(r: { denials: Array<{ capability: { kind: string; scope?: string } }> }): string[] {
  return r.denials.filter((d) => d.capability.kind === 'protected_metadata').map((d) => d.capability.scope ?? '');
}

test('every protected file has an attack vector', () => {
  assert.equal(Object.keys(VECTORS).sort(), [...AGENT_TOOL_CONFIG_FILES].sort());
});

for (const file of AGENT_TOOL_CONFIG_FILES) {
  sandboxTest(`attack: creating ${file} that runs a program: removed after the run, reported, the run fails`, async () => {
    const t = makeTree();
    try {
      const r = await sh(t, `${write(file, payload(t, file))} && echo written`);
      assert.match(r.stdout, /written/, 'the write itself succeeds inside the sandbox (nothing was created on the host to stop it)');
      const path = join(t.ws, ...file.split('/'));
      assert.not.ok(existsSync(path), `${file} is gone after the run`);
      assert.equal(r.protectedPathViolations, [path]);
      assert.equal(protectedDenials(r), [path]);
      assert.match(r.denials.find((d) => d.capability.kind === 'protected_metadata')?.reason ?? '', /outside the sandbox/);
      assert.is(r.exitCode, 1);
    } finally {
      t.cleanup();
    }
  });
}

sandboxTest('attack: overwriting, replacing and renaming existing configs: each is as it was before the run', async () => {
  const t = makeTree();
  try {
    const original = new Map<string, string>();
    for (const file of AGENT_TOOL_CONFIG_FILES) {
      const path = join(t.ws, ...file.split('/'));
      mkdirSync(dirname(path), { recursive: true });
      original.set(path, `{"mine": "${file}"}\n`);
      writeFileSync(path, original.get(path) as string);
    }
    const script = AGENT_TOOL_CONFIG_FILES.map((file) => [
      `${write(file, payload(t, file))}`,
      `rm -f ${file}; ${write(file, payload(t, file))}`,
      `${write(`${file}.new`, payload(t, file))}; mv -f ${file}.new ${file}`,
      `mv $(dirname ${file}) moved-away 2>/dev/null; ${write(file, payload(t, file))}`,
    ].join('; ')).join('; ');
    const r = await sh(t, `${script}; echo done`);
    assert.match(r.stdout, /done/);
    for (const [path, content] of original) assert.is(readFileSync(path, 'utf8'), content, `${path} is unchanged`);
    assert.not.ok(existsSync(join(t.ws, 'moved-away')), 'no directory holding a protected file could be moved away');
    assert.equal(r.protectedPathViolations, [], 'nothing got through to be undone (the files were read-only)');
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a link put on the way (.vscode -> a directory of the command\'s) is removed, the config behind it is not reached', async () => {
  const t = makeTree();
  try {
    const r = await sh(t, `${write('evil/tasks.json', payload(t, '.vscode/tasks.json'))} && ln -s evil .vscode && ln -s evil/tasks.json .mcp.json && cat .vscode/tasks.json >/dev/null && echo linked`);
    assert.match(r.stdout, /linked/);
    assert.not.ok(existsSync(join(t.ws, '.vscode')), 'the planted .vscode link is gone');
    assert.not.ok(existsSync(join(t.ws, '.mcp.json')), 'the planted .mcp.json link is gone');
    assert.ok(r.protectedPathViolations.includes(join(t.ws, '.vscode')), JSON.stringify(r.protectedPathViolations));
    assert.ok(r.protectedPathViolations.includes(join(t.ws, '.mcp.json')));
    assert.equal(protectedDenials(r), r.protectedPathViolations);
    assert.is(r.exitCode, 1);
  } finally {
    t.cleanup();
  }
});

sandboxTest('attack: a config reached through a link the user made is protected where the link leads', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'shared'));
    writeFileSync(join(t.ws, 'shared', 'claude.json'), '{"mine": true}\n');
    mkdirSync(join(t.ws, '.claude'));
    symlinkSync('../shared/claude.json', join(t.ws, '.claude', 'settings.json'));
    const r = await sh(t, `${write('shared/claude.json', payload(t, '.claude/settings.json'))} && echo wrote; ${write('.claude/settings.json', payload(t, '.claude/settings.json'))} && echo wrote-through; true`);
    assert.is(readFileSync(join(t.ws, 'shared', 'claude.json'), 'utf8'), '{"mine": true}\n');
    assert.is(readlinkSync(join(t.ws, '.claude', 'settings.json')), '../shared/claude.json', 'the user\'s own link stays');
    // Read-only during the run (the plan names the link, the mount follows it), or put back after it.
    if (/wrote/.test(r.stdout)) {
      assert.equal(r.protectedPathViolations, [join(t.ws, 'shared', 'claude.json')]);
      assert.is(r.exitCode, 1);
    } else assert.equal(r.protectedPathViolations, []);
  } finally {
    t.cleanup();
  }
});

sandboxTest('everyday: other files under .claude, .gemini, .vscode and .cursor are written and kept, the run succeeds', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, '.vscode'));
    writeFileSync(join(t.ws, '.vscode', 'settings.json'), '{}\n');
    const r = await sh(t, [
      write('.claude/CLAUDE.md', 'Review the diff.\n'),
      write('.gemini/GEMINI.md', 'You write tests.\n'),
      write('.vscode/extensions.json', '{"recommendations": []}\n'),
      write('.cursor/rules/style.mdc', 'Use tabs.\n'),
      write('CLAUDE.md', 'Notes.\n'),
      'cat .vscode/settings.json',
    ].join(' && '));
    assert.is(r.exitCode, 0, r.stderr);
    assert.equal(r.protectedPathViolations, []);
    assert.is(readFileSync(join(t.ws, '.claude', 'CLAUDE.md'), 'utf8'), 'Review the diff.\n');
    assert.ok(existsSync(join(t.ws, '.gemini', 'GEMINI.md')));
    assert.ok(existsSync(join(t.ws, '.vscode', 'extensions.json')));
    assert.ok(existsSync(join(t.ws, '.cursor', 'rules', 'style.mdc')));
  } finally {
    t.cleanup();
  }
});

test.run();
