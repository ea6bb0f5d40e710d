import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRemovalRepair, saveRemovalRepair } from '../../../src/node/topology/removal-repair-file.js';

describe("removal-repair.json (the removal repair step's progress)", () => {
  let dir = '';
  afterEach(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
    dir = '';
  });

  it("reads back what was saved for the same move; another move's, or none, is nothing done; undefined deletes it", async () => {
    dir = await mkdtemp(join(tmpdir(), 'removal-repair-'));
    expect(await loadRemovalRepair(dir, 'remove-n4-aa')).toEqual({ move: 'remove-n4-aa', repaired: [], skipped: [] });
    const p = {
      move: 'remove-n4-aa',
      repaired: ['0000000000000001-0000000000000002'],
      skipped: ['0000000000000002-0000000000000003/n1'],
    };
    await saveRemovalRepair(dir, p);
    expect(await loadRemovalRepair(dir, 'remove-n4-aa')).toEqual(p);
    expect(await loadRemovalRepair(dir, 'remove-n4-bb')).toEqual({ move: 'remove-n4-bb', repaired: [], skipped: [] });
    await saveRemovalRepair(dir, undefined);
    await expect(readFile(join(dir, 'removal-repair.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    await saveRemovalRepair(dir, undefined); // already gone: fine
  });

  it('a damaged file is an error that says what to do', async () => {
    dir = await mkdtemp(join(tmpdir(), 'removal-repair-'));
    for (const text of ['{', '{"move":"m","repaired":[1],"skipped":[]}', 'null', '{"move":"m"}']) {
      await writeFile(join(dir, 'removal-repair.json'), text);
      await expect(loadRemovalRepair(dir, 'm')).rejects.toThrow(
        /removal-repair\.json is damaged: delete it \(the removal's repair step then starts over, which is safe\) and restart/,
      );
    }
  });
});
