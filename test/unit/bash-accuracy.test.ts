// SPDX-License-Identifier: MIT
// One table per classification rule, each with the cases that must match and the near misses that
// must not, plus adversarial variants (quoting, wrappers, dynamic words, scripts written then run).
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { classifyCommand } from '../../lib/bash/classify.js';
import { loadShellParser } from '../../lib/bash/parse.js';

await loadShellParser();

function table(name: string, category: 'destructive' | 'network', yes: string[], no: string[]): void {
  test(`${name}: ${category} when it should be, not otherwise`, () => {
    for (const command of yes) {
      const found = classifyCommand(command, { platform: 'linux' });
      assert.ok(found.categories.includes(category), `${command} should be ${category}: ${found.categories.join(', ')}`);
    }
    for (const command of no) {
      const found = classifyCommand(command, { platform: 'linux' });
      assert.not.ok(found.categories.includes(category), `${command} should not be ${category}: ${found.reasons[category] ?? ''}`);
    }
  });
}

// Quoted or heredoc text handed to a program that only reads it is data, never a command.
table(
  'quoted text',
  'destructive',
  [
    'rm -rf /',
    'echo "$(rm -rf /)"',
    'echo "rm -rf /" | sh',
    'echo "rm -rf ~" > s.sh && bash s.sh',
    'cat <<EOF | sh\nrm -rf /\nEOF',
    "bash -c 'rm -rf /'",
    'ssh host "rm -rf /"',
    'python3 -c "import os; os.system(\'rm -rf /\')"',
    'sudo sh -c "rm -rf /"',
    'xargs -I{} sh -c "rm -rf /" < list',
  ],
  [
    'echo "rm -rf /"',
    "echo 'rm -rf /'",
    "printf '%s\\n' 'mkfs.ext4 /dev/sda'",
    'git commit -m "Fix: never run rm -rf / in CI"',
    'git add -A && git commit -m "rm -rf / guard"',
    'grep -n "rm -rf /" docs/*.md',
    'cat > notes.md <<EOF\nnever run rm -rf / or dd if=/dev/zero of=/dev/sda\nEOF',
    'echo "chmod -R 777 ." >> log.txt',
  ],
);

table(
  'chmod',
  'destructive',
  ['chmod -R 000 /', 'chmod -R 000 .', 'chmod 777 /usr/local', 'chmod 777 /', 'chmod -R 777 src', 'chmod 0777 /etc', 'chmod 000 /usr/bin', 'sudo chmod 777 /var/lib', 'chmod a+rwx /opt/tools'],
  ['chmod 755 -R src', 'chmod 777 ./run', 'chmod 777 /tmp/build.sh', 'chmod 777 /opt/app/run.sh', 'chmod +x build.sh', 'chmod 644 /etc/app.conf', 'chmod -R u+w build'],
);

table(
  'Windows program paths',
  'network',
  ["'C:curl.exe' https://example.com", '"C:\\Tools\\curl.exe" https://example.com', 'C:/tools/wget.exe x', "'c:\\windows\\system32\\curl.exe' x"],
  ["'C:notepad.exe' file.txt", '"C:\\Tools\\grep.exe" x'],
);

// A literal local source is copied on this machine; a URL, host:path or a word built at run time
// may reach the network. (The Go Zero CLI classes every clone as network.)
table(
  'git clone',
  'network',
  [
    'git clone https://example.com/r.git',
    'git clone git@example.com:r.git',
    'git clone host:path/r',
    'git clone "$SRC"',
    'git clone ${BASE}/repo',
    'git clone --recurse-submodules /local/path',
    'git clone $(cat url)',
    'git clone ssh://h/r',
  ],
  ['git clone /local/path', 'git clone ../src', 'git clone ./src dst', 'git clone file:///srv/git/r.git', 'git clone -b main --depth 1 /srv/r', 'git clone ~/src/r', 'git -C work clone ../r'],
);

test('heredoc and here-string payloads of shells are still commands', () => {
  assert.ok(classifyCommand('bash <<EOF\ncurl x\nEOF').categories.includes('network'));
  assert.ok(classifyCommand("sh <<< 'rm -rf /'").categories.includes('destructive'));
});

test.run();
