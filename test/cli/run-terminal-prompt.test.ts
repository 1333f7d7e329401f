// `zero-sandbox run` on a real terminal: the CLI runs under a pseudo-terminal (util-linux
// `script`), the approval prompt appears on it and is answered by typing, the way a user does.
// once runs the command and stores nothing; session runs it for this process only; always stores
// an approval of that exact command, which the identical next run (even without a terminal)
// honours while a different command is still refused; deny runs nothing and names what would
// allow it; an unknown answer is asked again. Every approved command still runs sandboxed.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { CLI_PATH, runCli } from '../helpers/cli.js';
import { makeTree, sandboxTest, type Tree } from '../helpers/sandbox.js';

const QUESTION = 'Allow? ';

function envFor(t: Tree): NodeJS.ProcessEnv {
  return { ...process.env, XDG_CONFIG_HOME: join(t.base, 'config'), ZERO_SANDBOX_GRANTS_PATH: join(t.base, 'grants.json') };
}

/** A POSIX single-quoted word. */
const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

interface TerminalRun {
  code: number | null;
  /** Everything the terminal showed (prompt, typed answers echoed, the command's output). */
  screen: string;
  /** How many times the question was asked. */
  asked: number;
}

/**
 * Runs `zero-sandbox ARGS` on a fresh pseudo-terminal in `cwd` and types `answers[i]` (plus
 * Enter) each time the question appears; a question beyond the answers gets an end of input.
 */
function onTerminal(args: string[], answers: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<TerminalRun> {
  const command = [process.execPath, CLI_PATH, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    let asked = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      screen += chunk;
      const shown = screen.split(QUESTION).length - 1;
      for (; asked < shown; asked++) {
        const answer = answers[asked];
        // Typed like a user: the answer and Enter; nothing left to type is Ctrl-D (end of input).
        child.stdin.write(answer === undefined ? '\x04' : `${answer}\r`);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, screen, asked });
    });
  });
}

const grantsOf = (t: Tree) => (existsSync(join(t.base, 'grants.json')) ? readFileSync(join(t.base, 'grants.json'), 'utf8') : '');

const hasScript = process.platform === 'linux';

(hasScript ? sandboxTest : test.skip)('once: the destructive command runs sandboxed, nothing is stored, the next run asks again', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'build'));
    const first = await onTerminal(['run', '-c', 'rm -rf ./build; echo "sandboxed=$ZERO_SANDBOXED"'], ['o'], t.ws, envFor(t));
    assert.is(first.code, 0, first.screen);
    assert.is(first.asked, 1);
    assert.match(first.screen, 'bash needs approval');
    assert.match(first.screen, 'scope:  run `rm -rf ./build; echo "sandboxed=$ZERO_SANDBOXED"`');
    assert.match(first.screen, '[o]nce, [s]ession, [a]lways, [d]eny');
    assert.match(first.screen, 'sandboxed=1');
    assert.not.ok(existsSync(join(t.ws, 'build')));
    assert.not.match(grantsOf(t), 'rm -rf');
    mkdirSync(join(t.ws, 'build'));
    const second = await onTerminal(['run', '-c', 'rm -rf ./build; echo "sandboxed=$ZERO_SANDBOXED"'], ['d'], t.ws, envFor(t));
    assert.is(second.asked, 1, 'asked again');
    assert.is(second.code, 1);
    assert.ok(existsSync(join(t.ws, 'build')));
  } finally {
    t.cleanup();
  }
});

(hasScript ? sandboxTest : test.skip)('session: runs this time and stores nothing beyond the process', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'build'));
    const run = await onTerminal(['run', '-c', 'rm -rf ./build'], ['session'], t.ws, envFor(t));
    assert.is(run.code, 0, run.screen);
    assert.not.ok(existsSync(join(t.ws, 'build')));
    assert.not.match(grantsOf(t), 'rm -rf');
    mkdirSync(join(t.ws, 'build'));
    const headless = await runCli(['run', '-c', 'rm -rf ./build'], { cwd: t.ws, env: envFor(t) });
    assert.is(headless.code, 1, 'a new process is a new session');
    assert.ok(existsSync(join(t.ws, 'build')));
  } finally {
    t.cleanup();
  }
});

(hasScript ? sandboxTest : test.skip)('always: the exact command is stored; the identical next run is not asked about, a different one is', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'build'));
    const run = await onTerminal(['run', '-c', 'rm -rf ./build'], ['a'], t.ws, envFor(t));
    assert.is(run.code, 0, run.screen);
    assert.not.ok(existsSync(join(t.ws, 'build')));
    const grants = JSON.parse(grantsOf(t)) as { approvedCommands: Record<string, Array<{ command: string; risks: string[] }>> };
    assert.equal(grants.approvedCommands.bash?.map((a) => [a.command, a.risks]), [['rm -rf ./build', ['destructive']]]);
    mkdirSync(join(t.ws, 'build'));
    // No terminal now: only the stored approval can let it run.
    const again = await runCli(['run', '-c', 'rm -rf ./build'], { cwd: t.ws, env: envFor(t) });
    assert.is(again.code, 0, again.stderr);
    assert.not.ok(existsSync(join(t.ws, 'build')));
    mkdirSync(join(t.ws, 'build'));
    const wider = await runCli(['run', '-c', 'rm -rf ./build ./src'], { cwd: t.ws, env: envFor(t) });
    assert.is(wider.code, 1, 'a different command is not covered');
    assert.ok(existsSync(join(t.ws, 'build')));
    // exec (headless) names this way of allowing it, and honours the stored approval too.
    const headless = await runCli(['exec', '-o', 'stream-json', '-p', 'rm -rf ./build ./src'], { cwd: t.ws, env: envFor(t) });
    assert.match(headless.stdout, 'answer \\"always\\" to it once in `zero-sandbox run` on a terminal (stored in the grants file)');
    const stored = await runCli(['exec', '-o', 'stream-json', '-p', 'rm -rf ./build'], { cwd: t.ws, env: envFor(t) });
    assert.is(stored.code, 0, stored.stdout + stored.stderr);
    assert.not.ok(existsSync(join(t.ws, 'build')));
  } finally {
    t.cleanup();
  }
});

(hasScript ? sandboxTest : test.skip)('always on a network prompt is stored too and the next identical run gets the network, sandboxed', async () => {
  const t = makeTree();
  try {
    const command = 'curl -s -m 1 http://127.0.0.1:9/ >/dev/null 2>&1; echo "net=$ZERO_SANDBOX_NETWORK sandboxed=$ZERO_SANDBOXED"';
    const run = await onTerminal(['run', '-c', command], ['always'], t.ws, envFor(t));
    assert.is(run.code, 0, run.screen);
    assert.match(run.screen, 'scope:  network all outbound access');
    assert.match(run.screen, 'net=allow sandboxed=1');
    assert.match(grantsOf(t), '"network"');
    const again = await runCli(['run', '-c', command], { cwd: t.ws, env: envFor(t) });
    assert.is(again.code, 0, again.stderr);
    assert.is(again.stdout, 'net=allow sandboxed=1\n');
  } finally {
    t.cleanup();
  }
});

(hasScript ? sandboxTest : test.skip)('deny runs nothing and says what would allow it; an unknown answer is asked again; end of input denies', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'build'));
    const denied = await onTerminal(['run', '-c', 'rm -rf ./build'], ['yes', 'd'], t.ws, envFor(t));
    assert.is(denied.asked, 2, 'an answer that is not offered is asked again');
    assert.is(denied.code, 1);
    assert.match(denied.screen, 'denied');
    assert.match(denied.screen, 'answer "once", "session" or "always" at the prompt');
    assert.ok(existsSync(join(t.ws, 'build')));
    const eof = await onTerminal(['run', '-c', 'rm -rf ./build'], [], t.ws, envFor(t));
    assert.is(eof.code, 1);
    assert.ok(existsSync(join(t.ws, 'build')));
    assert.is(grantsOf(t), '');
  } finally {
    t.cleanup();
  }
});

test.run();
