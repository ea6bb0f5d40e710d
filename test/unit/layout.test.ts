/**
 * The layout rules docs/architecture.md names that no import rule can hold: no two files
 * of src/ share a name (a newcomer who greps for `repair.ts` finds one file), and each
 * subsystem folder opens with its map.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'generated'
        ? []
        : files(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

describe('the layout of src/', () => {
  it("no two files share a name (index.ts, a folder's entry point, apart; generated wire types apart)", () => {
    const byName = new Map<string, string[]>();
    for (const f of files(SRC))
      if (basename(f) !== 'index.ts') byName.set(basename(f), [...(byName.get(basename(f)) ?? []), relative(SRC, f)]);
    expect([...byName.values()].filter((paths) => paths.length > 1)).toEqual([]);
  });

  it('each subsystem folder opens with a map of what it owns and where its other parts live', () => {
    for (const room of ['hints', 'streaming', 'repair', 'kinds'])
      expect(existsSync(join(SRC, room, 'README.md')), room).toBe(true);
  });
});
