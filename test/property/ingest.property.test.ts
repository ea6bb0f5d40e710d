/**
 * Store.ingest (range streaming's batched merge, which copies the records of keys this
 * node does not hold without decoding them) against Store.mergeMany (which decodes and
 * merges every record), on random batches — records of every format, tombstones, clocks
 * alone, expiries, write ids, last-writer-wins keys, a key given twice, a corrupt record,
 * and issue 30's typed records: counters (format 4, which the skim leaves to the decoder),
 * a counter sent for a key of versions (KV_WRONG_TYPE both ways), set elements' sub-keys —
 * into stores holding random subsets of the keys:
 *
 * 1. the two leave byte-identical databases (records, tombstone and expiry index entries,
 *    and everything else), and fail alike (the same error code for the same batch);
 * 2. with puts racing the batch (the engine's reads and writes delayed at random, so the
 *    puts land before, between and after the batch's steps), no write is lost: each put's
 *    value is live afterwards, and every version the batch brought is held (or superseded).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedKey, subKey } from '../../src/buckets/index.js';
import { decodeRecord, encodeRecord } from '../../src/kinds/versions/codec.js';
import { EMPTY_COUNTER, increment } from '../../src/kinds/counter/counter.js';
import { encodeCounter } from '../../src/kinds/counter/counter-record.js';
import { KvError, MemoryEngine, Store } from '../../src/storage/index.js';
import type { Engine } from '../../src/storage/index.js';
import type { Versions } from '../../src/kinds/versions/versions.js';
import { recordArb } from '../../testkit/record-arb.js';

const NOW = 1_800_000_000_000;
const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'l5', 'l6', 'l7']; // l…: last-writer-wins
const policyOf = (key: Buffer): 'lww' | 'siblings' => (key[0] === 0x6c ? 'lww' : 'siblings');

/** The same store id every time, so two stores issue the same dots. */
const fixedBytes = (n: number): Buffer => Buffer.alloc(n, 7);

/** Counter keys, and two set elements' sub-keys (records of versions, placed by their parent). */
const COUNTERS = ['c8', 'c9'];
const parent = storedKey('s', Buffer.from('p'));
const SUBKEYS = [subKey(parent, { element: 'x' }), subKey(parent, { element: 'y' })];

interface Entry {
  readonly key: string | Buffer;
  readonly record: Buffer;
}

/** A counter record: increments (some with write ids, some repeated at another actor) at three actors, with or without an owner epoch. */
const counterArb = fc
  .record({
    ops: fc.array(
      fc.record({
        actor: fc.constantFrom('A', 'B', 'C'),
        amount: fc.integer({ min: -5, max: 5 }).filter((a) => a !== 0),
        id: fc.option(fc.constantFrom('id-00001', 'id-00002', 'id-00003'), { nil: undefined }),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    epoch: fc.option(fc.nat(300), { nil: undefined }),
  })
  .map(({ ops, epoch }) =>
    encodeCounter(
      ops.reduce((s, o) => increment(s, o.actor.repeat(16), o.amount, o.id).state, EMPTY_COUNTER),
      epoch,
    ),
  );

/** An entry: versions for a plain or sub-key, a counter for a counter key; `typed` adds those, and now and then a counter sent to a key of versions. */
const entryArb = (corrupt: boolean, typed = false): fc.Arbitrary<Entry> =>
  fc
    .oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          key: fc.constantFrom<string | Buffer>(...KEYS),
          record: recordArb.map((r) => encodeRecord(r)),
        }),
      },
      {
        weight: typed ? 2 : 0,
        arbitrary: fc.record({
          key: fc.constantFrom<string | Buffer>(...SUBKEYS),
          record: recordArb.map((r) => encodeRecord(r)),
        }),
      },
      {
        weight: typed ? 2 : 0,
        arbitrary: fc.record({ key: fc.constantFrom<string | Buffer>(...COUNTERS), record: counterArb }),
      },
      {
        weight: typed ? 1 : 0,
        arbitrary: fc.record({ key: fc.constantFrom<string | Buffer>(...KEYS, ...SUBKEYS), record: counterArb }),
      },
    )
    .chain((e) =>
      fc.nat().map((hit) => {
        const record = Buffer.from(e.record);
        if (corrupt) record[hit % (record.length - 4)]! ^= 0x5a; // the checksum no longer matches
        return { key: e.key, record };
      }),
    );

const batchArb = fc
  .record({
    good: fc.array(entryArb(false, true), { minLength: 1, maxLength: 12 }),
    bad: fc.option(entryArb(true, true), { nil: undefined, freq: 5 }),
    at: fc.nat(),
  })
  .map(({ good, bad, at }) =>
    bad === undefined ? good : [...good.slice(0, at % (good.length + 1)), bad, ...good.slice(at % (good.length + 1))],
  );

/** A store on its own memory engine; `delays` (if given) hold each read and write back a few turns of the event loop. */
async function open(delays?: () => number, randomBytes = fixedBytes): Promise<{ store: Store; engine: MemoryEngine }> {
  const engine = new MemoryEngine();
  const wait = async (): Promise<void> => {
    for (let i = delays?.() ?? 0; i > 0; i--) await new Promise((r) => setImmediate(r));
  };
  const wrapped: Engine =
    delays === undefined
      ? engine
      : {
          kind: engine.kind,
          open: () => engine.open(),
          close: () => engine.close(),
          get: async (k) => (await wait(), engine.get(k)),
          getMany: async (k) => (await wait(), engine.getMany(k)),
          write: async (ops, sync) => (await wait(), engine.write(ops, sync)),
          iterator: (gte, lt) => engine.iterator(gte, lt),
          keyIterator: (gte, lt) => engine.keyIterator(gte, lt),
          approximateSize: (gte, lt) => engine.approximateSize(gte, lt),
        };
  const store = await Store.open({ engine: wrapped, now: () => NOW, randomBytes, policyOf });
  await store.keyFilter.settled;
  return { store, engine };
}

/** Every entry of the database, for a byte comparison. */
async function dump(engine: MemoryEngine): Promise<string[]> {
  const it = engine.iterator(Buffer.alloc(0), Buffer.alloc(64, 0xff));
  const out: string[] = [];
  for (let chunk = await it.nextv(1000); chunk.length > 0; chunk = await it.nextv(1000))
    for (const [k, v] of chunk) out.push(`${k.toString('hex')}=${v.toString('hex')}`);
  await it.close();
  return out;
}

/** `held` has seen all of `incoming`: its clock covers incoming's, and each incoming sibling is held or superseded (its dot covered). */
function holds(held: Versions, incoming: Versions): boolean {
  for (const [actor, n] of incoming.clock) if ((held.clock.get(actor) ?? 0) < n) return false;
  return incoming.siblings.every((s) => (held.clock.get(s.actor) ?? 0) >= s.counter);
}

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof KvError) return e.code;
    throw e;
  }
}

describe('Store.ingest ≡ Store.mergeMany', () => {
  it('leaves the same bytes in the database, and fails alike, whatever the store held', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entryArb(false, true), { maxLength: 8 }), batchArb, async (before, batch) => {
        const a = await open(),
          b = await open();
        try {
          // The same prior state in both (some keys held, some not): merged one by one.
          for (const e of before) {
            const x = await outcome(a.store.merge(e.key, e.record));
            expect(await outcome(b.store.merge(e.key, e.record))).toBe(x);
          }
          const viaMerge = await outcome(a.store.mergeMany(batch));
          const viaIngest = await outcome(b.store.ingest(batch));
          expect(viaIngest).toBe(viaMerge);
          expect(await dump(b.engine)).toEqual(await dump(a.engine));
        } finally {
          await a.store.close();
          await b.store.close();
        }
      }),
      { numRuns: 300, seed: 29, endOnFailure: true },
    );
  });

  it('copies the keys it does not hold (no decode), merges those it does', async () => {
    const { store } = await open();
    try {
      const records = await Promise.all(
        ['x1', 'x2', 'x3'].map(async (k) => ({ key: k, record: (await store.put(k, Buffer.from(k))).record })),
      );
      const other = await open(undefined, (n) => Buffer.alloc(n, 9)); // another store id: its own dots
      try {
        await other.store.put('x1', Buffer.from('held'));
        expect(await other.store.ingest(records)).toEqual({ copied: 2, merged: 1 });
        expect(await other.store.ingest(records)).toEqual({ copied: 0, merged: 3 }); // all held now
        expect((await other.store.get('x1')).values.map(String).sort()).toEqual(['held', 'x1']);
      } finally {
        await other.store.close();
      }
    } finally {
      await store.close();
    }
  });

  it('loses no write when puts race the batch', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(entryArb(false), { minLength: 1, maxLength: 10 }),
        fc.array(fc.record({ key: fc.constantFrom(...KEYS), lead: fc.nat(6) }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(3), { minLength: 1, maxLength: 32 }),
        async (batch, puts, delays) => {
          let d = 0;
          const { store } = await open(() => delays[d++ % delays.length]!);
          try {
            const done: number[] = []; // puts in the order they were applied (one key's puts take its lock in turn)
            const racing = puts.map(async (p, i) => {
              for (let j = 0; j < p.lead; j++) await new Promise((r) => setImmediate(r));
              await store.put(p.key, Buffer.from(`put-${i}`));
              done.push(i);
            });
            await Promise.all([store.ingest(batch), ...racing]);
            for (const [i, p] of puts.entries()) {
              const held = decodeRecord((await store.getRecord(p.key))!).versions;
              // lww keys keep one sibling, the last written: a put there survives only if no later put to the key came after it
              // and the batch brought no version of it (which may carry a later write time: it wins, as last-writer-wins says).
              const last = done.findLast((j) => puts[j]!.key === p.key) === i && !batch.some((e) => e.key === p.key);
              if (p.key.startsWith('k') || last)
                expect(
                  held.siblings.some((s) => s.value !== null && Buffer.from(s.value).toString() === `put-${i}`),
                ).toBe(true);
            }
            for (const e of batch) {
              if (String(e.key).startsWith('l')) continue; // lww: the batch's versions may lose to a later write
              const held = decodeRecord((await store.getRecord(e.key))!).versions;
              expect(holds(held, decodeRecord(e.record).versions)).toBe(true); // nothing the batch brought is missing
            }
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 150, seed: 29, endOnFailure: true },
    );
  });
});
