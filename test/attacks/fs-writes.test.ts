// Writes outside the write roots must fail by every route, also for a root caller, and the host
// must be unchanged afterwards. Each test runs the attack in a real sandbox, then checks the host.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SNAPSHOT_PINS } from '../../lib/backend/linux/mounts.js';
import { CLI_PATH } from '../helpers/cli.js';
import { makeTree, py, sandboxTest, sh } from '../helpers/sandbox.js';

sandboxTest('direct write, append and create outside the workspace are blocked', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'file'), 'original');
    const r = await sh(t, `echo evil > ${t.outside}/file; echo evil >> ${t.outside}/file; echo new > ${t.outside}/new; echo ok > inside.txt`);
    assert.is(readFileSync(join(t.outside, 'file'), 'utf8'), 'original');
    assert.equal(readdirSync(t.outside), ['file']);
    assert.is(readFileSync(join(t.ws, 'inside.txt'), 'utf8'), 'ok\n', 'writes inside still work');
    assert.match(r.stderr, /Read-only file system|Permission denied/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a symlink planted in the workspace pointing outside does not carry writes out', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'file'), 'original');
    symlinkSync(join(t.outside, 'file'), join(t.ws, 'host-planted'));
    await sh(t, `ln -s ${t.outside}/file planted; echo evil > planted; echo evil > host-planted; ln -s ${t.outside} dirlink; echo evil > dirlink/new`);
    assert.is(readFileSync(join(t.outside, 'file'), 'utf8'), 'original');
    assert.equal(readdirSync(t.outside), ['file']);
  } finally {
    t.cleanup();
  }
});

sandboxTest('a hardlink to an outside file cannot be planted from inside the sandbox', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'file'), 'original');
    const r = await sh(t, `ln ${t.outside}/file hard && echo linked; echo evil > hard; cat hard`);
    assert.not.match(r.stdout, /linked/);
    assert.is(readFileSync(join(t.outside, 'file'), 'utf8'), 'original');
    assert.is(statSync(join(t.outside, 'file')).nlink, 1);
  } finally {
    t.cleanup();
  }
});

sandboxTest('rename, unlink, mkdir, rmdir and move-out outside the workspace are blocked', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'file'), 'original');
    writeFileSync(join(t.ws, 'mine'), 'mine');
    await sh(t, [
      `mv ${t.outside}/file ${t.outside}/renamed`,
      `rm -f ${t.outside}/file`,
      `mkdir ${t.outside}/dir`,
      `mv ${t.outside}/file ./stolen`,
      `mv ./mine ${t.outside}/mine`,
      `rmdir ${t.outside}`,
      `python3 -c "import os; os.rename('${t.outside}/file', '${t.ws}/stolen2')"`,
    ].join('; '));
    assert.equal(readdirSync(t.outside), ['file']);
    assert.is(readFileSync(join(t.outside, 'file'), 'utf8'), 'original');
    assert.is(readFileSync(join(t.ws, 'mine'), 'utf8'), 'mine', 'a failed move out must not lose the workspace file');
  } finally {
    t.cleanup();
  }
});

sandboxTest('writes through /proc/self/root and /proc/1/root are blocked', async () => {
  const t = makeTree();
  try {
    writeFileSync(join(t.outside, 'file'), 'original');
    await sh(t, `echo evil > /proc/self/root${t.outside}/file; echo evil > /proc/1/root${t.outside}/file; touch /proc/self/root${t.outside}/new`);
    assert.is(readFileSync(join(t.outside, 'file'), 'utf8'), 'original');
    assert.equal(readdirSync(t.outside), ['file']);
  } finally {
    t.cleanup();
  }
});

sandboxTest('metadata changes outside are blocked even for a root caller: chmod, chown, utimes, xattrs, truncate', async () => {
  const t = makeTree();
  try {
    const target = join(t.outside, 'file');
    writeFileSync(target, 'original');
    const before = statSync(target);
    const r = await py(t, [
      'import os, errno',
      `p = ${JSON.stringify(target)}`,
      'results = []',
      'for name, fn in [("chmod", lambda: os.chmod(p, 0o777)), ("chown", lambda: os.chown(p, 1234, 1234)),',
      '                 ("utime", lambda: os.utime(p, (1, 1))), ("setxattr", lambda: os.setxattr(p, "user.evil", b"1")),',
      '                 ("truncate", lambda: os.truncate(p, 0)), ("chmod_dir", lambda: os.chmod(os.path.dirname(p), 0o777))]:',
      '    try:',
      '        fn(); results.append(name + ":ok")',
      '    except OSError as e:',
      '        results.append(name + ":" + errno.errorcode[e.errno])',
      'print(" ".join(results))',
    ].join('\n'));
    const after = statSync(target);
    for (const name of ['chmod', 'chown', 'utime', 'setxattr', 'truncate', 'chmod_dir']) {
      assert.match(r.stdout, new RegExp(`\\b${name}:E[A-Z]+`), `${name} must fail: ${r.stdout}${r.stderr}`);
    }
    assert.is(after.mode, before.mode);
    assert.is(after.uid, before.uid);
    assert.is(after.mtimeMs, before.mtimeMs);
    assert.is(readFileSync(target, 'utf8'), 'original');
    assert.is(statSync(t.outside).mode, lstatSync(t.outside).mode);
    const xattr = spawnSync('getfattr', ['-n', 'user.evil', target]);
    assert.ok(xattr.status !== 0 || !xattr.stdout.toString().includes('user.evil'));
  } finally {
    t.cleanup();
  }
});

sandboxTest('an inherited file descriptor to an outside file is closed before the command runs', async () => {
  const t = makeTree();
  try {
    const target = join(t.outside, 'log');
    writeFileSync(target, 'original\n');
    // bash opens fd 7 without close-on-exec; node (the CLI) inherits it; the sandbox must not.
    const script = `exec 7>>${target}; exec ${process.execPath} ${CLI_PATH} run --workspace ${t.ws} -- sh -c 'echo evil >&7; echo evil > /proc/self/fd/7; ls /proc/self/fd'`;
    const out = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
    assert.is(readFileSync(target, 'utf8'), 'original\n');
    assert.match(out.stderr, /Bad file descriptor|No such file/);
  } finally {
    t.cleanup();
  }
});

sandboxTest('raw block devices can be neither read nor opened for writing, even by root', async () => {
  const t = makeTree();
  try {
    const devices = readdirSync('/dev').filter((name) => /^(sd[a-z]|vd[a-z]|nvme\d+n\d+|xvd[a-z])$/.test(name));
    const r = await py(t, [
      'import os, errno',
      `devs = ${JSON.stringify(devices)}`,
      'for d in devs:',
      '    for flags in (os.O_RDONLY, os.O_WRONLY):',
      '        try:',
      '            fd = os.open("/dev/" + d, flags); os.close(fd); print(d, flags, "OPENED")',
      '        except OSError as e:',
      '            print(d, flags, errno.errorcode[e.errno])',
      'print("done")',
    ].join('\n'));
    assert.match(r.stdout, /done/);
    assert.not.match(r.stdout, /OPENED/, r.stdout);
    assert.is(r.stdout.trim().split('\n').length, devices.length * 2 + 1, 'every device was tried');
  } finally {
    t.cleanup();
  }
});

sandboxTest('denyWrite keeps a path inside the workspace read-only (content, metadata, rename, delete)', async () => {
  const t = makeTree();
  try {
    const locked = join(t.ws, 'locked');
    mkdirSync(locked);
    writeFileSync(join(locked, 'keep.txt'), 'original');
    writeFileSync(join(t.ws, 'frozen.txt'), 'frozen');
    const r = await sh(t, [
      'echo evil > locked/keep.txt', 'touch locked/new', 'rm -f locked/keep.txt', 'chmod 777 locked/keep.txt',
      'echo evil > frozen.txt', 'mv frozen.txt moved.txt', 'echo ok > free.txt',
    ].join('; '), { denyWrite: [locked, join(t.ws, 'frozen.txt')] });
    assert.is(readFileSync(join(locked, 'keep.txt'), 'utf8'), 'original');
    assert.equal(readdirSync(locked), ['keep.txt']);
    assert.is(readFileSync(join(t.ws, 'frozen.txt'), 'utf8'), 'frozen');
    assert.is(readFileSync(join(t.ws, 'free.txt'), 'utf8'), 'ok\n', 'the rest of the workspace stays writable');
    assert.match(r.stderr, /Read-only file system|Device or resource busy/);
  } finally {
    t.cleanup();
  }
});

// Attack: a read-only bind on a denyWrite file moves with its parent directory; renaming the
// parent and recreating the path would swap the protected file for one of the command's choosing.
// Fix: every directory between a write root and a read-only target is pinned.
sandboxTest('renaming the parent of a denyWrite file to swap the file is blocked', async () => {
  const t = makeTree();
  try {
    mkdirSync(join(t.ws, 'config', 'prod'), { recursive: true });
    writeFileSync(join(t.ws, 'config', 'prod', 'app.yaml'), 'original');
    const r = await sh(t, 'mv config config-old; echo "outer=$?"; mv config/prod config/prod-old; echo "inner=$?"; mkdir -p config/prod; echo evil > config/prod/app.yaml; echo done', {
      denyWrite: [join(t.ws, 'config', 'prod', 'app.yaml')],
    });
    assert.match(r.stdout, /outer=1/);
    assert.match(r.stdout, /inner=1/);
    assert.is(readFileSync(join(t.ws, 'config', 'prod', 'app.yaml'), 'utf8'), 'original');
    assert.equal(readdirSync(t.ws), ['config']);
  } finally {
    t.cleanup();
  }
});

// Many denyWrite files in one write root: their directories are pinned from a snapshot of the
// root (SNAPSHOT_PINS and more), not each from its own path. Attack: write each file by its path,
// through a hard link, after renaming it or its directories; the files must stay as they were,
// the pinned directories must still be the host's own (writable, a host mount beneath one still
// there), and the snapshot must be gone before the command starts.
sandboxTest('many denyWrite files pinned from a snapshot stay read-only by path, hard link and rename', async () => {
  const t = makeTree();
  const count = SNAPSHOT_PINS + 4;
  const file = (i: number) => join(t.ws, 'packages', `p${i}`, 'secret.env');
  const submount = join(t.ws, 'packages', 'p1', 'mnt');
  let mounted = false;
  try {
    for (let i = 0; i < count; i++) {
      mkdirSync(join(t.ws, 'packages', `p${i}`), { recursive: true });
      writeFileSync(file(i), 'original');
    }
    // A mount on the host beneath a pinned directory (root callers only) must show through the pin.
    mkdirSync(submount);
    mounted = process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'zs-test', submount]).status === 0;
    const r = await sh(t, [
      `for i in $(seq 0 ${count - 1}); do echo evil > packages/p$i/secret.env; done`,
      'ln packages/p3/secret.env hard; echo "link=$?"; echo evil > hard',
      'mv packages/p4 packages/p4-old; echo "dir=$?"', 'mv packages packages-old; echo "outer=$?"',
      'mv packages/p5/secret.env packages/p5/renamed; echo "file=$?"',
      'python3 -c "import os; os.rename(\'packages/p6\', \'p6\')"; echo "py=$?"',
      'echo new > packages/p7/new.txt', 'echo deep > packages/p1/mnt/in-mount.txt',
      'echo "shm=$(ls -A /dev/shm | wc -l)"',
    ].join('; '), { denyWrite: Array.from({ length: count }, (_, i) => file(i)) });
    for (let i = 0; i < count; i++) assert.is(readFileSync(file(i), 'utf8'), 'original', file(i));
    assert.is(statSync(file(3)).nlink, 1, 'no hard link to a denied file');
    assert.match(r.stdout, /link=1/);
    assert.match(r.stdout, /dir=1/);
    assert.match(r.stdout, /outer=1/);
    assert.match(r.stdout, /file=1/);
    assert.match(r.stdout, /py=1/);
    assert.match(r.stdout, /shm=0/);
    assert.equal(readdirSync(join(t.ws, 'packages')).length, count);
    assert.equal(readdirSync(join(t.ws, 'packages', 'p5')), ['secret.env']);
    assert.is(readFileSync(join(t.ws, 'packages', 'p7', 'new.txt'), 'utf8'), 'new\n', 'a pinned directory is the host one, writable');
    if (mounted) assert.is(readFileSync(join(submount, 'in-mount.txt'), 'utf8'), 'deep\n', 'the host mount beneath the pin');
  } finally {
    if (mounted) spawnSync('umount', [submount]);
    t.cleanup();
  }
});

// A denyWrite file in the host's /tmp (outside every write root) is out of reach already: the
// sandbox has a private /tmp. Such an entry must not make the run fail, and the host file stays.
sandboxTest('a denyWrite entry in the host /tmp outside the write roots runs, and the host file is unchanged', async () => {
  const t = makeTree();
  const hostTmp = mkdtempSync(join(tmpdir(), 'zs-denywrite-'));
  try {
    const file = join(hostTmp, 'keep.txt');
    writeFileSync(file, 'original');
    const r = await sh(t, `echo evil > ${file}; echo ok > free.txt`, { denyWrite: [file] });
    assert.is(readFileSync(join(t.ws, 'free.txt'), 'utf8'), 'ok\n', r.stderr);
    assert.is(readFileSync(file, 'utf8'), 'original');
    assert.equal(readdirSync(hostTmp), ['keep.txt']);
  } finally {
    rmSync(hostTmp, { recursive: true, force: true });
    t.cleanup();
  }
});

test.run();
