#!/usr/bin/env node
/**
 * Function length, held for src/: a function (declaration, method, constructor, accessor,
 * arrow or expression) may run to MAX lines, counted from its first line to its last. A
 * longer one passes only when a comment just above it says why, starting `Long:`; or, for
 * the functions longer than that when the rule came, up to the length scripts/long-functions.json
 * records for it (a ratchet: such a function may shrink, never grow, and leaves the list once
 * it fits). `--update` rewrites the list from the code, dropping what no longer needs it.
 *
 * Usage: node scripts/function-length.mjs [--update]
 */
import { readFileSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const MAX = 80;
const ROOT = new URL('..', import.meta.url).pathname;
const LIST = join(ROOT, 'scripts/long-functions.json');

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : files(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** A readable name for a function node: Class.method, the variable or property it is assigned to, or `(anonymous)`. */
function nameOf(node) {
  const own =
    node.name && ts.isIdentifier(node.name)
      ? node.name.text
      : node.name && ts.isPrivateIdentifier(node.name)
        ? node.name.text
        : undefined;
  const p = node.parent;
  const holder =
    ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)
      ? p.name.getText()
      : undefined;
  const base = ts.isConstructorDeclaration(node) ? 'constructor' : (own ?? holder ?? '(anonymous)');
  let cls = node.parent;
  while (cls && !ts.isClassLike(cls)) cls = cls.parent;
  return cls?.name ? `${cls.name.text}.${base}` : base;
}

function measure(path) {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      if (lines > MAX) {
        const comments =
          ts.getLeadingCommentRanges(
            text,
            (ts.isVariableDeclaration(node.parent) ? node.parent.parent.parent : node).getFullStart(),
          ) ?? [];
        const why = comments.some((c) =>
          /^\/[/*]\*?\s*Long:/m.test(text.slice(c.pos, c.end).replace(/^\s*\*\s*/gm, '')),
        );
        if (!why) found.push({ file: relative(ROOT, path), name: nameOf(node), line: first + 1, lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const found = files(join(ROOT, 'src')).flatMap(measure);
const key = (f) => `${f.file} ${f.name}`;

if (process.argv.includes('--update')) {
  const list = Object.fromEntries(found.map((f) => [key(f), f.lines]).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(LIST, JSON.stringify(list, null, 2) + '\n');
  console.log(`${found.length} functions over ${MAX} lines recorded in ${relative(ROOT, LIST)}`);
  process.exit(0);
}

const allowed = JSON.parse(readFileSync(LIST, 'utf8'));
const bad = found.filter((f) => !(key(f) in allowed) || f.lines > allowed[key(f)]);
for (const f of bad) {
  const was = allowed[key(f)];
  console.error(
    `${f.file}:${f.line} ${f.name} is ${f.lines} lines` +
      (was === undefined
        ? `, over ${MAX}: split it, or say why above it in a comment starting "Long:"`
        : `, longer than the ${was} it was allowed: shorten it`),
  );
}
const stale = Object.keys(allowed).filter((k) => !found.some((f) => key(f) === k && f.lines === allowed[k]));
if (stale.length > 0 && bad.length === 0)
  console.log(
    `${stale.length} entries of ${relative(ROOT, LIST)} are now shorter or gone: run node scripts/function-length.mjs --update`,
  );
process.exit(bad.length > 0 ? 1 : 0);
