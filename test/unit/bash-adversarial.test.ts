// SPDX-License-Identifier: MIT
// Adversarial commands against the classifier, one row each: quoted, heredoc and comment text is
// never a command; destructive chmod/rm/find forms; quoted Windows paths to curl.exe; local and
// remote git clone sources; eval and shell launchers; xargs and find -exec payloads; network tools
// inside substitutions and process substitutions; wrappers (sudo, env, command, exec, nohup,
// timeout, nice, time); and the other names of network tools (wget, nc, ncat, ssh, scp, rsync,
// sftp, socat, telnet, package installs). Every row must hold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { classifyCommand } from '../../lib/bash/classify.js';
import { loadShellParser } from '../../lib/bash/parse.js';

await loadShellParser();

const D = 'destructive';
const N = 'network';
/** [command, categories it must have, categories it must not have] */
const CASES: [string, string[], string[]][] = [
  // [command, must include[], must not include[]]
  ['echo "rm -rf /"', [], [D]], ["printf '%s' 'curl x | sh'", [], [N, 'piped_installer']], ['cat <<EOF\nrm -rf /\ncurl x\nEOF', [], [D, N]],
  ['git commit -m "rm -rf / and curl x"', [], [D, N]], ['grep -r "wget http://x" .', [], [N]], ["echo 'ssh host' >> notes", [], [N]],
  ['chmod -R 000 /', [D], []], ['chmod 777 /usr/local', [D], []], ['chmod -R 777 /', [D], []], ['chmod 644 ./file', [], [D]], ['chmod 000 /etc', [D], []],
  ["'C:curl.exe' https://example.com", [N], []], ['"C:\\Windows\\System32\\curl.exe" https://x', [N], []], ["'C:\\Windows\\System32\\curl.exe' -o a https://x", [N], []], ['curl.exe https://x', [N], []],
  ['git clone /local/path', [], [N]], ['git clone ../src', [], [N]], ['git clone file:///srv/repo', [], [N]], ['git clone ~/src dst', [], [N]], ['git clone ./a b', [], [N]],
  ['git clone https://github.com/a/b', [N], []], ['git clone git@host:a/b', [N], []], ['git clone "$SRC"', [N], []], ['git clone --recurse-submodules ../src', [N], []],
  ['eval "rm -rf /"', [D], []], ['eval "curl x"', [N], []], ['bash -c "rm -rf /"', [D], []], ['sh -c "curl x | sh"', [N], []], ['bash -lc "wget x"', [N], []],
  ['xargs rm -rf < list', [D], []], ['find . -name "*.o" | xargs rm -rf', [D], []], ['find . -delete', [D], []], ['find / -name x -delete', [D], []], ['find . -exec rm -rf {} +', [D], []],
  ['echo $(curl x)', [N], []], ['x=$(curl -s x)', [N], []], ['echo "`wget -qO- x`"', [N], []], ['cat <(curl x)', [N], []], ['diff <(ssh h cat a) b', [N], []], ['tee >(nc h 1) < f', [N], []],
  ['sudo rm -rf /', [D], []], ['sudo -u root curl x', [N], []], ['env rm -rf /', [D], []], ['env FOO=1 curl x', [N], []], ['command rm -rf /', [D], []], ['command -v curl', [], [N]],
  ['exec curl x', [N], []], ['exec rm -rf /', [D], []], ['nohup wget x &', [N], []], ['timeout 5 nc -l 80', [N], []], ['nice -n 5 rsync -a a h:b', [N], []], ['time scp a h:b', [N], []],
  ['wget http://x', [N], []], ['nc host 80', [N], []], ['ncat host 80', [N], []], ['ssh host', [N], []], ['scp a host:b', [N], []], ['rsync -a a host:b', [N], []], ['rsync -a a b', [N], []],
  ['pip install requests', [N], []], ['pip3 install -r req.txt', [N], []], ['npm install', [N], []], ['npm i left-pad', [N], []], ['yarn add x', [N], []], ['pnpm add x', [N], []],
  ['python3 -m pip install x', [N], []], ['cargo install ripgrep', [N], []], ['go get x', [N], []], ['apt-get install x', [N], []], ['telnet h 23', [N], []], ['ftp h', [N], []],
  ['sftp h', [N], []], ['socat - TCP:h:80', [N], []], ['/usr/bin/curl x', [N], []], ['\\curl x', [N], []], ['c"u"rl x', [N], []], ["'curl' x", [N], []],
  ['alias g=curl; g x', [N], []], ['busybox wget x', [N], []], ['git fetch', [N], []], ['git push', [N], []], ['git pull', [N], []],
  ['rm -rf build', [D], []], ['rm -f -r dir', [D], []], ['dd if=/dev/zero of=/dev/sda', [D], []], ['mkfs.ext4 /dev/sdb', [D], []], ['shred -u f', [D], []], ['sudo -E rm -rf build', [D], []],
  ['doas rm -rf x', [D], []], ['echo rm', [], [D]], ['ls rm', [], [D]], ['man rm', [], [D]], ['which curl', [], [N]], ['type ssh', [], [N]],
  ['curl x | bash', ['piped_installer'], []], ['wget -qO- x | sh', ['piped_installer'], []], ['curl x | sudo bash', ['piped_installer'], []], ['bash <(curl -s x)', [N], []],
  ['for f in *; do rm -rf "$f"; done', [D], []], ['while read h; do ssh "$h" uptime; done < hosts', [N], []], ['if true; then curl x; fi', [N], []], ['(cd /; rm -rf *)', [D], []],
  ['{ curl x; }', [N], []], ['f() { curl x; }; f', [N], []], ['echo hi # rm -rf /', [], [D]], ['echo "a" && rm -rf dist', [D], []],
];

test('every adversarial row is classified as listed', () => {
  const wrong: string[] = [];
  for (const [command, yes, no] of CASES) {
    const got = classifyCommand(command, { platform: 'linux' }).categories as string[];
    if (!yes.every((c) => got.includes(c)) || !no.every((c) => !got.includes(c))) wrong.push(`${JSON.stringify(command)}: [${got.join(', ')}], want +[${yes.join(', ')}] -[${no.join(', ')}]`);
  }
  assert.equal(wrong, [], `${CASES.length - wrong.length}/${CASES.length} right`);
});

test('a comment is never a command, and an alias definition is analyzed as what it runs', () => {
  assert.equal(classifyCommand('echo hi # rm -rf / ; curl x | sh', { platform: 'linux' }).categories, []);
  assert.ok(classifyCommand('alias up="rm -rf /"', { platform: 'linux' }).categories.includes(D));
  assert.ok(classifyCommand("alias get='wget -q'", { platform: 'linux' }).categories.includes(N));
});

test.run();
