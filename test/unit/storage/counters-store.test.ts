/**
 * The store's counters (issue 30): `counterUpdate` as issuer, the format dispatch of its
 * merges (a counter joins a counter; a counter met by versions, or the reverse, is
 * KV_WRONG_TYPE), the indexes a counter stays out of, hints of counter deltas, range
 * operations over format 4, and resolveCounterReplies. The algebra is counter.test.ts's;
 * the store-level property (three stores, deltas, hints, retries) is
 * test/property/counter-store.property.test.ts's.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { storedKey } from '../../../src/buckets/index.js';
import {
  KvError,
  MemoryEngine,
  Store,
  recordDigest,
  resolveCounterReplies,
  resolveReplies,
} from '../../../src/storage/index.js';
import type { Engine, StoreOptions } from '../../../src/storage/index.js';
import { increment, value, EMPTY_COUNTER } from '../../../src/kinds/counter/counter.js';
import { decodeCounter, decodeCounterDelta, encodeCounter } from '../../../src/kinds/counter/counter-record.js';
import { versionBytes } from '../../../src/kinds/versions/codec.js';
import { dataKey, tokenHalves } from '../../../src/storage/keys.js';
import { ENGINE_KINDS, keysUnder, wrapEngine } from './engines.js';

const DAY = 24 * 3600 * 1000;
const id = (n: number) => Buffer.from(`request-${n}`);
const A = 'A'.repeat(16),
  B = 'B'.repeat(16);

/** Expect a promise to reject with a KvError of this code (and message); return the error. */
async function rejects(p: Promise<unknown>, code: string, message?: RegExp): Promise<KvError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, `expected ${code}`).toBeInstanceOf(KvError);
  expect((e as KvError).code).toBe(code);
  if (message) expect((e as KvError).message).toMatch(message);
  return e as KvError;
}

for (const makeKind of ENGINE_KINDS) {
  const kind = makeKind();
  describe(`counters on ${kind.name}`, () => {
    afterAll(() => kind.cleanup());
    const open = (o: Omit<StoreOptions, 'engine' | 'path'> = {}, engine: Engine = kind.make()) =>
      Store.open({ engine, ...o });

    it('increments and decrements as issuer: a format 4 record with its owner epoch, a small delta, the value', async () => {
      const s = await open();
      const one = await s.counterUpdate('c', 5);
      const two = await s.counterUpdate('c', -2);
      expect([one.value, two.value, two.duplicate]).toEqual([5n, 3n, false]);
      expect(two.record[0]).toBe(4);
      const held = decodeCounter(two.record);
      expect(held.ownerEpoch).toBeDefined();
      expect(held.state.entries).toEqual([expect.objectContaining({ floor: 2, p: 5, n: 2 })]);
      // The delta is the issuer's new entry alone, after its floor before: joined into the state before it, the state after.
      const delta = decodeCounterDelta(two.delta);
      expect(delta.base).toEqual({ actor: held.state.entries[0]!.actor, floor: 1 });
      expect(delta.state.entries).toEqual(held.state.entries);
      expect((await s.getRecord('c'))!.equals(two.record)).toBe(true);
      await s.close();
    });

    it('counts a request sent twice once, answering the duplicate with a delta that brings the increment', async () => {
      const s = await open(),
        other = await open();
      const first = await s.counterUpdate('c', 7, { requestId: id(1) });
      const again = await s.counterUpdate('c', 7, { requestId: id(1) });
      expect(again).toMatchObject({ duplicate: true, value: 7n });
      expect(again.record.equals(first.record)).toBe(true);
      expect(s.writeStats.duplicates).toBe(1);
      // A second coordinator finishing the replication a failed first one began: the duplicate's delta is enough.
      await other.merge('c', again.delta);
      expect(value(decodeCounter((await other.getRecord('c'))!).state)).toBe(7n);
      // The same request id with another amount is another increment.
      expect((await s.counterUpdate('c', 1, { requestId: id(1) })).value).toBe(8n);
      await s.close();
      await other.close();
    });

    it('voids an increment that two issuers each applied, once their deltas meet', async () => {
      const a = await open(),
        b = await open();
      const da = await a.counterUpdate('c', 4, { requestId: id(9) });
      const db = await b.counterUpdate('c', 4, { requestId: id(9) });
      await a.merge('c', db.delta);
      await b.merge('c', da.delta);
      const ra = (await a.getRecord('c'))!,
        rb = (await b.getRecord('c'))!;
      expect(value(decodeCounter(ra).state)).toBe(4n);
      expect(versionBytes(ra).equals(versionBytes(rb))).toBe(true);
      await a.close();
      await b.close();
    });

    it('refuses bad increments before writing anything, each with its code', async () => {
      const s = await open();
      for (const amount of [0, 1.5, Number.NaN, 2 ** 53])
        await rejects(s.counterUpdate('c', amount), 'KV_BAD_AMOUNT', /nonzero integer/);
      await rejects(s.counterUpdate('c', 1, { requestId: Buffer.alloc(0) }), 'KV_BAD_REQUEST_ID');
      await rejects(s.counterUpdate('c', 1, { requestId: Buffer.alloc(65) }), 'KV_BAD_REQUEST_ID');
      await rejects(s.counterUpdate('', 1), 'KV_KEY_EMPTY');
      expect(await s.getRecord('c')).toBeUndefined();
      await s.counterUpdate('c', Number.MAX_SAFE_INTEGER - 1);
      const before = await s.getRecord('c');
      await rejects(s.counterUpdate('c', 2), 'KV_COUNTER_OVERFLOW', /was not changed/);
      expect((await s.getRecord('c'))!.equals(before!)).toBe(true);
      await s.close();
    });

    it('refuses to mix a counter and versions on one key, whichever comes first (KV_WRONG_TYPE), leaving the key as it was', async () => {
      const s = await open();
      const plain = await s.put('p', Buffer.from('v'));
      const counter = await s.counterUpdate('c', 1);
      await rejects(
        s.counterUpdate('p', 1),
        'KV_WRONG_TYPE',
        /holds versions .* a counter increment cannot change that; nothing was written/,
      );
      await rejects(s.put('c', Buffer.from('v')), 'KV_WRONG_TYPE', /holds a counter, and a put/);
      await rejects(s.delete('c'), 'KV_WRONG_TYPE', /holds a counter, and a delete/);
      await rejects(s.get('c'), 'KV_WRONG_TYPE', /a get/);
      await rejects(s.merge('p', counter.record), 'KV_WRONG_TYPE', /a counter's record/);
      await rejects(s.merge('c', plain.record), 'KV_WRONG_TYPE', /a record of versions/);
      expect((await s.getRecord('p'))!.equals(plain.record)).toBe(true);
      expect((await s.getRecord('c'))!.equals(counter.record)).toBe(true);
      // In a batch: the entry is refused, the others are written, the call rejects with the first error.
      await rejects(
        s.mergeMany([
          { key: 'n', record: counter.record },
          { key: 'p', record: counter.record },
        ]),
        'KV_WRONG_TYPE',
      );
      expect(await s.getRecord('n')).toBeDefined();
      // One key given both kinds: the entry of the other kind is refused, the first is merged (as mergeMany does with any refused entry).
      await rejects(
        s.mergeMany([
          { key: 'm', record: counter.record },
          { key: 'm', record: plain.record },
        ]),
        'KV_WRONG_TYPE',
        /both a counter and versions/,
      );
      expect((await s.getRecord('m'))![0]).toBe(4);
      await s.close();
    });

    it('merges a counter record: stored as received less its bookkeeping, joined after, unchanged when it brings nothing', async () => {
      const a = await open(),
        b = await open();
      const r = await a.counterUpdate('c', 3, { requestId: id(1) });
      const first = await b.merge('c', r.record);
      expect(first.changed).toBe(true);
      expect(decodeCounter(first.record).ownerEpoch).toBeUndefined();
      expect(versionBytes(first.record).equals(versionBytes(r.record))).toBe(true);
      expect((await b.merge('c', r.record)).changed).toBe(false);
      expect((await b.merge('c', r.delta)).changed).toBe(false);
      const more = await a.counterUpdate('c', 2);
      expect((await b.merge('c', more.delta)).changed).toBe(true);
      expect(value(decodeCounter((await b.getRecord('c'))!).state)).toBe(5n);
      // b issues under its own actor for the key it only merged so far.
      expect((await b.counterUpdate('c', 1)).value).toBe(6n);
      await rejects(
        b.merge('c', Buffer.from([4, 0, 0, 0, 0, 1, 2, 3, 4])),
        'KV_BAD_RECORD',
        /does not decode \(counter record: checksum mismatch\)/,
      );
      await a.close();
      await b.close();
    });

    it('logs counter entries of one floor and different sums (a corrupt replica) and keeps the greater', async () => {
      const errors: string[] = [];
      const s = await open({ logger: { warn: () => {}, error: (_o: object, msg: string) => void errors.push(msg) } });
      const one = (p: number) => encodeCounter({ entries: [{ actor: A, floor: 1, p, n: 0 }], log: [], voids: [] });
      await s.merge('c', one(5));
      expect((await s.merge('c', one(6))).changed).toBe(true);
      expect(errors).toEqual([expect.stringMatching(/counter entries with one floor and different sums/)]);
      expect(value(decodeCounter((await s.getRecord('c'))!).state)).toBe(6n);
      await s.close();
    });

    it('ingests a counter record as a merge into nothing writes it (the skim leaves format 4 to the decoder)', async () => {
      const a = await open(),
        viaMerge = await open(),
        viaIngest = await open();
      const r = await a.counterUpdate('c', 3, { requestId: id(1) });
      await viaMerge.merge('c', r.record);
      expect(await viaIngest.ingest([{ key: 'c', record: r.record }])).toEqual({ copied: 0, merged: 1 });
      expect((await viaIngest.getRecord('c'))!.equals((await viaMerge.getRecord('c'))!)).toBe(true);
      for (const s of [a, viaMerge, viaIngest]) await s.close();
    });

    it('keeps counters out of the tombstone, expiry and clock-prune indexes, and housekeeping leaves them be', async () => {
      const clock = { t: Date.UTC(2026, 11, 1) };
      const engine = kind.make();
      const s = await open({ now: () => clock.t, tombstoneGraceMs: DAY, clockPruneGraceMs: DAY }, engine);
      // Six actors' entries: a clock of that many would be indexed for pruning.
      for (let i = 0; i < 6; i++) {
        const peer = await open({ now: () => clock.t });
        await s.merge('c', (await peer.counterUpdate('c', i + 1)).delta);
        await peer.close();
      }
      const record = (await s.getRecord('c'))!;
      expect(decodeCounter(record).state.entries).toHaveLength(6);
      for (const prefix of [0x74, 0x78, 0x70]) expect(await keysUnder(engine, prefix)).toEqual([]);
      clock.t += 3 * DAY;
      expect(await s.pruneClocks()).toEqual({ pruned: 0, unconfirmed: 0, stale: 0 });
      expect(await s.reclaimExpired()).toEqual({ dropped: 0, rewritten: 0, stale: 0 });
      expect((await s.purgeTombstones()).purged).toBe(0);
      expect((await s.getRecord('c'))!.equals(record)).toBe(true);
      await s.close();
    });

    it('drops a stale clock-prune entry that now finds a counter, instead of failing the batch', async () => {
      const clock = { t: Date.UTC(2026, 11, 1) };
      const engine = new MemoryEngine();
      const s = await open({ now: () => clock.t, clockPruneGraceMs: DAY }, engine);
      const r = await s.counterUpdate('c', 1);
      const k = Buffer.from('c');
      const [hi, lo] = tokenHalves(k);
      const pk = dataKey(hi, lo, k);
      pk[0] = 0x70;
      await engine.write([{ type: 'put', key: pk, value: Buffer.alloc(16) }], false);
      clock.t += 2 * DAY;
      expect(await s.pruneClocks()).toEqual({ pruned: 0, unconfirmed: 0, stale: 1 });
      expect(await keysUnder(engine, 0x70)).toEqual([]);
      expect((await s.getRecord('c'))!.equals(r.record)).toBe(true);
      await s.close();
    });

    it('scans, hashes and digests a counter by its state alone, whatever each replica’s owner epoch', async () => {
      const a = await open(),
        b = await open();
      const r = await a.counterUpdate('c', 3);
      await b.merge('c', r.record);
      const ra = (await a.getRecord('c'))!,
        rb = (await b.getRecord('c'))!;
      expect(ra.equals(rb)).toBe(false); // a keeps its owner epoch
      const whole = { start: 0n, end: 0n };
      expect((await a.ranges.hash(whole)).hash).toBe((await b.ranges.hash(whole)).hash);
      expect(recordDigest(ra).equals(recordDigest(rb))).toBe(true);
      const scanned = [];
      for await (const batch of a.ranges.scan(whole)) scanned.push(...batch.entries);
      expect(scanned.map((e) => [String(e.key), e.record.equals(ra)])).toEqual([['c', true]]);
      await a.close();
      await b.close();
    });

    it('joins hinted counter deltas into one hint (format 4, aged in its header), refusing versions for that key', async () => {
      const clock = { t: Date.UTC(2026, 11, 1) };
      const s = await open({ now: () => clock.t, clockPruneGraceMs: DAY });
      const issuer = await open();
      const d1 = await issuer.counterUpdate('c', 2, { requestId: id(1) });
      const d2 = await issuer.counterUpdate('c', 3, { requestId: id(2) });
      // A hint holds the issuer's full states (a delta applies only in order, and a hint may be delivered after others).
      await rejects(s.hints.add('n2', 'c', d1.delta), 'KV_BAD_RECORD', /a delta \(it has a base\)/);
      await s.hints.add('n2', 'c', d1.record);
      clock.t += 1000;
      await s.hints.add('n2', 'c', d2.record); // the hint keeps the time of its oldest part
      await s.hints.add('n2', 'c', d1.record); // a state hinted twice: no change
      const hint = (await s.hints.get('n2', 'c'))!;
      const held = decodeCounter(hint);
      expect([value(held.state), held.heldSince, held.ownerEpoch]).toEqual([5n, clock.t - 1000, undefined]);
      await rejects(
        s.hints.add('n2', 'c', (await issuer.put('p', Buffer.from('v'))).record),
        'KV_WRONG_TYPE',
        /holds a counter/,
      );
      await rejects(s.hints.add('n2', 'c', Buffer.from([4, 0, 0, 0, 0, 9, 9, 9, 9])), 'KV_BAD_RECORD');
      const listed = [];
      for await (const batch of s.hints.list('n2')) listed.push(...batch);
      expect(listed.map((h) => [String(h.key), h.record.equals(hint)])).toEqual([['c', true]]);
      // Past the grace period the hint is dropped, as a versions hint is.
      clock.t += 2 * DAY;
      const late = [];
      for await (const batch of s.hints.list('n2')) late.push(...batch);
      expect(late).toEqual([]);
      expect(s.hints.stats().expired).toBe(1);
      await s.close();
      await issuer.close();
    });

    it('delivers a hint of full states: the target ends as if it had merged each delta', async () => {
      const holder = await open(),
        target = await open(),
        direct = await open(),
        issuer = await open();
      for (let i = 0; i < 5; i++) {
        const d = await issuer.counterUpdate('c', i + 1, { requestId: id(i) });
        await holder.hints.add('t', 'c', d.record);
        await direct.merge('c', d.delta);
      }
      await target.merge('c', (await holder.hints.get('t', 'c'))!);
      expect(versionBytes((await target.getRecord('c'))!).equals(versionBytes((await direct.getRecord('c'))!))).toBe(
        true,
      );
      for (const s of [holder, target, direct, issuer]) await s.close();
    });

    it("refuses a delta that skips one of its issuer's increments (KV_COUNTER_GAP), writing nothing, and takes the full state", async () => {
      const issuer = await open(),
        r = await open(),
        other = await open();
      const d1 = await issuer.counterUpdate('c', 2, { requestId: id(1) });
      await other.merge('c', (await other.counterUpdate('c', 2, { requestId: id(1) })).delta); // the same request, issued again elsewhere
      const d2 = await issuer.counterUpdate('c', 3, { requestId: id(2) });
      await r.merge('c', (await other.getRecord('c'))!);
      // r missed d1: applying d2 would count request 1 under other's dot and issuer's (d2's entry covers dot 1, without its op).
      await rejects(r.merge('c', d2.delta), 'KV_COUNTER_GAP', /Send the issuer's full state/);
      expect(value(decodeCounter((await r.getRecord('c'))!).state)).toBe(2n);
      await r.merge('c', d2.record);
      expect(value(decodeCounter((await r.getRecord('c'))!).state)).toBe(5n);
      // In order, a delta applies; and a batch that brings a delta with another record for the key refuses the second.
      await r.merge('c', (await issuer.counterUpdate('c', 1)).delta);
      expect(value(decodeCounter((await r.getRecord('c'))!).state)).toBe(6n);
      const d4 = await issuer.counterUpdate('c', 1);
      // (The first is merged, the second refused, as mergeMany does with any refused entry.)
      await rejects(
        r.mergeMany([
          { key: 'c', record: d4.delta },
          { key: 'c', record: d4.record },
        ]),
        'KV_COUNTER_GAP',
        /two records for it in one batch/,
      );
      expect(value(decodeCounter((await r.getRecord('c'))!).state)).toBe(7n);
      for (const s of [issuer, r, other]) await s.close();
    });
  });
}

describe('resolveCounterReplies', () => {
  const a1 = increment(EMPTY_COUNTER, A, 5, 'idid-one'),
    b1 = increment(EMPTY_COUNTER, B, 5, 'idid-one');
  const a2 = increment(a1.state, A, 2);

  it('answers the common case (every reply the same state) without a join, whatever the owner epochs', () => {
    const r = resolveCounterReplies([encodeCounter(a2.state, 3), encodeCounter(a2.state)]);
    expect(r).toMatchObject({ value: 7n, found: true, stale: [false, false] });
  });

  it('joins differing replies (voiding an increment held under two dots), marking the stale ones', () => {
    const r = resolveCounterReplies([encodeCounter(a2.state), encodeCounter(b1.state), undefined]);
    expect(r.value).toBe(7n); // 5 once, + 2
    expect(r.stale).toEqual([true, true, true]);
    const again = resolveCounterReplies([r.record, r.record]);
    expect(again).toMatchObject({ value: 7n, stale: [false, false] });
    expect(resolveCounterReplies([r.record, encodeCounter(a1.state)]).stale).toEqual([false, true]);
  });

  it('reads nothing as 0, not found', () => {
    expect(resolveCounterReplies([undefined, undefined])).toEqual({
      value: 0n,
      found: false,
      record: undefined,
      stale: [false, false],
    });
  });

  it('refuses a reply of versions (KV_WRONG_TYPE) or one that does not decode (KV_BAD_RECORD); a versions read refuses a counter', async () => {
    const s = await Store.open({ engine: new MemoryEngine() });
    const plain = (await s.put('p', Buffer.from('v'))).record;
    await s.close();
    const counter = encodeCounter(a1.state);
    expect(() => resolveCounterReplies([counter, plain])).toThrow(
      expect.objectContaining({ code: 'KV_WRONG_TYPE' }) as Error,
    );
    const damaged = Buffer.from(counter);
    damaged[3]! ^= 1;
    expect(() => resolveCounterReplies([counter, damaged])).toThrow(
      expect.objectContaining({
        code: 'KV_BAD_RECORD',
        message: expect.stringMatching(/checksum mismatch/) as string,
      }) as Error,
    );
    expect(() => resolveReplies('p', [plain, counter])).toThrow(
      expect.objectContaining({
        code: 'KV_WRONG_TYPE',
        message: expect.stringMatching(/the record of a counter: read the key as its bucket's type/) as string,
      }) as Error,
    );
  });
});

describe('counter engine batches', () => {
  it('writes one batch per increment, and none for a duplicate', async () => {
    let writes = 0;
    const inner = new MemoryEngine();
    const s = await Store.open({
      engine: wrapEngine(inner, {
        write: (ops, sync) => ((writes += ops.some((o) => o.key[0] === 0x64) ? 1 : 0), inner.write(ops, sync)),
      }),
    });
    await s.counterUpdate('c', 1, { requestId: id(1) });
    await s.counterUpdate('c', 1, { requestId: id(1) });
    expect(writes).toBe(1);
    await s.close();
  });
});

describe('counter keys in named buckets', () => {
  it('are stored keys like any other (a counter bucket will hold them)', async () => {
    const s = await Store.open({ engine: new MemoryEngine() });
    const k = storedKey('counters', Buffer.from('hits'));
    expect((await s.counterUpdate(k, 2)).value).toBe(2n);
    await s.close();
  });
});
