/**
 * Who issues dots (src/storage/actors.ts): a dot is never issued twice, even when the
 * newest log of the database is cut short after a crash, rolling its metadata back to an
 * earlier clean mark and an earlier lease; a repaired database takes a new id; a clean
 * shutdown keeps the id and the epochs. The clean mark beside the database is a file, set
 * and cleared durably.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Actors, fileCleanMark, type CleanMark } from '../../../src/storage/actors.js';
import { MemoryEngine } from '../../../src/storage/index.js';
import { randomBytes } from 'node:crypto';

const dir = mkdtempSync(join(tmpdir(), 'rk-actors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A clean mark in memory. */
function memoryMark(): CleanMark & { on: boolean } {
  const m = {
    on: false,
    present: async () => m.on,
    clear: async () => void (m.on = false),
    set: async () => void (m.on = true),
  };
  return m;
}

/** The metadata the engine holds now, to put back later: what a log cut back to this point leaves. */
async function metadata(engine: MemoryEngine): Promise<Array<[Buffer, Buffer]>> {
  const it = engine.iterator(Buffer.from('m'), Buffer.from('n'));
  const out = await it.nextv(100);
  await it.close();
  return out;
}
async function rollBack(engine: MemoryEngine, to: Array<[Buffer, Buffer]>): Promise<void> {
  const now = await metadata(engine);
  await engine.write(
    [
      ...now.map(([key]) => ({ type: 'del' as const, key })),
      ...to.map(([key, value]) => ({ type: 'put' as const, key, value })),
    ],
    true,
  );
}

/** The actor a key new to the store is written under. */
const actorOf = (a: Actors): string => a.actor(a.epochFor(undefined));

describe('actors', () => {
  it('keep their id and epochs across a clean shutdown', async () => {
    const engine = new MemoryEngine();
    await engine.open();
    const mark = memoryMark();
    const first = await Actors.open(engine, randomBytes, { mark });
    await first.actors.markClean();
    expect(mark.on).toBe(true);
    const second = await Actors.open(engine, randomBytes, { mark });
    expect(second.uncleanShutdown).toBe(false);
    expect(second.actors.id).toBe(first.actors.id);
    expect(mark.on).toBe(false); // cleared at open: a crash from here on is unclean
  });

  it('never issue a dot twice when a crash is followed by a cut log that brings back the last clean mark and lease', async () => {
    const engine = new MemoryEngine();
    await engine.open();
    const mark = memoryMark();
    const first = await Actors.open(engine, randomBytes, { mark });
    await first.actors.markClean();
    const cleanState = await metadata(engine);
    // The next run issues dots under its actor, then crashes; the log that held its lease and the clean mark's removal is cut.
    const crashed = await Actors.open(engine, randomBytes, { mark });
    const used = actorOf(crashed.actors);
    await rollBack(engine, cleanState);
    const after = await Actors.open(engine, randomBytes, { mark });
    expect(after.uncleanShutdown).toBe(true);
    expect(after.actors.id).not.toBe(crashed.actors.id);
    expect(actorOf(after.actors)).not.toBe(used);
    // Without the mark outside the database, the rolled-back metadata would look clean and hand out that actor again.
    await rollBack(engine, cleanState);
    expect(actorOf((await Actors.open(engine, randomBytes)).actors)).toBe(used);
  });

  it('take a new id after an unclean shutdown and after a repair that lost writes', async () => {
    const engine = new MemoryEngine();
    await engine.open();
    const a = await Actors.open(engine, randomBytes);
    const b = await Actors.open(engine, randomBytes); // a never marked clean
    expect(b.uncleanShutdown).toBe(true);
    expect(b.actors.id).not.toBe(a.actors.id);
    await b.actors.markClean();
    const c = await Actors.open(engine, randomBytes, { lostWrites: true });
    expect(c.uncleanShutdown).toBe(false);
    expect(c.actors.id).not.toBe(b.actors.id);
  });

  it('retire every epoch issued so far on retireAll, durably: a key rolled back to an older version gets a fresh actor', async () => {
    const engine = new MemoryEngine();
    await engine.open();
    const mark = memoryMark();
    const { actors } = await Actors.open(engine, randomBytes, { mark });
    const owner = actors.epochFor(undefined); // a record written now keeps this owner epoch
    expect(actors.epochFor(owner)).toBe(owner);
    await actors.retireAll();
    expect(actors.epochFor(owner)).not.toBe(owner);
    expect(actors.epochFor(owner)).toBe(actors.epochFor(undefined));
    await actors.markClean();
    const again = await Actors.open(engine, randomBytes, { mark });
    expect(again.uncleanShutdown).toBe(false);
    expect(again.actors.epochFor(owner)).not.toBe(owner);
  });

  it('keep the clean mark as a file, set and cleared', async () => {
    const path = join(dir, 'RINGKV-CLEAN');
    const mark = fileCleanMark(path);
    expect(await mark.present()).toBe(false);
    await mark.set();
    expect(existsSync(path)).toBe(true);
    expect(await mark.present()).toBe(true);
    await mark.clear();
    await mark.clear();
    expect(await mark.present()).toBe(false);
  });
});
