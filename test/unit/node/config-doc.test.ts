/**
 * docs/node.md's table of settings says what src/node/settings.ts says: every setting has
 * a row (settings sharing a row, like "zone, rack", are listed in the same order in each
 * column), with its flag, its environment variable and its default, and no row names a
 * setting that does not exist. Adding, renaming or changing the default of a setting
 * without the doc fails here. (The meaning column is the doc's own.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ENV_NAMES,
  SETTINGS,
  SETTING_NAMES,
  flagOf,
  hasDefault,
  type SettingName,
} from '../../../src/node/settings.js';

const DOC = join(import.meta.dirname, '../../../docs/node.md');

interface Row {
  readonly line: number;
  readonly names: string[];
  readonly flags: string[];
  readonly envs: string[];
  readonly default: string;
}

/** The rows of the first table under "## Settings": its first four columns, each split at ", " and without backticks. */
function settingsRows(markdown: string): Row[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf('## Settings');
  if (start < 0) throw new Error('docs/node.md has no "## Settings" section');
  const rows: Row[] = [];
  let inTable = false;
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const l = lines[i]!;
    if (!l.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = l
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells[0] === 'setting (config key)' || /^-+$/.test(cells[0]!)) continue;
    const list = (c: string | undefined): string[] => (c ?? '').split(', ').map((s) => s.replace(/`/g, '').trim());
    rows.push({
      line: i + 1,
      names: list(cells[0]),
      flags: list(cells[1]),
      envs: list(cells[2]),
      default: (cells[3] ?? '').replace(/`/g, ''),
    });
  }
  return rows;
}

/** What the doc's default column must say: the default value, or what not setting it means. */
function documentedDefault(name: SettingName): string | undefined {
  return hasDefault(name) ? String(SETTINGS[name].default) : SETTINGS[name].unset?.replace(/`/g, '');
}

/** Every way the doc's table differs from the settings table, one line each. */
function docDrift(markdown: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const row of settingsRows(markdown)) {
    row.names.forEach((name, i) => {
      const at = `docs/node.md:${row.line} ${name}`;
      if (!Object.hasOwn(SETTINGS, name)) return problems.push(`${at}: no such setting in src/node/settings.ts`);
      const s = name as SettingName;
      if (seen.has(s)) problems.push(`${at}: a second row`);
      seen.add(s);
      if (row.flags[i] !== flagOf(s)) problems.push(`${at}: flag ${row.flags[i]}, the setting's is ${flagOf(s)}`);
      if (row.envs[i] !== ENV_NAMES[s])
        problems.push(`${at}: environment ${row.envs[i]}, the setting's is ${ENV_NAMES[s]}`);
      if (row.default !== documentedDefault(s))
        problems.push(`${at}: default "${row.default}", the setting's is "${documentedDefault(s)}"`);
    });
    if (row.flags.length !== row.names.length || row.envs.length !== row.names.length)
      problems.push(
        `docs/node.md:${row.line}: ${row.names.length} settings but ${row.flags.length} flags and ${row.envs.length} variables`,
      );
  }
  for (const name of SETTING_NAMES)
    if (!seen.has(name))
      problems.push(`docs/node.md: no row for setting ${name} (${flagOf(name)}, ${ENV_NAMES[name]})`);
  return problems;
}

describe("docs/node.md's table of settings", () => {
  const doc = readFileSync(DOC, 'utf8');

  it('has a row for every setting with its flag, environment variable and default', () => {
    expect(docDrift(doc)).toEqual([]);
    expect(
      settingsRows(doc)
        .flatMap((r) => r.names)
        .sort(),
    ).toEqual([...SETTING_NAMES].sort());
  });

  it('is found out when a setting is missing, renamed, or its flag, variable or default changed', () => {
    const row = (name: string): string => doc.split('\n').find((l) => l.startsWith(`| ${name} |`))!;
    const tokens = row('tokens');
    expect(docDrift(doc.replace(`${tokens}\n`, ''))).toEqual([
      'docs/node.md: no row for setting tokens (--tokens, RINGKV_TOKENS)',
    ]);
    expect(docDrift(doc.replace(tokens, tokens.replace('| 64 |', '| 128 |')))).toEqual([
      expect.stringMatching(/^docs\/node\.md:\d+ tokens: default "128", the setting's is "64"$/),
    ]);
    expect(docDrift(doc.replace(tokens, tokens.replace('`--tokens`', '`--vnodes`')))).toEqual([
      expect.stringMatching(/tokens: flag --vnodes, the setting's is --tokens$/),
    ]);
    expect(docDrift(doc.replace(tokens, tokens.replace('RINGKV_TOKENS', 'RINGKV_VNODES')))).toEqual([
      expect.stringMatching(/tokens: environment RINGKV_VNODES, the setting's is RINGKV_TOKENS$/),
    ]);
    expect(docDrift(doc.replace(tokens, tokens.replace('| tokens |', '| vnodes |')))).toEqual([
      expect.stringMatching(/vnodes: no such setting/),
      'docs/node.md: no row for setting tokens (--tokens, RINGKV_TOKENS)',
    ]);
    const rack = row('zone, rack');
    expect(docDrift(doc.replace(rack, rack.replace('`--zone`, `--rack`', '`--rack`, `--zone`')))).toHaveLength(2);
    const http = row('http');
    expect(docDrift(doc.replace(http, http.replace('| off |', '| none |')))).toEqual([
      expect.stringMatching(/http: default "none", the setting's is "off"$/),
    ]);
  });
});
