#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Cross-compiles what binding.gyp builds on Windows (common glue + native/windows) with MinGW-w64
// into a Windows addon DLL, linked against import libraries made from node-api-headers' .def
// files, and checks that the DLL exports the Node-API module entry point. Exits non-zero on any
// error.
// Usage: node scripts/check-windows.mjs   (needs: apt-get install -y g++-mingw-w64-x86-64)
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const triple = process.env.ZERO_SANDBOX_MINGW_TRIPLE ?? 'x86_64-w64-mingw32';
// The -posix variant has std::mutex and std::thread (node-addon-api needs them); the plain name
// is the win32 thread model on Debian and lacks them.
const cxx = process.env.ZERO_SANDBOX_MINGW_CXX ?? `${triple}-g++-posix`;
const dlltool = `${triple}-dlltool`;
const objdump = `${triple}-objdump`;
// Another output directory for a caller that must not share this one (test-wine.mjs runs while
// the unit test of this script may rebuild build/check-windows).
const outDir = process.env.ZERO_SANDBOX_WINDOWS_OUT ?? join(root, 'build', 'check-windows');

function fail(message) {
  process.stderr.write(`check:windows: ${message}\n`);
  process.exit(1);
}

function run(command, args, { quiet = false } = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) {
    if (result.error.code === 'ENOENT') {
      fail(`${command} not found on PATH; install it with: apt-get install -y g++-mingw-w64-x86-64`);
    }
    fail(`${command}: ${result.error.message}`);
  }
  if (!quiet || result.status !== 0) {
    process.stderr.write(result.stderr);
  }
  if (result.status !== 0) fail(`${command} ${args.join(' ')} exited with ${result.status}`);
  return result.stdout;
}

// The sources and defines binding.gyp builds on Windows: the target's common list plus its
// OS=='win' condition, so this check compiles exactly what node-gyp would.
function windowsBuild() {
  const text = readFileSync(join(root, 'binding.gyp'), 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n');
  const gyp = JSON.parse(text);
  const target = gyp.targets.find((t) => t.target_name === 'zero_sandbox');
  if (target === undefined) fail('binding.gyp has no zero_sandbox target');
  const win = (target.conditions ?? []).filter(([cond]) => cond === "OS=='win'").map(([, block]) => block);
  if (win.length === 0) fail("binding.gyp has no OS=='win' condition for zero_sandbox");
  return {
    sources: [...(target.sources ?? []), ...win.flatMap((b) => b.sources ?? [])],
    defines: [...(target.defines ?? []), ...win.flatMap((b) => b.defines ?? [])],
  };
}

const build = windowsBuild();
const sources = build.sources;
if (!sources.some((s) => s.startsWith('native/windows/'))) fail("binding.gyp's Windows build has no native/windows/ source");
const unlisted = readdirSync(join(root, 'native', 'windows'))
  .filter((name) => name.endsWith('.cc'))
  .map((name) => `native/windows/${name}`)
  .filter((source) => !sources.includes(source));
if (unlisted.length > 0) fail(`native/windows sources missing from binding.gyp: ${unlisted.join(', ')}`);

let addonApi;
let headers;
try {
  addonApi = require('node-addon-api').include.replace(/^"|"$/g, '');
  headers = require('node-api-headers');
} catch (error) {
  fail(`node-addon-api and node-api-headers must be installed (npm install): ${error.message}`);
}

// Fail early, before touching the output directory, when a tool is missing.
for (const tool of [cxx, dlltool, objdump]) run(tool, ['--version'], { quiet: true });

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

// Import libraries for the Node-API symbols node.exe exports.
const libs = [];
for (const [name, def] of Object.entries(headers.def_paths)) {
  const lib = join(outDir, `lib${name}.a`);
  run(dlltool, ['-d', def, '-l', lib]);
  libs.push(lib);
}

const flags = [
  '-std=c++17', '-O1', '-Wall', '-Wextra', '-fexceptions',
  // node_addon_api_except (binding.gyp's dependency) builds with C++ exceptions.
  '-DNAPI_CPP_EXCEPTIONS',
  ...build.defines.map((d) => `-D${d}`),
  // Third-party headers are system headers: their warnings are not ours to fail on.
  '-isystem', addonApi, '-isystem', headers.include_dir, '-I', join(root, 'native'),
];
const objects = [];
for (const source of sources) {
  const object = join(outDir, `${source.replace(/[\\/]/g, '_')}.o`);
  process.stdout.write(`compile ${source}\n`);
  // Our Windows sources must be warning-free; the shared glue is checked for errors only.
  const strict = source.startsWith('native/windows/') ? ['-Werror'] : [];
  run(cxx, [...flags, ...strict, '-c', join(root, source), '-o', object]);
  objects.push(object);
}

const dll = join(outDir, 'zero_sandbox.node');
process.stdout.write(`link ${dll}\n`);
run(cxx, ['-shared', '-o', dll, ...objects, ...libs, '-ladvapi32',
  '-static', '-Wl,--no-undefined']);

// The DLL must export the module registration symbol node looks for, and import node.exe.
const dump = run(objdump, ['-p', dll], { quiet: true });
if (!/\bnapi_register_module_v1\b/.test(dump)) fail('the DLL does not export napi_register_module_v1');
const imported = [...dump.matchAll(/DLL Name: (\S+)/g)].map((m) => m[1].toLowerCase());
if (!imported.includes('node.exe')) fail(`the DLL does not import from node.exe (imports: ${imported.join(', ')})`);
for (const needed of ['advapi32.dll', 'kernel32.dll']) {
  if (!imported.includes(needed)) fail(`the DLL does not import ${needed} (imports: ${imported.join(', ')})`);
}
// userenv's AppContainer functions are looked up at run time (native/windows/app_container.cc): a
// static import would make the addon fail to load where they are missing instead of reporting
// the layer as unavailable.
if (imported.includes('userenv.dll')) fail('the DLL imports userenv.dll; look its AppContainer functions up at run time');
process.stdout.write(`ok: ${sources.length} sources compiled and linked; imports ${[...new Set(imported)].sort().join(', ')}\n`);
