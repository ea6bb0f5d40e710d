#!/usr/bin/env node
/**
 * Comment stories, kept out of src/: a code comment says what the code is and why; how it
 * got so belongs in docs/ or the commit body. This scans the comments, line and block, of
 * every .ts file under src/ (src/transport/generated aside), and fails on:
 *  - a reference to an issue by number (`issue 30`, `issues #29`), unless one of the few
 *    words before it names a peer project whose tracker it cites (`Riak issue #1864`);
 *  - the phrases "once caught", "a test once" and "used to be".
 * Matches run across the line breaks of a comment (and of adjacent `//` lines).
 *
 * Usage: node scripts/comment-stories.mjs   (exit 1 and a list of file:line when any is found)
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = new URL('..', import.meta.url).pathname;
const SKIP = join(ROOT, 'src/transport/generated');
const ISSUE = /\bissues?\s*#?\d+/gi;
const PHRASES = [/\bonce\s+caught\b/gi, /\ba\s+test\s+once\b/gi, /\bused\s+to\s+be\b/gi];
const PEER = /\b(riak|cassandra|scylla|scylladb|dynamodb|etcd|grpc|node|node\.js|leveldb|memberlist|aws)\b/i;
/** How many words before `issue N` may name the peer whose tracker it cites. */
const PEER_WORDS = 4;
const HINT = 'code comments say what the code is; put the story in docs/ or the commit body';

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return path === SKIP ? [] : files(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Every comment of the file as [pos, end], in order; adjacent ones (only whitespace between) merged. */
function commentBlocks(source) {
  const text = source.text;
  const seen = new Map();
  const visit = (node) => {
    for (const r of ts.getLeadingCommentRanges(text, node.pos) ?? []) seen.set(r.pos, r.end);
    for (const r of ts.getTrailingCommentRanges(text, node.end) ?? []) seen.set(r.pos, r.end);
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  const blocks = [];
  for (const [pos, end] of [...seen].sort((a, b) => a[0] - b[0])) {
    const last = blocks.at(-1);
    if (last && /^\s*$/.test(text.slice(last[1], pos))) last[1] = end;
    else blocks.push([pos, end]);
  }
  return blocks;
}

/** A comment's text with its markers (slashes, the stars that open and close it, a line's leading star) blanked out, offsets kept. */
function prose(comment) {
  const blank = (m) => ' '.repeat(m.length);
  return comment.replace(/\/\/+|\/\*+|\*+\//g, blank).replace(/^(\s*)\*+/gm, (m, ws) => ws + blank(m.slice(ws.length)));
}

/** True when one of the PEER_WORDS words before `at` in `text` names a peer project. */
function citesPeer(text, at) {
  const words = text.slice(0, at).split(/\s+/).filter(Boolean).slice(-PEER_WORDS);
  return words.some((w) => PEER.test(w));
}

/** The stories in one file: { line, text } for each line with a match. */
function stories(path) {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const lines = text.split('\n');
  const found = new Map();
  for (const [pos, end] of commentBlocks(source)) {
    const body = prose(text.slice(pos, end));
    const hits = [...body.matchAll(ISSUE)].filter((m) => !citesPeer(body, m.index));
    for (const re of PHRASES) hits.push(...body.matchAll(re));
    for (const m of hits) {
      const { line } = source.getLineAndCharacterOfPosition(pos + m.index);
      found.set(line + 1, lines[line].trim());
    }
  }
  return [...found].sort(([a], [b]) => a - b).map(([line, text]) => ({ line, text }));
}

let count = 0;
for (const path of files(join(ROOT, 'src'))) {
  for (const s of stories(path)) {
    console.error(`${relative(ROOT, path)}:${s.line}: ${s.text}`);
    count++;
  }
}
if (count > 0) console.error(`${count} comment ${count === 1 ? 'story' : 'stories'} found: ${HINT}`);
process.exit(count > 0 ? 1 : 0);
