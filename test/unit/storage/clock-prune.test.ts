/**
 * Bounded clocks through the store (docs/causality.md#bounded-clocks): the prune index,
 * the pass and its gate (grace, repair confirmation), pruning on merge, dots after a
 * prune, and the hint age that closes the stale-copy path within the grace.
 */
import { describe, expect, it } from 'vitest';
import { MemoryEngine, Store } from '../../../src/storage/index.js';
import { decodeContext, decodeRecord, encodeRecord, versionBytes } from '../../../src/kinds/versions/codec.js';
import { PRUNES, dataKey, hintKey, tokenHalves } from '../../../src/storage/keys.js';
import { tokenOf } from '../../../src/ring/index.js';

const DAY = 24 * 3600 * 1000;
const GRACE = 10 * DAY;
const v = (text: string) => Buffer.from(text);
const texts = (values: Buffer[]) => values.map(String).sort();

function clock(start = Date.UTC(2026, 11, 1)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

async function pruneEntries(engine: MemoryEngine): Promise<number> {
  let n = 0;
  const it = engine.iterator(PRUNES.gte, PRUNES.lt);
  try {
    for (let b = await it.nextv(100); b.length > 0; b = await it.nextv(100)) n += b.length;
  } finally {
    await it.close();
  }
  return n;
}

/**
 * Five writers take turns on one key, each reading the last one's value: the key's clock
 * gains an entry per writer while one sibling (the last write) lives. `into` gets them all.
 */
async function fiveWriters(now: () => number, into: Store): Promise<Store[]> {
  const writers = await Promise.all([1, 2, 3, 4, 5].map(() => Store.open({ engine: new MemoryEngine(), now })));
  let record: Buffer | undefined;
  for (const [i, w] of writers.entries()) {
    if (record) await w.merge('k', record);
    record = (await w.put('k', v(`w${i}`), (await w.get('k')).context)).record;
  }
  await into.merge('k', record!);
  return writers;
}

describe('clock pruning in the store', () => {
  it("prunes a stable key to its siblings' actors once past the grace and confirmed, and not before", async () => {
    const c = clock();
    const engine = new MemoryEngine();
    const s = await Store.open({ engine, now: c.now, tombstoneGraceMs: GRACE });
    const writers = await fiveWriters(c.now, s);
    const before = decodeRecord((await s.getRecord('k'))!).versions;
    expect(before.clock.size).toBe(5);
    expect(await pruneEntries(engine)).toBe(1);
    const token = tokenOf('k');
    // Within the grace: nothing.
    c.advance(GRACE - 1);
    expect(await s.pruneClocks({}, () => c.now())).toEqual({ pruned: 0, unconfirmed: 0, stale: 0 });
    c.advance(2);
    // Past it, but no repair confirmed the range since the key changed: wait.
    const changed = c.now() - GRACE - 1;
    expect(await s.pruneClocks({}, (t) => (t === token ? changed : c.now()))).toEqual({
      pruned: 0,
      unconfirmed: 1,
      stale: 0,
    });
    expect(decodeRecord((await s.getRecord('k'))!).versions.clock.size).toBe(5);
    expect(await s.pruneClocks({}, () => c.now())).toEqual({ pruned: 1, unconfirmed: 0, stale: 0 });
    const after = decodeRecord((await s.getRecord('k'))!).versions;
    expect([...after.clock.keys()]).toEqual([after.siblings[0]!.actor]);
    expect(texts((await s.get('k')).values)).toEqual(['w4']);
    expect(await pruneEntries(engine)).toBe(0);
    for (const x of [s, ...writers]) await x.close();
  });

  it('follows --clock-prune-grace-ms when it is set, and needs no repair gate when none is given', async () => {
    const c = clock();
    const s = await Store.open({
      engine: new MemoryEngine(),
      now: c.now,
      tombstoneGraceMs: GRACE,
      clockPruneGraceMs: DAY,
    });
    expect(s.settings.clockPruneGraceMs).toBe(DAY);
    const writers = await fiveWriters(c.now, s);
    c.advance(DAY + 1);
    expect((await s.pruneClocks()).pruned).toBe(1);
    for (const x of [s, ...writers]) await x.close();
    await expect(Store.open({ engine: new MemoryEngine(), clockPruneGraceMs: -1 })).rejects.toMatchObject({
      code: 'KV_BAD_OPTION',
    });
  });

  it('converged replicas prune to the same bytes; an unpruned copy merged in writes nothing; old contexts supersede what they saw', async () => {
    const c = clock();
    const [a, b] = await Promise.all(
      [0, 1].map(() => Store.open({ engine: new MemoryEngine(), now: c.now, tombstoneGraceMs: GRACE })),
    );
    const writers = await fiveWriters(c.now, a!);
    await b!.merge('k', (await a!.getRecord('k'))!);
    const oldContext = (await a!.get('k')).context;
    const unpruned = (await a!.getRecord('k'))!;
    c.advance(GRACE + 1);
    await a!.pruneClocks();
    await b!.pruneClocks();
    const [ra, rb] = [decodeRecord((await a!.getRecord('k'))!), decodeRecord((await b!.getRecord('k'))!)];
    expect(encodeRecord({ ...ra, ownerEpoch: undefined }).equals(encodeRecord({ ...rb, ownerEpoch: undefined }))).toBe(
      true,
    );
    // A replica that has not pruned yet sends its copy: taken as it is here, nothing written (no ping-pong).
    expect((await a!.merge('k', unpruned)).changed).toBe(false);
    expect((await a!.mergeMany([{ key: 'k', record: unpruned }]))[0]!.changed).toBe(false);
    // A write with a context read before the prune supersedes exactly what that read saw.
    const w = await a!.put('k', v('after'), oldContext);
    expect(texts((await a!.get('k')).values)).toEqual(['after']);
    expect(decodeContext(w.context, tokenHalves(Buffer.from('k'))[1]!).clock.size).toBeGreaterThan(1);
    // A concurrent write from another replica still survives the merge.
    const blind = await writers[0]!.put('k', v('concurrent'));
    await a!.merge('k', blind.record);
    expect(texts((await a!.get('k')).values)).toEqual(['after', 'concurrent']);
    for (const x of [a!, b!, ...writers]) await x.close();
  });

  it('a copy of a write issued twice under one request id, dropped for its retired id, converges in either order of arrival: its dot is not taken as pruned', async () => {
    const c = clock();
    const [p, q, r, x, y, z] = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(() => Store.open({ engine: new MemoryEngine(), now: c.now, tombstoneGraceMs: GRACE })),
    );
    // One put, retried through two coordinators: issued on p and on q under one request id.
    const requestId = v('request-1');
    const onP = await p!.put('k', v('a'), undefined, { requestId });
    const onQ = await q!.put('k', v('a'), undefined, { requestId });
    // r saw p's copy and deletes what it read: the id is retired there, q's dot unseen.
    await r!.merge('k', onP.record);
    const removed = await r!.delete('k', (await r!.get('k')).context);
    // x takes q's copy, then the delete (which drops it for its id); y the other way round.
    await x!.merge('k', onQ.record);
    await x!.merge('k', removed.record);
    await y!.merge('k', removed.record);
    await y!.merge('k', onQ.record);
    // z never sees q's copy, only x's record, which holds q's dot in its clock alone.
    await z!.merge('k', removed.record);
    // Repair trades the copies both ways: they end the same.
    await x!.merge('k', (await y!.getRecord('k'))!);
    await y!.merge('k', (await x!.getRecord('k'))!);
    await z!.merge('k', (await x!.getRecord('k'))!);
    const bytes = async (s: Store) =>
      encodeRecord({ ...decodeRecord((await s.getRecord('k'))!), ownerEpoch: undefined }).toString('hex');
    expect(await bytes(y!)).toBe(await bytes(x!));
    expect(await bytes(z!)).toBe(await bytes(x!));
    expect((await y!.get('k')).values).toEqual([]);
    for (const s of [p!, q!, r!, x!, y!, z!]) await s.close();
  });

  it('a key written here and pruned takes a fresh actor for its next write: no dot is reused', async () => {
    const c = clock();
    const s = await Store.open({ engine: new MemoryEngine(), now: c.now, tombstoneGraceMs: GRACE });
    const writers = await fiveWriters(c.now, s);
    // This store writes the key too, then another writer supersedes it: its own actor covers no sibling.
    const own = await s.put('k', v('mine'), (await s.get('k')).context);
    const ownActor = decodeRecord(own.record).versions.siblings.find((x) => String(x.value) === 'mine')!.actor;
    await writers[4]!.merge('k', own.record);
    await s.merge('k', (await writers[4]!.put('k', v('theirs'), (await writers[4]!.get('k')).context)).record);
    c.advance(GRACE + 1);
    expect((await s.pruneClocks()).pruned).toBe(1);
    expect(decodeRecord((await s.getRecord('k'))!).versions.clock.has(ownActor)).toBe(false);
    const next = decodeRecord((await s.put('k', v('again'), (await s.get('k')).context)).record).versions;
    const dot = next.siblings.find((x) => String(x.value) === 'again')!;
    expect(dot.actor).not.toBe(ownActor);
    // The other replicas still hold the old actor's entry: the new write is not taken for one they saw.
    await writers[4]!.merge('k', (await s.getRecord('k'))!);
    expect(texts((await writers[4]!.get('k')).values)).toEqual(['again']);
    for (const x of [s, ...writers]) await x.close();
  });

  it('re-stamps a record changed by a path that did not index it, and drops entries of records gone', async () => {
    const c = clock();
    const engine = new MemoryEngine();
    const s = await Store.open({ engine, now: c.now, tombstoneGraceMs: GRACE });
    const writers = await fiveWriters(c.now, s);
    // Another record's bytes under the key (as a raw ingest would write them): the stamp no longer matches.
    const dk = dataKey(...tokenHalves(Buffer.from('k')), Buffer.from('k'));
    const rec = decodeRecord((await engine.get(dk))!);
    await engine.write([{ type: 'put', key: dk, value: encodeRecord({ ...rec, ownerEpoch: 7 }) }], false);
    c.advance(GRACE + 1);
    expect(await s.pruneClocks()).toEqual({ pruned: 0, unconfirmed: 0, stale: 1 });
    c.advance(GRACE + 1);
    expect((await s.pruneClocks()).pruned).toBe(1);
    // A range deleted after handoff leaves its entries: the next pass drops them.
    await s.merge('k', (await writers[4]!.put('k', v('x'), (await writers[4]!.get('k')).context)).record);
    await s.ranges.delete({ start: 0n, end: 0n });
    c.advance(GRACE + 1);
    await s.pruneClocks();
    expect(await pruneEntries(engine)).toBe(0);
    for (const x of [s, ...writers]) await x.close();
  });

  it('a key streamed in (ingest) with a prunable clock gets its prune index entry, so a joiner prunes it as its peers do', async () => {
    const c = clock();
    const from = await Store.open({ engine: new MemoryEngine(), now: c.now, tombstoneGraceMs: GRACE });
    const writers = await fiveWriters(c.now, from);
    const record = (await from.getRecord('k'))!;
    const engine = new MemoryEngine();
    const joiner = await Store.open({ engine, now: c.now, tombstoneGraceMs: GRACE });
    await joiner.ingest([{ key: 'k', record }]);
    expect(await pruneEntries(engine)).toBe(1);
    c.advance(GRACE + 1);
    expect((await joiner.pruneClocks()).pruned).toBe(1);
    expect(decodeRecord((await joiner.getRecord('k'))!).versions.clock.size).toBe(1);
    for (const x of [from, joiner, ...writers]) await x.close();
  });

  it('a copy holding no sibling (every one expired there) keeps its history here: a merge takes its entries, not as pruned ones', async () => {
    const c = clock();
    const s = await Store.open({ engine: new MemoryEngine(), now: c.now, tombstoneGraceMs: GRACE });
    await s.put('k', v('here'));
    const before = decodeRecord((await s.getRecord('k'))!).versions;
    const elsewhere = await Store.open({ engine: new MemoryEngine(), now: c.now });
    const first = await elsewhere.put('k', v('superseded'));
    await elsewhere.put('k', v('gone'), first.context, { expiresAt: c.now() + 1 }); // supersedes a write, so reclaiming it leaves the clock
    c.advance(2);
    await elsewhere.reclaimExpired();
    const clockAlone = decodeRecord((await elsewhere.getRecord('k'))!).versions;
    expect(clockAlone.siblings).toEqual([]);
    expect((await s.merge('k', (await elsewhere.getRecord('k'))!)).changed).toBe(true);
    const after = decodeRecord((await s.getRecord('k'))!).versions;
    expect(after.clock.size).toBe(before.clock.size + 1);
    expect(texts((await s.get('k')).values)).toEqual(['here']);
    for (const x of [s, elsewhere]) await x.close();
  });

  it('tells the clock size of every record written', async () => {
    const s = await Store.open({ engine: new MemoryEngine() });
    const seen: number[] = [];
    s.onClockEntries = (n) => seen.push(n);
    const w = await s.put('k', v('1'));
    await s.put('k', v('2'), w.context);
    expect(seen).toEqual([1, 1]);
    await s.close();
  });
});

describe('hint age', () => {
  async function listed(s: Store, target: string): Promise<string[]> {
    const out: string[] = [];
    for await (const batch of s.hints.list(target)) for (const h of batch) out.push(String(h.key));
    return out;
  }

  it('drops a hint older than the grace rather than delivering it; a younger one is listed', async () => {
    const c = clock();
    const src = await Store.open({ engine: new MemoryEngine(), now: c.now });
    const s = await Store.open({ engine: new MemoryEngine(), now: c.now, clockPruneGraceMs: DAY });
    await s.hints.add('n2', v('old'), (await src.put('old', v('1'))).record);
    c.advance(DAY / 2);
    await s.hints.add('n2', v('young'), (await src.put('young', v('2'))).record);
    c.advance(DAY / 2 + 1);
    expect(await listed(s, 'n2')).toEqual(['young']);
    expect(s.hints.stats()).toMatchObject({ count: 1, expired: 1 });
    await src.close();
    await s.close();
  });

  it("a merged hint keeps the time of its oldest part; a hint past the grace is replaced by the next write's", async () => {
    const c = clock();
    const src = await Store.open({ engine: new MemoryEngine(), now: c.now });
    const s = await Store.open({ engine: new MemoryEngine(), now: c.now, clockPruneGraceMs: DAY });
    const w1 = await src.put('k', v('1'));
    await s.hints.add('n2', v('k'), w1.record);
    c.advance(DAY / 2);
    await s.hints.add('n2', v('k'), (await src.put('k', v('2'))).record); // merged: still as old as the first
    c.advance(DAY / 2 + 1);
    expect(await listed(s, 'n2')).toEqual([]);
    await s.hints.add('n2', v('k'), w1.record);
    c.advance(DAY + 1);
    const other = await Store.open({ engine: new MemoryEngine(), now: c.now });
    const w3 = await other.put('k', v('3')); // concurrent with '1': merged with the old hint, both would be delivered
    await s.hints.add('n2', v('k'), w3.record); // the old hint is past the grace: only the new write is kept
    const target = await Store.open({ engine: new MemoryEngine(), now: c.now });
    for await (const batch of s.hints.list('n2')) for (const h of batch) await target.merge(h.key, h.record);
    expect(texts((await target.get('k')).values)).toEqual(['3']);
    for (const x of [src, other, s, target]) await x.close();
  });

  it('ages a hint stored by an earlier release (no time) from when the store opened', async () => {
    const c = clock();
    const engine = new MemoryEngine();
    const src = await Store.open({ engine: new MemoryEngine(), now: c.now });
    const record = encodeRecord({
      versions: decodeRecord((await src.put('k', v('1'))).record).versions,
      ownerEpoch: undefined,
      deletedAt: undefined,
    });
    const [hi, lo] = tokenHalves(Buffer.from('k'));
    await engine.open();
    await engine.write([{ type: 'put', key: hintKey('n2', hi, lo, Buffer.from('k')), value: record }], false);
    await engine.close();
    const s = await Store.open({ engine, now: c.now, clockPruneGraceMs: DAY });
    c.advance(DAY);
    expect(await listed(s, 'n2')).toEqual(['k']);
    c.advance(1);
    expect(await listed(s, 'n2')).toEqual([]);
    for (const x of [src, s]) await x.close();
  });
});

describe('clock pruning of last-writer-wins keys', () => {
  it('a pruned lww key takes an unpruned copy of itself as it is; a copy holding another sibling is merged whole', async () => {
    const c = clock();
    const open = () =>
      Store.open({ engine: new MemoryEngine(), now: c.now, tombstoneGraceMs: GRACE, policyOf: () => 'lww' });
    const [a, b] = [await open(), await open()];
    const writers = await fiveWriters(c.now, a);
    await b.merge('k', (await a.getRecord('k'))!);
    const unpruned = (await b.getRecord('k'))!;
    c.advance(GRACE + 1);
    expect((await a.pruneClocks()).pruned).toBe(1);
    expect((await a.merge('k', unpruned)).changed).toBe(false);
    c.advance(1);
    const later = await b.put('k', v('later')); // an lww write there: written at its clock, so it wins
    expect((await a.merge('k', later.record)).changed).toBe(true);
    expect(texts((await a.get('k')).values)).toEqual(['later']);
    for (const x of [a, b, ...writers]) await x.close();
  });

  it('a copy holding only the winner, with the dot of a write that lost by time in its clock, is merged whole where nothing was pruned: the replicas converge', async () => {
    const c = clock();
    const open = () =>
      Store.open({ engine: new MemoryEngine(), now: c.now, tombstoneGraceMs: GRACE, policyOf: () => 'lww' });
    const [a, b, loser] = [await open(), await open(), await open()];
    // Five lww writers in turn (a clock of five entries), the last write the winner, on both replicas.
    const writers = await Promise.all([1, 2, 3, 4, 5].map(() => open()));
    let record: Buffer | undefined;
    for (const [i, w] of writers.entries()) {
      if (record) await w.merge('k', record);
      record = (await w.put('k', v(`w${i}`), (await w.get('k')).context)).record;
    }
    for (const s of [a, b]) await s.merge('k', record!);
    // A concurrent write on a replica whose clock is behind: it loses by time, and only b ever sees it.
    c.advance(-60_000);
    const lost = await loser.put('k', v('earlier'));
    c.advance(60_000);
    await b.merge('k', lost.record);
    expect(texts((await b.get('k')).values)).toEqual(['w4']);
    // Repair trades the copies both ways: a takes the lost write's entry (a never pruned), and both hold the same versions.
    expect((await a.merge('k', (await b.getRecord('k'))!)).changed).toBe(true);
    expect((await b.merge('k', (await a.getRecord('k'))!)).changed).toBe(false);
    const [va, vb] = [versionBytes((await a.getRecord('k'))!), versionBytes((await b.getRecord('k'))!)];
    expect(va.toString('hex')).toBe(vb.toString('hex'));
    expect(texts((await a.get('k')).values)).toEqual(['w4']);
    for (const x of [a, b, loser, ...writers]) await x.close();
  });
});

describe('a copy whose clock holds a dot dropped for another reason than a prune', () => {
  it('a write issued twice under one request id, one copy dropped for its retired id, on a key of a long clock: the replicas converge', async () => {
    const c = clock();
    const [history, p, q, r, x, z] = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(() => Store.open({ engine: new MemoryEngine(), now: c.now, tombstoneGraceMs: GRACE })),
    );
    // Five writers first: every replica's clock of the key is longer than a prune would leave it.
    const writers = await fiveWriters(c.now, history!);
    const base = (await history!.getRecord('k'))!;
    for (const s of [p!, q!, r!, x!, z!]) await s.merge('k', base);
    // One put, retried through two coordinators: issued on p and on q under one request id.
    const requestId = v('request-1');
    const onP = await p!.put('k', v('a'), (await p!.get('k')).context, { requestId });
    const onQ = await q!.put('k', v('a'), (await q!.get('k')).context, { requestId });
    // r saw p's copy and deletes what it read: the id is retired there, q's dot unseen.
    await r!.merge('k', onP.record);
    const removed = await r!.delete('k', (await r!.get('k')).context);
    // x takes q's copy, then the delete (which drops it for its id): q's dot is in x's clock alone. z gets the delete only.
    await x!.merge('k', onQ.record);
    await x!.merge('k', removed.record);
    await z!.merge('k', removed.record);
    // Repair trades the copies both ways: they end the same.
    await z!.merge('k', (await x!.getRecord('k'))!);
    await x!.merge('k', (await z!.getRecord('k'))!);
    expect(versionBytes((await z!.getRecord('k'))!).toString('hex')).toBe(
      versionBytes((await x!.getRecord('k'))!).toString('hex'),
    );
    expect((await z!.get('k')).values).toEqual([]);
    for (const s of [history!, p!, q!, r!, x!, z!, ...writers]) await s.close();
  });
});
