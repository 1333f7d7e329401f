// SPDX-License-Identifier: MIT
// The fork storm the process-cap tests run inside a sandbox: a Python program that forks children
// which sleep, until a fork is refused (or `upTo` are running), then says how far it got.

/**
 * Python source that forks children sleeping `sleepSeconds` each, at most `upTo` of them (no bound
 * when absent), and prints `refused N ERRNO` when a fork fails (N children were running), then
 * `started N`. With `holdSeconds` it stays at the cap that long after a refusal (as make waits for
 * its running jobs after a failed fork) before it ends; `retry` has it try the fork again every
 * 50 ms meanwhile, as bash does after a refused fork (a child a retry starts sleeps as the others).
 */
export function forkStorm(options: { sleepSeconds: number; upTo?: number; holdSeconds?: number; retry?: boolean }): string {
  const hold = options.holdSeconds ?? 0;
  const wait = options.retry === true
    ? [
      `        end = time.time() + ${hold}`,
      '        while time.time() < end:',
      '            time.sleep(0.05)',
      '            try:',
      '                if os.fork() == 0:',
      `                    time.sleep(${options.sleepSeconds}); os._exit(0)`,
      '            except OSError:',
      '                pass',
      '        break',
    ]
    : [`        time.sleep(${hold}); break`];
  return [
    'import os, time, errno, sys',
    'started = 0',
    options.upTo === undefined ? 'while True:' : `for _ in range(${options.upTo}):`,
    '    try:',
    '        pid = os.fork()',
    '    except OSError as e:',
    '        print("refused", started, errno.errorcode[e.errno]); sys.stdout.flush()',
    ...wait,
    '    if pid == 0:',
    `        time.sleep(${options.sleepSeconds}); os._exit(0)`,
    '    started += 1',
    'print("started", started)',
  ].join('\n');
}

/** What a storm printed: the children started, and the errno name of the refused fork, if one was. */
export function stormOutcome(stdout: string): { started: number; refused?: string } {
  const started = Number(/^started (\d+)$/m.exec(stdout)?.[1] ?? NaN);
  const refused = /^refused \d+ (\w+)$/m.exec(stdout)?.[1];
  return refused === undefined ? { started } : { started, refused };
}
