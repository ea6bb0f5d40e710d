/**
 * Random records for property tests of the codec and of the store's batched merges:
 * versions of every record format (1: clock and siblings; 2: write ids, retired ids;
 * 3: expiries, write times), tombstones, clocks alone, counters and times large enough
 * to take multi-byte varints, with and without this node's bookkeeping (owner epoch,
 * deleted-at). Every record it yields is one decodeRecord accepts.
 *
 * Must not: build records by hand (encodeRecord writes them), or yield invalid versions.
 */
import fc from 'fast-check';
import type { StoredRecord } from '../src/kinds/versions/codec.js';
import type { Retired, Sibling, Versions } from '../src/kinds/versions/versions.js';

const bytesOf = (n: number): fc.Arbitrary<string> =>
  fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('latin1'));
/** Actors: a few fixed ones (so records of one key share them) and random ones. */
const actorArb = fc.oneof(fc.constantFrom(...['A', 'B', 'C', 'D'].map((c) => c.repeat(16))), bytesOf(16));
const idArb = fc.oneof(fc.constantFrom('id-00001', 'id-00002', 'id-00003'), bytesOf(8));
const counterArb = fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 2 ** 40 }));
const timeArb = fc.oneof(
  fc.integer({ min: 0, max: 300 }),
  fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
);

interface SiblingSeed {
  readonly actor: number;
  readonly below: number;
  readonly value: Uint8Array | null;
  readonly id: string | undefined;
  readonly expiresAt: number | undefined;
  readonly at: number | undefined;
}

const siblingSeed: fc.Arbitrary<SiblingSeed> = fc.record({
  actor: fc.nat(),
  below: fc.nat(),
  value: fc.option(fc.uint8Array({ maxLength: 24 }), { nil: null, freq: 4 }),
  id: fc.option(idArb, { nil: undefined, freq: 2 }),
  expiresAt: fc.option(timeArb, { nil: undefined, freq: 2 }),
  at: fc.option(timeArb, { nil: undefined, freq: 2 }),
});

/** Versions of every format: siblings' dots within the clock, canonical order, ids live or retired, never both. */
export const versionsArb: fc.Arbitrary<Versions> = fc
  .record({
    actors: fc.uniqueArray(actorArb, { minLength: 0, maxLength: 4 }),
    counters: fc.array(counterArb, { minLength: 4, maxLength: 4 }),
    seeds: fc.array(siblingSeed, { maxLength: 4 }),
    retired: fc.array(fc.record({ id: idArb, at: timeArb }), { maxLength: 3 }),
  })
  .map(({ actors, counters, seeds, retired }): Versions => {
    const sorted = [...actors].sort();
    const clock = new Map(sorted.map((a, i) => [a, counters[i]!]));
    const dots = new Set<string>();
    const siblings: Sibling[] = [];
    if (sorted.length > 0)
      for (const s of seeds) {
        const actor = sorted[s.actor % sorted.length]!;
        const counter = 1 + (s.below % clock.get(actor)!);
        if (dots.has(`${actor}/${counter}`)) continue;
        dots.add(`${actor}/${counter}`);
        const sib: {
          actor: string;
          counter: number;
          value: Buffer | null;
          id?: string;
          expiresAt?: number;
          at?: number;
        } = { actor, counter, value: s.value === null ? null : Buffer.from(s.value) };
        if (s.id !== undefined) sib.id = s.id;
        if (s.expiresAt !== undefined && s.value !== null) sib.expiresAt = s.expiresAt;
        if (s.at !== undefined) sib.at = s.at;
        siblings.push(sib);
      }
    siblings.sort((a, b) => (a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : a.counter - b.counter));
    const live = new Set(siblings.flatMap((s) => (s.id === undefined ? [] : [s.id])));
    const byId = new Map<string, Retired>();
    for (const r of retired) if (!live.has(r.id)) byId.set(r.id, r);
    const ret = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return ret.length === 0 ? { clock, siblings } : { clock, siblings, retired: ret };
  });

/** A stored record: random versions, with or without bookkeeping. */
export const recordArb: fc.Arbitrary<StoredRecord> = fc.record({
  versions: versionsArb,
  ownerEpoch: fc.option(fc.nat(1000), { nil: undefined }),
  deletedAt: fc.option(timeArb, { nil: undefined }),
});
