// Attack: an npm token survives in the sanitized npmrc copy the sandbox gets, because the
// sanitizer splits and decodes lines differently from npm's own config reader (a lone CR ends a
// line for npm, a quoted or escaped key hides `_authToken`). Fix: the sanitizer reads lines
// exactly as npm's ini reader does. Checked against npm's own reader as the oracle (the `ini`
// package inside the installed npm, else `npm config get`), and in a real sandbox: the copy npm
// is pointed at holds no token, and the host's original is unchanged.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { buildSanitizedNpmrc } from '../../lib/sandbox/npmrc.js';
import { makeTree, sandboxTest, sh, TREE_BASE } from '../helpers/sandbox.js';

const TOKEN = 'npm_TOKENaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

/** Crafted user configs: each hides credentials from a naive line reader. */
const CASES: Record<string, string> = {
  'lone CR': `registry=https://registry.example/\r//registry.example/:_authToken=${TOKEN}\rfund=false\r`,
  CRLF: `registry=https://registry.example/\r\n//registry.example/:_authToken=${TOKEN}\r\n`,
  'CR CR LF': `fund=false\r\r\n_auth=${TOKEN}\r\r\n`,
  'double-quoted key': `"//registry.example/:_authToken"=${TOKEN}\n`,
  'single-quoted key': `'//registry.example/:_authToken'=${TOKEN}\n`,
  'JSON-escaped key': `"//registry.example/:_auth\\u0054oken"=${TOKEN}\n`,
  'quoted value': `//registry.example/:_authToken="${TOKEN}"\n`,
  'username and password': `//registry.example/:username=me\n//registry.example/:_password=${Buffer.from(TOKEN).toString('base64')}\n`,
  'scoped always-auth and email': `//registry.example/:always-auth=true\nemail=${TOKEN}@example.com\n`,
  'URL with password': `registry=https://me:${TOKEN}@registry.example/\n@acme:registry="https://me:${TOKEN}@npm.acme.example/"\n`,
  'env reference in key': `\${NPM_REG}:_authToken=${TOKEN}\n//\${HOST}/:x=${TOKEN}\n`,
  'env reference to a secret': `//registry.example/:_authToken=\${NPM_TOKEN}\nregistry=https://\${NPM_USER}:\${NPM_PASSWORD}@registry.example/\n`,
  'section named by a token': `[//registry.example/:_authToken=${TOKEN}]\nfoo=${TOKEN}\n`,
  'array key': `_authToken[]=${TOKEN}\n`,
  'leading blanks': `   _authToken = ${TOKEN}\n\t//registry.example/:_password=${TOKEN}\n`,
  'scoped path and port keys': `//npm.pkg.example/acme/packages/:_authToken=${TOKEN}\n//registry.example:8443/:_auth=${TOKEN}\n@acme:_authToken=${TOKEN}\n`,
  'optional env reference': `//registry.example/:_authToken=\${NPM_TOKEN?}\n//r2.example/:_password=\${PW?}\n`,
  'client key and cert inline': `key="-----BEGIN PRIVATE KEY-----\\n${TOKEN}"\ncert=${TOKEN}\n//registry.example/:keyfile=/k/${TOKEN}.pem\n`,
  'comment then CR token': `; comment\r_authToken=${TOKEN}\r# other\r`,
};

type Decode = (text: string) => Record<string, unknown>;

/** npm's own ini reader, from the installed npm; undefined when it cannot be found. */
function npmIniDecode(): Decode | undefined {
  try {
    const root = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
    const path = join(root, 'npm', 'node_modules', 'ini');
    if (!existsSync(path)) return undefined;
    return (createRequire(import.meta.url)(path) as { decode: Decode }).decode;
  } catch {
    return undefined;
  }
}

/** Every string in what npm read (keys and values, sections flattened), for a leak search. */
function flatten(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      out.push(key);
      flatten(inner, out);
    }
  }
  return out;
}

const CREDENTIAL_KEY = /_auth|_password|username|token|email/i;

test('npm reading the sanitized copy finds no credential, whatever the line endings or quoting', () => {
  const decode = npmIniDecode();
  const dir = mkdtempSync(join(TREE_BASE, 'zs-npmrc-oracle-'));
  try {
    for (const [name, text] of Object.entries(CASES)) {
      const sanitized = buildSanitizedNpmrc(text).text;
      if (decode !== undefined) {
        // The oracle sees the token in the original: the case is a real one.
        assert.ok(flatten(decode(text)).some((s) => s.includes(TOKEN) || s.includes(Buffer.from(TOKEN).toString('base64')) || s.includes('${')), `${name}: npm reads a credential from the original`);
        const read = flatten(decode(sanitized));
        assert.not.ok(read.some((s) => s.includes(TOKEN) || s.includes(Buffer.from(TOKEN).toString('base64'))), `${name}: npm reads no token from the copy: ${JSON.stringify(read)}`);
        assert.not.ok(Object.keys(decode(sanitized)).some((key) => CREDENTIAL_KEY.test(key)), `${name}: no credential key`);
      } else {
        // No ini reader to load: ask npm itself for the credential keys of the copy.
        const file = join(dir, 'npmrc');
        writeFileSync(file, sanitized);
        for (const key of ['//registry.example/:_authToken', '_auth', '_authToken', 'email', '//registry.example/:_password']) {
          const value = execFileSync('npm', ['config', 'get', key, '--userconfig', file], { encoding: 'utf8' }).trim();
          assert.not.ok(value.includes(TOKEN), `${name}: npm config get ${key}`);
        }
      }
    }
    if (decode !== undefined) {
      // What is not a credential survives as npm reads it.
      const kept = decode(buildSanitizedNpmrc('registry=https://r.example/\r@acme:registry=https://me:pw@npm.acme.example/\rfund=false\r').text);
      assert.is(kept.registry, 'https://r.example/');
      assert.is(kept['@acme:registry'], 'https://npm.acme.example/');
      assert.is(kept.fund, false);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

sandboxTest('inside the sandbox the npmrc npm is given holds no token from a CR-only user config', async () => {
  const t = makeTree('zs-npmrc-cr-');
  const userConfig = join(t.outside, 'user.npmrc');
  const original = `registry=https://registry.example/\r//registry.example/:_authToken=${TOKEN}\r"_auth"=${TOKEN}\r`;
  writeFileSync(userConfig, original);
  const saved = process.env.npm_config_userconfig;
  const savedCache = process.env.XDG_CACHE_HOME;
  // The managed state holding the copy must be visible inside (the private /tmp hides /tmp).
  process.env.XDG_CACHE_HOME = join(t.base, 'cache');
  process.env.npm_config_userconfig = userConfig;
  try {
    const r = await sh(t, `cat "$npm_config_userconfig"; echo; cat ${userConfig}; npm config get registry`);
    assert.not.match(r.stdout, new RegExp(TOKEN), r.stdout);
    assert.match(r.stdout, /registry=https:\/\/registry\.example\//, r.stdout + r.stderr);
    assert.is(readFileSync(userConfig, 'utf8'), original, 'the host original is unchanged');
  } finally {
    if (saved === undefined) delete process.env.npm_config_userconfig;
    else process.env.npm_config_userconfig = saved;
    if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedCache;
    t.cleanup();
  }
});

test.run();
