/**
 * Expiry (docs/reads-and-writes.md#expiry): a value's expiry is stored with its sibling,
 * every read path leaves it out from then on by the reader's clock, the record format
 * carries it canonically, and the expiry index reclaims it without a scan of live data,
 * never letting a stale copy come back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_TOMBSTONE_GRACE_MS,
  MemoryEngine,
  Store,
  resolveReplies,
  type StoreOptions,
} from '../../../src/storage/index.js';
import { decodeRecord, encodeRecord } from '../../../src/kinds/versions/codec.js';
import { EXPIRY, TOMBSTONE } from '../../../src/storage/keys.js';
import { liveValues, merge, withoutExpired, type Versions } from '../../../src/kinds/versions/versions.js';
import { keysUnder } from './engines.js';

const T0 = 1_796_000_000_000;
let stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
});

/** A store on a clock the test moves (`clock.now`), and its engine to look at the indexes. */
async function open(
  o: Partial<StoreOptions> = {},
): Promise<{ store: Store; engine: MemoryEngine; clock: { now: number } }> {
  const clock = { now: T0 };
  const engine = new MemoryEngine();
  const store = await Store.open({ engine, now: () => clock.now, ...o });
  stores.push(store);
  return { store, engine, clock };
}

const v = (s: string): Buffer => Buffer.from(s);
const values = async (s: Store, key = 'k'): Promise<string[]> => (await s.get(key)).values.map(String).sort();

describe('the record format', () => {
  const A = 'a'.repeat(16),
    B = 'b'.repeat(16);
  const versions: Versions = {
    clock: new Map([
      [A, 2],
      [B, 1],
    ]),
    siblings: [
      { actor: A, counter: 2, value: v('x'), expiresAt: T0 + 5 },
      { actor: B, counter: 1, value: v('y') },
    ],
  };

  it('round-trips a sibling expiry; equal versions encode to equal bytes', () => {
    const bytes = encodeRecord({ versions, ownerEpoch: undefined, deletedAt: undefined });
    expect(bytes[0]).toBe(3);
    const back = decodeRecord(bytes).versions;
    expect(back.siblings.map((s) => s.expiresAt)).toEqual([T0 + 5, undefined]);
    expect(encodeRecord({ versions: back, ownerEpoch: undefined, deletedAt: undefined }).equals(bytes)).toBe(true);
  });

  it('versions without an expiry or write time keep the older formats (a record written by an earlier release reads as it was)', () => {
    const plain: Versions = {
      clock: versions.clock,
      siblings: versions.siblings.map(({ actor, counter, value }) => ({ actor, counter, value })),
    };
    expect(encodeRecord({ versions: plain, ownerEpoch: undefined, deletedAt: undefined })[0]).toBe(1);
  });

  it('refuses a tombstone with an expiry, and a version 3 record that has nothing of version 3', () => {
    const tomb: Versions = {
      clock: new Map([[A, 1]]),
      siblings: [{ actor: A, counter: 1, value: null, expiresAt: T0 }],
    };
    // The encoder writes what it is given; the decoder checks.
    const bytes = encodeRecord({ versions: tomb, ownerEpoch: undefined, deletedAt: undefined });
    expect(() => decodeRecord(bytes)).toThrow(/tombstone with an expiry/);
  });
});

describe('a value with an expiry', () => {
  it('is read until its expiry and never from then on; the store of a replica and a coordinator agree', async () => {
    const { store, clock } = await open();
    await store.put('k', v('x'), undefined, { expiresAt: T0 + 100 });
    clock.now = T0 + 99;
    expect(await values(store)).toEqual(['x']);
    expect(resolveReplies('k', [await store.getRecord('k')], { now: T0 + 99 }).values.map(String)).toEqual(['x']);
    clock.now = T0 + 100;
    const r = await store.get('k');
    expect(r.values).toEqual([]);
    expect(r.deleted).toBe(true);
    const resolved = resolveReplies('k', [await store.getRecord('k')], { now: T0 + 100 });
    expect(resolved).toMatchObject({ values: [], found: false });
  });

  it('is refused with KV_BAD_OPTION for an expiry that is not a time, and on a delete', async () => {
    const { store } = await open();
    for (const bad of [0, -5, 1.5, Number.NaN, 2 ** 60])
      await expect(store.put('k', v('x'), undefined, { expiresAt: bad })).rejects.toMatchObject({
        code: 'KV_BAD_OPTION',
        message: /expiresAt must be a time in ms/,
      });
    await expect(store.delete('k', undefined, { expiresAt: T0 + 1 })).rejects.toMatchObject({
      code: 'KV_BAD_OPTION',
      message: /a delete cannot expire/,
    });
  });

  it('siblings expire each on its own; the context of a read covers the expired ones, so a put with it supersedes them too', async () => {
    const { store, clock } = await open();
    await store.put('k', v('short'), undefined, { expiresAt: T0 + 10 });
    await store.put('k', v('long'), undefined, { expiresAt: T0 + 1000 });
    await store.put('k', v('forever'));
    clock.now = T0 + 10;
    expect(await values(store)).toEqual(['forever', 'long']);
    const { context, versions } = await store.get('k');
    expect(versions).toBe(3); // the expired one is held until reclaimed, not shown
    clock.now = T0 + 1000;
    expect(await values(store)).toEqual(['forever']);
    const w = await store.put('k', v('new'), context);
    expect(w.versions).toBe(1);
    expect(await values(store)).toEqual(['new']);
  });

  it('a delete of an expiring value works as any delete, and its tombstone does not expire', async () => {
    const { store, clock, engine } = await open();
    const { context } = await store.put('k', v('x'), undefined, { expiresAt: T0 + 10 });
    await store.delete('k', context);
    clock.now = T0 + 1_000_000;
    const r = await store.get('k');
    expect(r).toMatchObject({ values: [], deleted: true, versions: 1 });
    expect(await keysUnder(engine, EXPIRY)).toHaveLength(0); // the put's entry went with the value it indexed
    expect(await keysUnder(engine, TOMBSTONE)).toHaveLength(1);
  });

  it('a value written again without a TTL loses its expiry, and its index entry in the same batch', async () => {
    const { store, engine, clock } = await open();
    const { context } = await store.put('k', v('x'), undefined, { expiresAt: T0 + 10 });
    expect(await keysUnder(engine, EXPIRY)).toHaveLength(1);
    await store.put('k', v('y'), context);
    expect(await keysUnder(engine, EXPIRY)).toHaveLength(0);
    clock.now = T0 + 20;
    expect(await values(store)).toEqual(['y']);
  });
});

describe('reclamation (store.reclaimExpired)', () => {
  it('drops a record whose siblings all expired and that superseded nothing, and its index entry, and leaves the rest', async () => {
    const { store, engine, clock } = await open();
    await store.put('gone', v('x'), undefined, { expiresAt: T0 + 10 });
    await store.put('later', v('y'), undefined, { expiresAt: T0 + 50 });
    await store.put('kept', v('z'));
    clock.now = T0 + 10;
    expect(await store.reclaimExpired()).toEqual({ dropped: 1, rewritten: 0, stale: 0 });
    expect(await store.getRecord('gone')).toBeUndefined();
    expect(await store.getRecord('later')).toBeDefined();
    expect(await keysUnder(engine, EXPIRY)).toHaveLength(1);
    clock.now = T0 + 50;
    expect(await store.reclaimExpired()).toEqual({ dropped: 1, rewritten: 0, stale: 0 });
    expect(await keysUnder(engine, EXPIRY)).toHaveLength(0);
    expect(await values(store, 'kept')).toEqual(['z']);
    // A key dropped and written again gets a new dot, not a reused one.
    const again = await store.put('gone', v('w'));
    expect(again.versions).toBe(1);
  });

  it('keeps the clock of a record that superseded an older value: a stale copy of that value cannot come back', async () => {
    const [a, b] = [await open(), await open()];
    // b holds the old value only; a superseded it with an expiring one.
    const old = await a.store.put('k', v('old'));
    await b.store.merge('k', old.record);
    await a.store.put('k', v('new'), old.context, { expiresAt: T0 + 10 });
    a.clock.now = T0 + 10;
    expect(await a.store.reclaimExpired()).toEqual({ dropped: 0, rewritten: 1, stale: 0 });
    const after = decodeRecord((await a.store.getRecord('k'))!);
    expect(after.versions.siblings).toEqual([]);
    expect(after.deletedAt).toBe(T0 + 10); // a tombstone now, for the purge
    expect(await keysUnder(a.engine, TOMBSTONE)).toHaveLength(1);
    // The stale copy arrives (repair, a hint): it was seen and superseded here.
    const merged = await a.store.merge('k', (await b.store.getRecord('k'))!);
    expect(merged.changed).toBe(false);
    expect(await values(a.store)).toEqual([]);
    // And b, given a's record, drops its old value too.
    await b.store.merge('k', (await a.store.getRecord('k'))!);
    expect(await values(b.store)).toEqual([]);
    // The tombstone purge takes the clock once its grace has passed, as it takes a delete's.
    a.clock.now = T0 + 11 + DEFAULT_TOMBSTONE_GRACE_MS;
    expect(await a.store.purgeTombstones()).toEqual({ purged: 1, unconfirmed: 0 });
    expect(await a.store.getRecord('k')).toBeUndefined();
    expect(await keysUnder(a.engine, TOMBSTONE)).toHaveLength(0);
  });

  it('an index entry whose record changed or went since is stale and goes', async () => {
    const { store, engine, clock } = await open();
    await store.put('k', v('x'), undefined, { expiresAt: T0 + 10 });
    await store.ranges.delete({ start: 0n, end: 0n });
    expect(await keysUnder(engine, EXPIRY)).toHaveLength(0); // the range delete takes its entries with it
    await store.put('q', v('x'), undefined, { expiresAt: T0 + 10 });
    const [entry] = await keysUnder(engine, EXPIRY);
    await engine.write([{ type: 'del', key: Buffer.concat([Buffer.from([0x64]), entry!.subarray(9)]) }], false);
    clock.now = T0 + 10;
    expect(await store.reclaimExpired()).toEqual({ dropped: 0, rewritten: 0, stale: 1 });
    expect(await keysUnder(engine, EXPIRY)).toHaveLength(0);
  });

  it('reads nothing but the index: live data is not scanned', async () => {
    const { store, engine, clock } = await open();
    for (let i = 0; i < 50; i++) await store.put(`live${i}`, v('x'));
    await store.put('k', v('x'), undefined, { expiresAt: T0 + 10 });
    let dataRead = 0;
    const iterator = engine.iterator.bind(engine);
    engine.iterator = (gte, lt) => {
      if (gte[0] === 0x64) dataRead++;
      return iterator(gte, lt);
    };
    clock.now = T0 + 10;
    expect((await store.reclaimExpired()).dropped).toBe(1);
    expect(dataRead).toBe(0);
    await store.ranges.stats({ start: 0n, end: 0n }); // a scan of live data, which the count sees
    expect(dataRead).toBeGreaterThan(0);
  });
});

describe('range operations and hints skip what may be dropped', () => {
  it('a stream does not send a reclaimable record, and a replica that reclaimed it hashes equal to one that has not', async () => {
    const [a, b] = [await open(), await open()];
    const w = await a.store.put('k', v('x'), undefined, { expiresAt: T0 + 10 });
    await a.store.put('other', v('y'));
    await b.store.merge('other', (await a.store.getRecord('other'))!);
    await b.store.merge('k', w.record);
    const whole = { start: 0n, end: 0n };
    expect((await a.store.ranges.hash(whole)).hash).toBe((await b.store.ranges.hash(whole)).hash);
    a.clock.now = b.clock.now = T0 + 10;
    await b.store.reclaimExpired();
    expect(await b.store.getRecord('k')).toBeUndefined();
    expect((await a.store.ranges.hash(whole)).hash).toBe((await b.store.ranges.hash(whole)).hash);
    const sent: string[] = [];
    for await (const batch of a.store.ranges.scan(whole)) sent.push(...batch.entries.map((e) => String(e.key)));
    expect(sent).toEqual(['other']);
    const [ta, tb] = [await a.store.ranges.tree(whole, 2), await b.store.ranges.tree(whole, 2)];
    expect(ta.digest(0, 0)).toBe(tb.digest(0, 0));
    expect(ta.digest(0, 0)).toBe((await a.store.ranges.hash(whole)).hash);
    // Not because the trees ignore the key: a replica that still shows it differs.
    b.clock.now = T0;
    await b.store.merge('k', w.record);
    expect((await b.store.ranges.tree(whole, 2)).digest(0, 0)).not.toBe(tb.digest(0, 0));
  });

  it('a hint that holds only expired versions is dropped, not delivered', async () => {
    const { store, clock } = await open();
    const w = await store.put('k', v('x'), undefined, { expiresAt: T0 + 10 });
    const l = await store.put('l', v('y'));
    await store.hints.add('n2', 'k', w.record);
    await store.hints.add('n2', 'l', l.record);
    clock.now = T0 + 10;
    const listed: string[] = [];
    for await (const batch of store.hints.list('n2')) listed.push(...batch.map((h) => String(h.key)));
    expect(listed).toEqual(['l']);
    expect(store.hints.stats().count).toBe(1);
  });
});

describe('withoutExpired', () => {
  const A = 'a'.repeat(16);
  it('retires the write ids of what it takes out, so a late copy of the write is known', () => {
    const v0: Versions = {
      clock: new Map([[A, 2]]),
      siblings: [{ actor: A, counter: 2, value: v('x'), id: 'i'.repeat(8), expiresAt: T0 }],
    };
    const after = withoutExpired(v0, T0 + 7);
    expect(after).not.toBe('drop');
    // At its expiry, whenever it is reclaimed: replicas reclaiming the same versions agree to the byte.
    expect((after as Versions).retired).toEqual([{ id: 'i'.repeat(8), at: T0 }]);
    expect(withoutExpired(v0, T0 + 99)).toEqual(after);
    // And merging the expired sibling back leaves it out: its dot is covered, its id retired.
    expect(merge(after as Versions, v0).siblings).toEqual([]);
    expect(liveValues(v0, T0 - 1).map(String)).toEqual(['x']);
  });
});
