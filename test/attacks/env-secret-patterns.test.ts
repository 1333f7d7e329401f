// Attack: secrets in environment variables outside a fixed list of names (PGPASSWORD, MYSQL_PWD,
// DATABASE_URL with a password, STRIPE_SECRET_KEY, npm_config__authToken, GITHUB_PAT, ...) and
// secrets with well-known token shapes under innocent names cross into the sandbox. Fix: the
// scrub matches name patterns and value shapes; PWD and OLDPWD stay; envPass lets one through on
// purpose; every scrubbed name (never its value) is reported in the result.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { makeTree, sandboxTest, sh } from '../helpers/sandbox.js';

const S = 'Zq9TOPSECRETenv7Xw';

/** Variables that must not be visible inside, by name or by value. */
const SECRETS: Record<string, string> = {
  PGPASSWORD: S, MYSQL_PWD: S, DATABASE_URL: `postgres://u:${S}@db.example/app`, STRIPE_SECRET_KEY: S, API_KEY: S,
  npm_config__authToken: S, 'npm_config_//registry.example/:_auth': S, PRIVATE_KEY: S, GITHUB_PAT: S, SECRET_KEY_BASE: S,
  PASSWORD: S, TOKEN: S, Db_Passwd: S, SENDGRID_APIKEY: S, GOOGLE_CREDENTIALS: S, SMTP_PASS: S, GPG_PASSPHRASE: S,
  SLACK_WEBHOOK_URL: `https://hooks.slack.example/services/${S}`, SENTRY_DSN: `https://${S}@sentry.example/1`,
  TWILIO_AUTH: `ac${S}99`, RAILS_MASTER_KEY: `0f${S}e1`, SESSION_COOKIE: S,
  // Innocent names, secret values.
  BUILD_INFO: `ghp_${S}aaaaaaaaaaaaaaaa`, NOTES: `github_pat_11AB${S}cdefghij`, CI_LINE: `glpat-${S}xyz`,
  CHAT: `xoxb-1234-${S}`, MODEL: `sk-ant-api03-${S}abcdef`, PAY: `sk_live_${S}abcdef`, AWS_ID: `AKIA${S.toUpperCase().slice(0, 16)}`,
  SESS: `ASIA${'Q'.repeat(16)}${S}`, CERT: `-----BEGIN RSA PRIVATE KEY-----\n${S}\n-----END RSA PRIVATE KEY-----`,
  BEARER: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIke${S}.sig`, REDIS: `redis://:${S}@cache.example:6379`,
  CONN: `Server=db;User Id=sa;Password=${S};`,
  // The cloud, forge and service variables developers export, and more token shapes.
  AWS_SECRET_ACCESS_KEY: S, AZURE_CLIENT_SECRET: S, GOOGLE_APPLICATION_CREDENTIALS: `/keys/${S}.json`, HF_TOKEN: S,
  OPENAI_API_KEY: S, ARM_CLIENT_SECRET: S, VAULT_TOKEN: S, NODE_AUTH_TOKEN: S, DOCKER_AUTH_CONFIG: `{"auths":{"r":{"auth":"${S}"}}}`,
  GOOGLE_SA_JSON: `{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\n${S}"}`,
  ALERTS: `https://hooks.slack.com/services/T0000/B0000/${S}`, HOOK_TARGET: `https://discord.com/api/webhooks/123456/${S}`,
  ERRORS_URL: `https://0123456789abcdef0123456789abcdef@o1.ingest.example/${S}`, AUTHZ_HEADER: `Bearer ${S}abc`,
  DO_CRED: `dop_v1_${'a1'.repeat(32)}${S}`, VAULT_ADDR_TOKEN: `hvs.${S}abcdefgh`, SHOP: `shpat_${'0f'.repeat(16)}${S}`,
  AGE_ID: `AGE-SECRET-KEY-1${S.toUpperCase()}QQQQQQ`, GOOGLE_OAUTH: `ya29.${S}abcdefgh`, SLACK_APP: `xapp-1-${S}`,
};

/** Variables that must stay: directories, settings, names that only resemble a secret's. */
const KEPT: Record<string, string> = {
  PWD: '/somewhere', OLDPWD: '/elsewhere', LD_LIBRARY_PATH: '/opt/lib', TOKENIZERS_PARALLELISM: 'false',
  XAUTHORITY: '/run/user/1000/.Xauthority', GIT_AUTHOR_NAME: 'Jane Doe', GIT_AUTHOR_EMAIL: 'jane@example.com',
  AWS_PROFILE: 'dev', AWS_REGION: 'eu-west-1', KEEP_ME: 'visible', DATABASE_HOST: 'db.example',
  REGISTRY_URL: 'https://registry.example/', AZURE_CLIENT_ID: '00000000-0000-0000-0000-000000000000',
  EDITOR_AUTH_MODE: 'none', HOOKS_DIR: '/srv/hooks', GIT_URL: 'https://git@github.example/org/repo.git',
};

sandboxTest('secrets by name pattern and by value shape stay out; PWD/OLDPWD stay; every scrubbed name is reported', async () => {
  const t = makeTree();
  try {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...SECRETS, ...KEPT };
    const r = await sh(t, 'env; cat /proc/self/environ | tr "\\0" "\\n"; cat /proc/1/environ 2>/dev/null | tr "\\0" "\\n"', { env });
    assert.not.match(r.stdout, new RegExp(S), r.stdout.split('\n').filter((line) => line.includes(S)).join('\n'));
    assert.not.match(r.stdout, new RegExp(S.toUpperCase().slice(0, 16)));
    for (const [name, value] of Object.entries(KEPT)) {
      if (name === 'PWD' || name === 'OLDPWD') assert.match(r.stdout, new RegExp(`^${name}=`, 'm'), `${name} is kept`);
      else assert.ok(r.stdout.includes(`${name}=${value}`), `${name} is kept`);
    }
    assert.equal([...r.scrubbedEnv].sort(), Object.keys(SECRETS).sort(), 'every scrubbed name is reported');
    assert.not.ok(JSON.stringify(r).includes(S), 'no value is reported');
    const passed = await sh(t, 'echo "$PGPASSWORD"', { env: { PATH: env.PATH, PGPASSWORD: 'on-purpose' }, envPass: ['PGPASSWORD'] });
    assert.is(passed.stdout, 'on-purpose\n', 'envPass lets a named variable through on purpose');
    assert.equal(passed.scrubbedEnv, []);
  } finally {
    t.cleanup();
  }
});

test.run();
