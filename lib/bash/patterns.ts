// SPDX-License-Identifier: MIT
// The raw-text layer: destructive shapes, piped installers and the
// unparseable-network fallback, matched on the whole string in linear time (no nested quantifiers).

const SEGMENT_END = /[\n;&|)`]/g;

/** rm, its dash flags, an optional `--`, then a home or root target (quotes allowed). */
const RM_ROOT =
  /[ \t]+(?:-[^\s;&|)`]*[ \t]+)*(?:--[ \t]+)?["']?(\/\*?|~\/?\*?|\*|\$HOME\/?\*?|\$\{HOME\}\/?\*?)["']?(?=\s|$|[;&|)`])/y;
const MODE_777 = /(?:^|\s)["']?0?777["']?(?=\s|$)/;
const RECURSIVE = /(?:^|\s)(?:-[a-z]*r[a-z]*|--recursive)(?=\s|$)/i;
/** `/` or a system tree itself (`/etc`, `/etc/`, `/etc/*`); a single file below one is not matched (naming one file is not wiping a tree). */
const SYSTEM_TREE = /(?:^|\s)["']?(\/(?:\*|(?:etc|usr|bin|sbin|lib|lib64|var|boot|opt|root|sys|proc|dev)\/?\*?)?)["']?(?=\s|$)/;

function chmodReason(tail: string): string | undefined {
  if (!MODE_777.test(tail)) return undefined;
  if (RECURSIVE.test(tail)) return 'chmod -R 777 opens a whole tree to everyone';
  const target = SYSTEM_TREE.exec(tail);
  return target === null ? undefined : `chmod 777 on ${target[1] as string} opens a system tree to everyone`;
}

const WORD_HITS = /\b(rm|chmod|chown)\b/gi;
const MKFS = /\bmkfs(?:\.[a-z0-9]+)?\b/i;
const DD = /\bdd\s+if=/i;
const FORK_BOMB = /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/;
const BLOCK_DEVICE = /(?:>|\bof=)\s*["']?\/dev\/(?:sd[a-z]|nvme\d+n\d+|hd[a-z]|xvd[a-z]|mmcblk\d+)/i;

/**
 * Why the raw text looks destructive (even inside quotes: text handed to a shell later runs), or undefined.
 * Linear: the chmod/chown checks ask "does some token after the word ...", so within one segment
 * (up to the next `;`, `&`, `|`, `)`, backtick or newline) only the first occurrence is checked.
 */
export function destructivePattern(text: string): string | undefined {
  if (MKFS.test(text)) return 'mkfs formats a filesystem';
  if (DD.test(text)) return 'dd if= writes raw data';
  if (FORK_BOMB.test(text)) return 'the text contains a fork bomb';
  if (BLOCK_DEVICE.test(text)) return 'the text writes to a raw block device';
  let segmentEnd = -1;
  const checked = { chmod: -1, chown: -1 };
  WORD_HITS.lastIndex = 0;
  for (let match = WORD_HITS.exec(text); match !== null; match = WORD_HITS.exec(text)) {
    const word = (match[1] as string).toLowerCase();
    const after = match.index + word.length;
    if (word === 'rm') {
      RM_ROOT.lastIndex = after;
      const hit = RM_ROOT.exec(text);
      if (hit !== null) return `rm on ${hit[1] as string} deletes a home or root tree`;
      continue;
    }
    if (after > segmentEnd) {
      SEGMENT_END.lastIndex = after;
      const end = SEGMENT_END.exec(text);
      segmentEnd = end === null ? text.length : end.index;
    }
    const key = word as 'chmod' | 'chown';
    if (checked[key] === segmentEnd) continue;
    checked[key] = segmentEnd;
    const tail = text.slice(after, segmentEnd);
    if (key === 'chmod') {
      const reason = chmodReason(tail);
      if (reason !== undefined) return reason;
    } else if (RECURSIVE.test(tail)) {
      return 'chown -R changes the owner of a whole tree';
    }
  }
  return undefined;
}

const FETCHER = /\b(?:curl|wget|fetch|aria2c)(?:\.exe)?\b/i;
const SHELL_AFTER_PIPE =
  /[ \t]*(?:(?:sudo|doas|env)\b(?:[ \t]+[^\s|;&]+){0,6}?[ \t]+)?["']?(?:[^\s|;&'"]*\/)?(?:sh|bash|zsh|ksh|dash)["']?(?=\s|$|[;&|)])/iy;

/** Why the raw text pipes a download into a shell (also through sudo/doas/env), or undefined. */
export function pipedInstallerPattern(text: string): string | undefined {
  let segmentStart = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 10) {
      segmentStart = i + 1;
      continue;
    }
    if (ch !== 124) continue;
    if (text.charCodeAt(i + 1) === 124) {
      i++;
      segmentStart = i + 1;
      continue;
    }
    const segment = text.slice(segmentStart, i);
    segmentStart = i + 1;
    if (!FETCHER.test(segment)) continue;
    SHELL_AFTER_PIPE.lastIndex = text.charCodeAt(i + 1) === 38 ? i + 2 : i + 1;
    if (SHELL_AFTER_PIPE.test(text)) return 'a download is piped straight into a shell';
  }
  return undefined;
}

const EXE = '(?:\\.(?:exe|cmd|bat|com))?';
const UNPARSEABLE_NETWORK = [
  new RegExp(`\\b(?:curl|wget|fetch|aria2c|ssh|scp|sftp|rsync|nc|ncat|netcat|socat|telnet|ftp|npx|bunx|uvx|http-server|vite|next|nuxt|astro|iwr|irm|invoke-webrequest|invoke-restmethod)${EXE}\\b`, 'i'),
  new RegExp(`\\b(?:npm|pnpm|yarn|bun|pip|pip2|pip3)${EXE}\\s+(?:\\S+\\s+){0,2}?(?:install|i|add|ci|create|publish|login|start|serve|dev|preview|run\\s+(?:start|serve|dev|preview)|exec|x|dlx)\\b`, 'i'),
  new RegExp(`\\bgo${EXE}\\s+(?:\\S+\\s+){0,2}?(?:get|install|mod\\s+download)\\b`, 'i'),
  new RegExp(`\\bgit${EXE}\\s+(?:\\S+\\s+){0,4}?(?:clone|fetch|pull|push|ls-remote|submodule\\s+update|remote\\s+update)\\b`, 'i'),
  new RegExp(`\\b(?:python|python2|python3|py)${EXE}\\s+(?:\\S+\\s+){0,2}?-m\\s*(?:http\\.server|pip\\s+install)\\b`, 'i'),
  /\/dev\/(?:tcp|udp)\//,
  new RegExp(`\\bgh${EXE}\\s+(?:api|repo|release|pr)\\b`, 'i'),
  new RegExp(`\\b(?:cargo|gem|apt|apt-get|brew|docker|podman|poetry|composer|uv|pipx)${EXE}\\s+(?:\\S+\\s+){0,2}?(?:install|fetch|pull)\\b`, 'i'),
];

/** For unparseable text only: why it obviously uses the network (fail closed), or undefined. */
export function unparseableNetworkPattern(text: string): string | undefined {
  for (const pattern of UNPARSEABLE_NETWORK) {
    const match = pattern.exec(text);
    if (match !== null) return `the unparseable command mentions "${match[0].replace(/\s+/g, ' ').slice(0, 60)}"`;
  }
  return undefined;
}

const UNPARSEABLE_DESTRUCTIVE = new RegExp(`(?:^|[\\s;&|(\`'"/\\\\])(rm|rmdir|shred|unlink|dd|mkfs(?:\\.[a-z0-9]+)?|wipefs|truncate|git\\s+(?:\\S+\\s+){0,4}?(?:clean|reset\\s+--hard))${EXE}(?=$|[\\s;&|)\`'"])`, 'i');

/**
 * For text the parser did not read: why it names a program that destroys data (fail closed: any `rm`,
 * `dd`, `shred`, ... counts, whatever its arguments), or undefined.
 */
export function unparseableDestructivePattern(text: string): string | undefined {
  const match = UNPARSEABLE_DESTRUCTIVE.exec(text);
  return match === null ? undefined : `the unparseable command runs "${(match[1] as string).replace(/\s+/g, ' ').slice(0, 40)}", which can destroy data`;
}
