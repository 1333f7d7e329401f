// SPDX-License-Identifier: MIT
// The seatbelt profile builder: golden files, a small SBPL parser that checks every profile is
// balanced and uses only known operations and filters, and the rule-order properties.
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { SandboxError } from '../../lib/errors.js';
import { SEATBELT_BASE_PROFILE } from '../../lib/backend/macos/base-profile.js';
import {
  buildSbplString,
  buildSeatbeltProfile,
  MDNS_RESPONDER_SOCKET,
  TERMINAL_DEVICE_RULE,
} from '../../lib/backend/macos/profile.js';
import type { SandboxPlan } from '../../lib/backend/types.js';
import { buildDenialTag, tagDenyRules } from '../../lib/backend/macos/denial-log.js';
import { posixPlan, posixWriteRoot } from '../fixtures/sbpl/plans.js';

const FIXTURES = new URL('../../../test/fixtures/sbpl/', import.meta.url);
const UPDATE = process.env.ZERO_SANDBOX_UPDATE_GOLDEN === '1';

// ---- A small SBPL reader ----------------------------------------------------------------------

type Node =
  | { kind: 'list'; items: Node[]; line: number }
  | { kind: 'string'; value: string; line: number }
  | { kind: 'regex'; value: string; line: number }
  | { kind: 'symbol'; value: string; line: number };

/** Reads SBPL text into s-expressions; throws on unbalanced parentheses or bad literals. */
function readSbpl(text: string): Node[] {
  let i = 0;
  let line = 1;
  const stack: Node[][] = [[]];
  const push = (node: Node): void => {
    stack[stack.length - 1]!.push(node);
  };
  const readString = (): string => {
    let value = '';
    i++; // opening quote
    for (;;) {
      if (i >= text.length) throw new Error(`line ${line}: unterminated string`);
      const ch = text[i]!;
      if (ch === '\n') throw new Error(`line ${line}: raw newline inside a string`);
      if (ch === '"') {
        i++;
        return value;
      }
      if (ch === '\\') {
        const next = text[i + 1];
        if (next === '\\' || next === '"') value += next;
        else if (next === 'n') value += '\n';
        else if (next === 'r') value += '\r';
        else throw new Error(`line ${line}: unknown escape \\${next ?? ''}`);
        i += 2;
        continue;
      }
      value += ch;
      i++;
    }
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\n') {
      line++;
      i++;
    } else if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
    } else if (ch === ';') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (ch === '(') {
      stack.push([]);
      i++;
    } else if (ch === ')') {
      if (stack.length === 1) throw new Error(`line ${line}: unbalanced ")"`);
      const items = stack.pop()!;
      push({ kind: 'list', items, line });
      i++;
    } else if (ch === '"') {
      push({ kind: 'string', value: readString(), line });
    } else if (ch === '#' && text[i + 1] === '"') {
      i++;
      push({ kind: 'regex', value: readString(), line });
    } else {
      const start = i;
      while (i < text.length && !/[\s()";]/.test(text[i]!)) i++;
      push({ kind: 'symbol', value: text.slice(start, i), line });
    }
  }
  if (stack.length !== 1) throw new Error(`unbalanced: ${stack.length - 1} "(" left open`);
  return stack[0]!;
}

const KNOWN_OPERATIONS = new Set([
  'default', 'process-exec', 'process-fork', 'process-info*', 'signal', 'sysctl-read', 'sysctl-write',
  'iokit-open', 'ipc-posix-sem', 'ipc-posix-shm-read*', 'ipc-posix-shm-write-create',
  'ipc-posix-shm-write-data', 'ipc-posix-shm-write-unlink', 'user-preference-read', 'pseudo-tty', 'mach-lookup', 'file-read*',
  'file-read-metadata', 'file-write*', 'file-write-data', 'file-write-unlink', 'file-ioctl',
  'file-map-executable', 'network*', 'network-outbound', 'network-bind', 'mach-priv-task-port', 'system-socket',
]);
// Filter name → how many arguments and of which kind ('path' = string or (param "...")).
const KNOWN_FILTERS: Record<string, 'path' | 'string' | 'regex' | 'symbol' | 'socket' | 'filters'> = {
  'require-all': 'filters',
  extension: 'string',
  subpath: 'path',
  literal: 'path',
  'path-ancestors': 'path',
  regex: 'regex',
  'global-name': 'string',
  'sysctl-name': 'string',
  'sysctl-name-prefix': 'string',
  'iokit-registry-entry-class': 'string',
  'ipc-posix-name-prefix': 'string',
  'ipc-posix-name': 'string',
  target: 'symbol',
  remote: 'socket',
  local: 'socket',
};

interface Checked {
  rules: Array<{ action: 'allow' | 'deny'; operations: string[]; line: number }>;
  paramsUsed: Set<string>;
}

/** Validates the parsed profile; returns the rules and the parameters referenced. */
function checkSbpl(text: string): Checked {
  const forms = readSbpl(text);
  const rules: Checked['rules'] = [];
  const paramsUsed = new Set<string>();
  const head = forms[0];
  if (head?.kind !== 'list' || head.items[0]?.kind !== 'symbol' || head.items[0].value !== 'version') {
    throw new Error('the profile must start with (version 1)');
  }
  for (const form of forms.slice(1)) {
    if (form.kind !== 'list') throw new Error(`line ${form.line}: a top-level atom`);
    const [action, ...rest] = form.items;
    if (action?.kind !== 'symbol' || (action.value !== 'allow' && action.value !== 'deny')) {
      throw new Error(`line ${form.line}: a top-level form that is neither allow nor deny`);
    }
    const operations: string[] = [];
    let filters = 0;
    for (const item of rest) {
      if (item.kind === 'symbol') {
        if (filters > 0) throw new Error(`line ${item.line}: operation ${item.value} after a filter`);
        if (!KNOWN_OPERATIONS.has(item.value)) throw new Error(`line ${item.line}: unknown operation ${item.value}`);
        operations.push(item.value);
        continue;
      }
      // (with message "...") is a modifier, not a filter: it names the rule in the kernel's log line.
      if (item.kind === 'list' && item.items[0]?.kind === 'symbol' && item.items[0].value === 'with') {
        const [, what, text, ...more] = item.items;
        if (what?.kind !== 'symbol' || what.value !== 'message' || text?.kind !== 'string' || more.length > 0) {
          throw new Error(`line ${item.line}: only (with message "...") is used`);
        }
        if (action.value !== 'deny') throw new Error(`line ${item.line}: a message on an allow rule`);
        continue;
      }
      filters++;
      checkFilter(item, paramsUsed);
    }
    if (operations.length === 0) throw new Error(`line ${form.line}: a rule without an operation`);
    if (operations.includes('default') && (operations.length > 1 || filters > 0)) {
      throw new Error(`line ${form.line}: default takes no filter`);
    }
    rules.push({ action: action.value, operations, line: form.line });
  }
  return { rules, paramsUsed };
}

/** Checks one filter form (recursively for require-all); records the parameters it references. */
function checkFilter(item: Node, paramsUsed: Set<string>): void {
  if (item.kind !== 'list') throw new Error(`line ${item.line}: a bare literal where a filter belongs`);
  const [name, arg, ...extra] = item.items;
  if (name?.kind !== 'symbol' || KNOWN_FILTERS[name.value] === undefined) {
    throw new Error(`line ${item.line}: unknown filter ${name?.kind === 'symbol' ? name.value : '?'}`);
  }
  const want = KNOWN_FILTERS[name.value];
  if (want === 'filters') {
    if (arg === undefined) throw new Error(`line ${item.line}: ${name.value} needs filters`);
    for (const inner of [arg, ...extra]) checkFilter(inner, paramsUsed);
    return;
  }
  if (want === 'socket') {
    // (remote unix-socket), (remote unix-socket (path-literal "/abs/path")) or
    // (remote unix-socket (subpath (param "NAME"))).
    const inner = extra[0];
    const literal = inner?.kind === 'list' && inner.items.length === 2 && inner.items[0]?.kind === 'symbol' &&
      inner.items[0].value === 'path-literal' && inner.items[1]?.kind === 'string' && inner.items[1].value.startsWith('/');
    const param = inner?.kind === 'list' && inner.items.length === 2 && inner.items[0]?.kind === 'symbol' && inner.items[0].value === 'subpath' &&
      inner.items[1]?.kind === 'list' && inner.items[1].items[0]?.kind === 'symbol' && inner.items[1].items[0].value === 'param' &&
      inner.items[1].items[1]?.kind === 'string';
    if (param) paramsUsed.add((inner.items[1] as { items: Array<{ value: string }> }).items[1]!.value);
    const ok = arg?.kind === 'symbol' && arg.value === 'unix-socket' && extra.length <= 1 && (inner === undefined || literal || param);
    if (!ok) throw new Error(`line ${item.line}: ${name.value} needs unix-socket and an optional (path-literal "/...") or (subpath (param "NAME"))`);
    return;
  }
  if (arg === undefined || extra.length > 0) throw new Error(`line ${item.line}: ${name.value} takes one argument`);
  if (want === 'path') {
    if (arg.kind === 'string') {
      if (!arg.value.startsWith('/')) throw new Error(`line ${item.line}: relative path ${arg.value}`);
      if (name.value === 'path-ancestors' && arg.value === '/') {
        throw new Error(`line ${item.line}: (path-ancestors "/") is invalid SBPL`);
      }
    } else if (arg.kind === 'list' && arg.items.length === 2 && arg.items[0]?.kind === 'symbol' &&
      arg.items[0].value === 'param' && arg.items[1]?.kind === 'string') {
      paramsUsed.add(arg.items[1].value);
    } else {
      throw new Error(`line ${item.line}: ${name.value} needs a path string or (param "NAME")`);
    }
  } else if (arg.kind !== want) {
    throw new Error(`line ${item.line}: ${name.value} needs a ${want}`);
  }
}

/** Substitutes every (param "X") with its escaped value, as sandbox-exec would see the rule. */
function renderParams(profile: string, params: Record<string, string>): string {
  return profile.replace(/\(param "([A-Z_0-9]+)"\)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`parameter ${name} is referenced but not passed`);
    return buildSbplString(value);
  });
}

// ---- Plans ------------------------------------------------------------------------------------

const writeRoot = posixWriteRoot;
const plan = (overrides: Partial<SandboxPlan> = {}): SandboxPlan => posixPlan('/Users/dev/project', overrides);

const TMP = '/private/var/folders/xy/T/zero-sandbox-1234';

const RUN_MARK = {
  allowed: `/private/var/empty/zero-sandbox-run-${'a1'.repeat(16)}`,
  denied: `/private/var/empty/zero-sandbox-run-${'b2'.repeat(16)}`,
};

const CASES: Record<string, { plan: SandboxPlan; tmpDir: string; runNonces?: typeof RUN_MARK }> = {
  'workspace-network-deny': { plan: plan(), tmpDir: TMP },
  'deny-lists-network-allow': {
    plan: plan({
      network: 'allow',
      writeRoots: [writeRoot('/Users/dev/project'), writeRoot('/Users/dev/shared-lib')],
      denyRead: ['/Users/dev/.ssh/id_ed25519', '/Users/dev/.aws', '/Users/dev/project/config/secrets/prod.key'],
      denyWrite: ['/Users/dev/project/secret'],
    }),
    tmpDir: TMP,
  },
  'narrow-read-roots': {
    plan: plan({
      workspace: '/Users/dev/we"ird\nname',
      cwd: '/Users/dev/we"ird\nname',
      writeRoots: [writeRoot('/Users/dev/we"ird\nname')],
      readRoots: ['/Users/dev/we"ird\nname'],
    }),
    tmpDir: TMP,
  },
  // What every run gets: the mark its processes are found by after it (run-members.ts).
  'run-mark': { plan: plan({ denyRead: ['/private/var/empty'] }), tmpDir: TMP, runNonces: RUN_MARK },
};

for (const [name, { plan: p, tmpDir, runNonces }] of Object.entries(CASES)) {
  const options = { tmpDir, ...(runNonces === undefined ? {} : { runNonces }) };
  test(`golden: ${name}`, () => {
    const built = buildSeatbeltProfile(p, options);
    const sbUrl = new URL(`${name}.sb`, FIXTURES);
    const paramsUrl = new URL(`${name}.params.json`, FIXTURES);
    const paramsText = `${JSON.stringify(built.params, null, 2)}\n`;
    if (UPDATE) {
      writeFileSync(sbUrl, built.profile);
      writeFileSync(paramsUrl, paramsText);
    }
    assert.fixture(built.profile, readFileSync(sbUrl, 'utf8'));
    assert.fixture(paramsText, readFileSync(paramsUrl, 'utf8'));
  });

  test(`parser: ${name} is balanced, known operations and filters, params match`, () => {
    const built = buildSeatbeltProfile(p, options);
    const { rules, paramsUsed } = checkSbpl(built.profile);
    assert.ok(rules.length > 20);
    assert.equal([...paramsUsed].sort(), Object.keys(built.params).sort());
    // Deny-default comes first among the rules; the one network* rule comes after every other
    // rule except the Unix-socket refinements of network allow.
    assert.equal(rules[0], { action: 'deny', operations: ['default'], line: rules[0]!.line });
    const networkRules = rules.filter((r) => r.operations.includes('network*'));
    assert.is(networkRules.length, 1);
    assert.is(networkRules[0]!.action, p.network === 'allow' ? 'allow' : 'deny');
    const after = rules.slice(rules.indexOf(networkRules[0]!) + 1);
    assert.ok(after.every((r) => r.operations.every((op) => op === 'network-outbound' || op === 'network-bind')));
    if (p.network === 'deny') assert.is(after.length, 0);
    // No plan path is spliced into the plan section: every one of them travels as a parameter.
    assert.ok(built.profile.startsWith(SEATBELT_BASE_PROFILE.trimEnd()));
    const planSection = built.profile
      .slice(SEATBELT_BASE_PROFILE.trimEnd().length)
      .replace(TERMINAL_DEVICE_RULE, '<fixed terminal rule>')
      .split('\n')
      .filter((line) => !line.startsWith(';'))
      .join('\n')
      .replace(buildSbplString(MDNS_RESPONDER_SOCKET), '<fixed system socket>');
    assert.not.ok(planSection.includes('"/'), 'a path literal in the plan section');
    for (const value of Object.values(built.params)) {
      assert.not.ok(planSection.includes(value), `${value} spliced into the text`);
    }
  });
}

// ---- The parser itself must reject what it claims to reject ----------------------------------

test('parser rejects unbalanced text, unknown operations and filters, and path-ancestors "/"', () => {
  assert.throws(() => checkSbpl('(version 1)\n(deny default'), /unbalanced/);
  assert.throws(() => checkSbpl('(version 1)\n(deny default))'), /unbalanced/);
  assert.throws(() => checkSbpl('(version 1)\n(allow file-reed* (subpath "/a"))'), /unknown operation file-reed\*/);
  assert.throws(() => checkSbpl('(version 1)\n(allow file-read* (subpth "/a"))'), /unknown filter subpth/);
  assert.throws(() => checkSbpl('(version 1)\n(allow file-read* (path-ancestors "/"))'), /invalid SBPL/);
  assert.throws(() => checkSbpl('(version 1)\n(allow file-read* (subpath "a/b"))'), /relative path/);
  assert.throws(() => checkSbpl('(allow file-read*)'), /version 1/);
  assert.throws(() => checkSbpl('(version 1)\n(allow file-read* (literal "a\\q"))'), /unknown escape/);
  assert.throws(() => checkSbpl('(version 1)\n(deny network-outbound (remote tcp))'), /needs unix-socket/);
  assert.not.throws(() => checkSbpl('(version 1)\n(deny network-outbound (remote unix-socket (path-literal "/a")))'));
  assert.not.throws(() => checkSbpl(SEATBELT_BASE_PROFILE));
});

// ---- Properties ------------------------------------------------------------------------------

test('base profile: one ; comment before every allowance', () => {
  const lines = SEATBELT_BASE_PROFILE.split('\n');
  lines.forEach((line, i) => {
    if (!line.startsWith('(allow')) return;
    assert.ok(lines[i - 1]!.startsWith(';'), `no comment before line ${i + 1}: ${line}`);
  });
});

test('every deny comes after every allow of the plan section, and deny-read also denies unlink', () => {
  const p = CASES['deny-lists-network-allow']!;
  const built = buildSeatbeltProfile(p.plan, { tmpDir: p.tmpDir });
  const rendered = renderParams(built.profile, built.params);
  const lastAllowWrite = rendered.lastIndexOf('(allow file-write*');
  for (const path of p.plan.denyRead) {
    const rule = `(deny file-read* file-map-executable file-write-unlink (subpath ${buildSbplString(path)}))`;
    assert.ok(rendered.indexOf(rule) > lastAllowWrite, rule);
  }
  for (const root of ['/Users/dev/project', '/Users/dev/shared-lib']) {
    for (const sub of ['.git/hooks', '.git/config', '.zero', '.agents']) {
      const rule = `(deny file-write* (subpath "${root}/${sub}"))`;
      assert.ok(rendered.indexOf(rule) > lastAllowWrite, rule);
    }
  }
  assert.ok(rendered.includes('(allow mach-lookup (global-name "com.apple.dnssd.service"))'));
  // blockUnixSockets under network allow: Unix sockets stay closed after the network allow.
  assert.ok(rendered.indexOf('(deny network-outbound (remote unix-socket))') > rendered.indexOf('(allow network*)'));
  assert.ok(rendered.includes('(deny network-bind (local unix-socket))'));
});

test('attack: under network allow a host daemon socket (docker.sock, ssh-agent) stays unreachable; own sockets work', () => {
  const p = CASES['deny-lists-network-allow']!;
  const open = buildSeatbeltProfile({ ...p.plan, blockUnixSockets: false }, { tmpDir: p.tmpDir });
  const rendered = renderParams(open.profile, open.params);
  const deny = rendered.indexOf('(deny network-outbound (remote unix-socket))');
  assert.ok(deny > rendered.indexOf('(allow network*)'), 'the Unix-socket deny follows the network allow');
  // Nothing after the deny re-opens a path outside the command's own trees (docker.sock is in /var/run).
  const after = rendered.slice(deny).split('\n').filter((l) => l.startsWith('(allow network-outbound'));
  const reopened = after.map((l) => /\((?:subpath|path-literal) "([^"]+)"\)/.exec(l)?.[1]);
  assert.equal(reopened, ['/private/var/run/mDNSResponder', '/Users/dev/project', '/Users/dev/shared-lib', p.tmpDir]);
  assert.not.ok(rendered.includes('(deny network-bind (local unix-socket))'));
});

test('attack: other processes\' environments (sysctl kern.procargs2, ps -E) and the keychain services are out of reach', () => {
  const code = SEATBELT_BASE_PROFILE.split('\n').filter((line) => !line.startsWith(';')).join('\n');
  assert.ok(code.indexOf('(deny sysctl-read (sysctl-name-prefix "kern.procargs"))') > code.indexOf('(allow sysctl-read)'));
  for (const service of ['com.apple.SecurityServer', 'com.apple.securityd', 'com.apple.coreservices.launchservicesd', 'com.apple.pasteboard.1']) {
    assert.not.ok(code.includes(`"${service}`), service);
  }
  for (const service of ['com.apple.bsd.dirhelper', 'com.apple.FSEvents', 'com.apple.trustd.agent']) {
    assert.ok(code.includes(`(allow mach-lookup (global-name "${service}"))`), service);
  }
  assert.ok(code.includes('(allow mach-priv-task-port (target same-sandbox))'));
});

test("attack: POSIX shared memory: the command's own Python and OpenMP segments work, the user's other programs' segments stay closed", () => {
  const code = SEATBELT_BASE_PROFILE.split('\n').filter((line) => !line.startsWith(';')).join('\n');
  // Every shm allowance names its segments (a prefix or a name); none is unscoped.
  const shmRules = [...code.matchAll(/\(allow ((?:ipc-posix-shm[a-z*-]*\s*)+)([^)]*\)?)/g)];
  assert.ok(shmRules.length >= 4, 'the shm rules were found');
  for (const [rule] of shmRules) assert.match(rule, /ipc-posix-name(?:-prefix)? "/, rule);
  // libomp and Python name their segments with a leading slash; seatbelt matches the name as given.
  for (const prefix of ['/psm_', '/__KMP_REGISTERED_LIB_']) {
    assert.match(code, new RegExp(`ipc-posix-shm-write-create ipc-posix-shm-write-data ipc-posix-shm-write-unlink\\s+\\(ipc-posix-name-prefix "${prefix}"\\)`), prefix);
  }
  assert.ok(code.includes('(allow ipc-posix-shm-read* (ipc-posix-name "apple.shm.notification_center"))'));
  assert.not.match(code, /\(allow ipc-posix-shm[a-z*-]*\)/, 'no shm allowance without a name filter');
});

test('attack: renaming a parent directory cannot carry a denied or protected path out of its rule', () => {
  const p = CASES['deny-lists-network-allow']!;
  const built = buildSeatbeltProfile(p.plan, { tmpDir: p.tmpDir });
  const rendered = renderParams(built.profile, built.params);
  for (const dir of ['/Users/dev/project/config', '/Users/dev/project/config/secrets', '/Users/dev/project/.git',
    '/Users/dev/shared-lib/.git']) {
    assert.ok(rendered.includes(`(deny file-write-unlink (literal "${dir}"))`), dir);
  }
  // ~/.aws lies outside every writable tree: its parents are already unwritable, nothing to freeze.
  assert.not.ok(rendered.includes('(deny file-write-unlink (literal "/Users/dev"))'));
});

test("attack: the user's terminals are out of reach; only ptys the sandbox allocates and held descriptors", () => {
  const code = SEATBELT_BASE_PROFILE.split('\n').filter((line) => !line.startsWith(';')).join('\n');
  // The base profile (read before the read roots) never names a terminal: read-all comes later and
  // would override an allowance there, so every terminal rule lives after it.
  assert.not.ok(code.includes('/dev/ttys'));
  assert.not.ok(code.includes('/dev/ptmx'));
  assert.not.ok(code.includes('pseudo-tty'));
  for (const name of Object.keys(CASES)) {
    const { plan: p, tmpDir } = CASES[name]!;
    const built = buildSeatbeltProfile(p, { tmpDir });
    const rendered = renderParams(built.profile, built.params);
    const lines = rendered.split('\n');
    const at = (needle: string): number => lines.findIndex((line) => line.includes(needle));
    const denyTerminals = at('(deny file-read* file-write* file-ioctl (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]")');
    assert.ok(denyTerminals > 0, name);
    // The deny follows every read and write allowance of the plan (read-all reaches /dev/ttys*).
    const lastPlainAllow = lines.reduce((last, line, i) => (/^\(allow file-(read|write)\*/.test(line) && !line.includes('/dev/') ? i : last), -1);
    assert.ok(denyTerminals > lastPlainAllow, `${name}: terminal deny after the plan allowances`);
    // Opening a terminal other than /dev/ptmx needs the extension the kernel grants for a pty this
    // sandbox allocated; no rule after the deny opens /dev/ttys* without it.
    const after = checkSbpl(lines.slice(0, 1).concat(lines.slice(denyTerminals + 2)).join('\n')).rules;
    const opens = lines.slice(denyTerminals + 2).filter((line) => /^\(allow file-(read|write)\*/.test(line));
    assert.equal(opens, [
      '(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))',
      '(allow file-read* file-write* file-ioctl (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))',
    ], name);
    assert.ok(after.some((r) => r.action === 'allow' && r.operations.join() === 'pseudo-tty'), name);
    // ioctl alone on /dev/ttysN: isatty() and TIOCGWINSZ on a terminal descriptor already held.
    assert.ok(lines.includes('(allow file-ioctl (regex #"^/dev/ttys[0-9]+$"))'), name);
    // The legacy BSD ptys get no allowance at all.
    assert.not.ok(lines.slice(denyTerminals + 2).some((line) => line.startsWith('(allow') && /pty\[p-w\]|tty\[p-w\]/.test(line)), name);
  }
});

test('network deny has no DNS service and no allow network rule; the shared /tmp is not writable', () => {
  const built = buildSeatbeltProfile(plan(), { tmpDir: TMP });
  const rendered = renderParams(built.profile, built.params);
  assert.not.ok(rendered.includes('(allow network'));
  assert.not.ok(rendered.includes('com.apple.dnssd.service'));
  assert.ok(rendered.trimEnd().endsWith('(deny network*)'));
  assert.not.ok(/\(allow file-write\*[^)]*\(subpath "\/(private\/)?tmp"\)/.test(rendered));
  assert.ok(rendered.includes(`(allow file-write* file-read* file-map-executable (subpath "${TMP}"))`));
});

test('the per-user temp and cache directories (/var/folders/<x>/<y>/T and C) are writable as params; sockets there stay closed', () => {
  const dirs = { temp: '/private/var/folders/zz/abc/T', cache: '/private/var/folders/zz/abc/C' };
  const built = buildSeatbeltProfile(plan({ network: 'allow', blockUnixSockets: false }), { tmpDir: TMP, darwinUserDirs: dirs });
  assert.is(built.params.DARWIN_USER_TEMP_DIR, dirs.temp);
  assert.is(built.params.DARWIN_USER_CACHE_DIR, dirs.cache);
  const { paramsUsed } = checkSbpl(built.profile);
  assert.ok(paramsUsed.has('DARWIN_USER_TEMP_DIR') && paramsUsed.has('DARWIN_USER_CACHE_DIR'));
  const rendered = renderParams(built.profile, built.params);
  assert.ok(rendered.includes(`(allow file-write* file-read* (subpath "${dirs.temp}"))`));
  // Other programs' sockets live there too: no unix-socket connect is re-allowed for these dirs.
  assert.not.ok(rendered.includes(`(remote unix-socket (subpath "${dirs.temp}"))`));
  const without = buildSeatbeltProfile(plan(), { tmpDir: TMP });
  assert.not.ok(Object.keys(without.params).some((name) => name.startsWith('DARWIN_USER')));
  assert.not.ok(without.profile.includes('(param "DARWIN_USER'));
  assert.throws(() => buildSeatbeltProfile(plan(), { tmpDir: TMP, darwinUserDirs: { temp: '/Users/dev' } }), /DARWIN_USER_TEMP_DIR "\/Users\/dev" is not under \/private\/var\/folders/);
});

test('invalid plans fail with invalid_argument naming the field', () => {
  const cases: Array<[Partial<SandboxPlan>, string, RegExp]> = [
    [{ denyRead: ['relative/path'] }, TMP, /denyRead\[0\] "relative\/path" is not an absolute path/],
    [{ denyWrite: ['/a/../b'] }, TMP, /denyWrite\[0\] .* contains \. or \.\. components/],
    [{ readRoots: ['/a/'] }, TMP, /readRoots\[0\] .* ends with a slash/],
    [{}, 'tmp', /tmpDir "tmp" is not an absolute path/],
    [{ writeRoots: [{ root: '/w', readOnlySubpaths: ['/elsewhere/.git/hooks'], protectedNames: [] }] }, TMP,
      /writeRoots\[0\]\.readOnlySubpaths\[0\] .* is not inside its root/],
    [{ writeRoots: [{ root: '/w', readOnlySubpaths: [], protectedNames: ['../x'] }] }, TMP,
      /writeRoots\[0\]\.protectedNames\[0\] .* is not a single file name/],
    [{ network: 'open' as never }, TMP, /network "open" is neither/],
  ];
  for (const [overrides, tmpDir, message] of cases) {
    try {
      buildSeatbeltProfile(plan(overrides), { tmpDir });
      assert.unreachable(`accepted ${JSON.stringify(overrides)}`);
    } catch (error) {
      assert.instance(error, SandboxError);
      assert.is((error as SandboxError).code, 'invalid_argument');
      assert.match((error as SandboxError).message, message);
    }
  }
});

test('buildSbplString escapes backslash, quote, CR and LF', () => {
  assert.is(buildSbplString('a\\b"c\nd\re'), '"a\\\\b\\"c\\nd\\re"');
  assert.equal(readSbpl(`(x ${buildSbplString('a\\b"c\nd\re')})`), [
    { kind: 'list', line: 1, items: [{ kind: 'symbol', value: 'x', line: 1 }, { kind: 'string', value: 'a\\b"c\nd\re', line: 1 }] },
  ]);
});


test('denial tag: every deny rule (and only deny rules) names the run, the profile is otherwise unchanged', () => {
  const tag = buildDenialTag(Buffer.alloc(12, 0xab));
  for (const [name, { plan: p, tmpDir, runNonces }] of Object.entries(CASES)) {
    const options = { tmpDir, ...(runNonces === undefined ? {} : { runNonces }) };
    const plain = buildSeatbeltProfile(p, options);
    const tagged = buildSeatbeltProfile(p, { ...options, denialTag: tag });
    assert.equal(tagged.params, plain.params, name);
    const withTag = ` (with message "${tag}")`;
    assert.is(tagged.profile.split(withTag).join(''), plain.profile, `${name}: only the tags were added`);
    const { rules } = checkSbpl(tagged.profile);
    const denies = rules.filter((r) => r.action === 'deny').length;
    assert.ok(denies >= 3, name);
    assert.is(tagged.profile.split(withTag).length - 1, denies, `${name}: one tag per deny rule`);
    // Each tag closes a deny form: the text before it on its rule starts with (deny.
    for (const line of tagged.profile.split('\n').filter((l) => l.includes(withTag))) {
      assert.not.ok(line.startsWith('(allow') || line.startsWith(';'), line);
    }
  }
  // Comments, strings and regex literals holding parentheses do not confuse the reader.
  assert.is(
    tagDenyRules('; (deny x)\n(deny file-read* (literal "/a)(b\\"c") (regex #"^/d(e)$"))\n(allow file-read*)\n', tag),
    `; (deny x)\n(deny file-read* (literal "/a)(b\\"c") (regex #"^/d(e)$") (with message "${tag}"))\n(allow file-read*)\n`,
  );
  assert.throws(() => tagDenyRules('(deny default)', 'x") (allow default'), /not a denial tag/);
  assert.throws(() => checkSbpl('(version 1)\n(allow file-read* (with message "a"))'), /message on an allow/);
});

test.run();
