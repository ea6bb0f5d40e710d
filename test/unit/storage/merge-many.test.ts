/**
 * Store.mergeMany, the batched merge range streaming uses: the same causal merge as
 * merge() key by key (versions, tombstones, idempotence, caps, corrupt records), under
 * the same per-key locks, in one read and one write per batch. Run against every engine.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { KvError, Store } from '../../../src/storage/index.js';
import type { Engine, MergeResult, StoreOptions } from '../../../src/storage/index.js';
import { dataKey, tokenHalves } from '../../../src/storage/keys.js';
import { ENGINE_KINDS, wrapEngine } from './engines.js';

const v = (text: string) => Buffer.from(text);
const texts = (values: Buffer[]) => values.map(String).sort();

/** Every record of a store, in token order, as a streamed range would carry them. */
async function records(s: Store): Promise<{ key: Buffer; record: Buffer }[]> {
  const out: { key: Buffer; record: Buffer }[] = [];
  for await (const b of s.ranges.scan({ start: 0n, end: 0n })) out.push(...b.entries);
  return out;
}

/** The records `stored` holds for the keys of `batch`, in batch order. */
function got(stored: { key: Buffer; record: Buffer }[], batch: { key: Buffer }[]): Buffer[] {
  const m = new Map(stored.map((e) => [e.key.toString('latin1'), e.record]));
  return batch.map((e) => m.get(e.key.toString('latin1'))!);
}

async function rejection(p: Promise<unknown>): Promise<KvError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(KvError);
  return e as KvError;
}

for (const makeKind of ENGINE_KINDS) {
  const kind = makeKind();
  describe(`mergeMany on ${kind.name}`, () => {
    afterAll(() => kind.cleanup());

    function open(options: Omit<StoreOptions, 'engine' | 'path'> = {}, engine: Engine = kind.make()): Promise<Store> {
      return Store.open({ engine, ...options });
    }

    /** A source replica with new keys, siblings, a tombstone and a superseded value. */
    async function source(): Promise<Store> {
      const a = await open();
      const b = await open();
      for (let i = 0; i < 60; i++) await a.put(`k${i}`, v(`a${i}`));
      for (let i = 0; i < 10; i++) await a.merge(`k${i}`, (await b.put(`k${i}`, v(`b${i}`))).record); // siblings
      await a.delete('k20', (await a.get('k20')).context); // a tombstone
      await a.put('k21', v('newer'), (await a.get('k21')).context); // supersedes a21
      await b.close();
      return a;
    }

    it('stores exactly what merge() key by key stores, and reports the same results', async () => {
      const src = await source();
      const batch = await records(src);
      // Two targets holding the same versions of some of the keys, older or concurrent.
      const base = await open();
      for (let i = 0; i < 60; i += 3) await base.put(`k${i}`, v(`t${i}`));
      for (const e of batch.slice(40)) await base.merge(e.key, e.record);
      const prepare = async (): Promise<Store> => {
        const t = await open();
        for (const e of await records(base)) await t.merge(e.key, e.record);
        return t;
      };
      const one = await prepare();
      const many = await prepare();
      await base.close();
      const expected: MergeResult[] = [];
      for (const e of batch) expected.push(await one.merge(e.key, e.record));
      const got = await many.mergeMany(batch);
      expect(got.map((r) => r.changed)).toEqual(expected.map((r) => r.changed));
      expect(got.map((r) => r.versions)).toEqual(expected.map((r) => r.versions));
      expect(await many.ranges.hash({ start: 0n, end: 0n })).toEqual(await one.ranges.hash({ start: 0n, end: 0n }));
      for (let i = 0; i < 60; i++) {
        const [x, y] = [await one.get(`k${i}`), await many.get(`k${i}`)];
        expect(texts(y.values)).toEqual(texts(x.values));
        expect(y.deleted).toBe(x.deleted);
      }
      expect((await many.get('k20')).deleted).toBe(true);
      expect(texts((await many.get('k21')).values)).toEqual(['newer', 't21']);
      for (const s of [src, one, many]) await s.close();
    });

    it('is idempotent: a batch merged twice writes nothing the second time', async () => {
      const src = await source();
      const batch = await records(src);
      const t = await open();
      expect((await t.mergeMany(batch)).every((r) => r.changed)).toBe(true);
      const before = t.writeStats;
      const again = await t.mergeMany(batch);
      expect(again.some((r) => r.changed)).toBe(false);
      expect(t.writeStats).toEqual(before);
      expect(again.map((r) => r.record)).toEqual(got(await records(t), batch));
      await src.close();
      await t.close();
    });

    it('one read and one write for a whole batch; no read at all when every key is new', async () => {
      const counted = () => {
        const n = { gets: 0, getManys: 0, writes: 0 };
        const inner = kind.make();
        const engine = wrapEngine(inner, {
          get: (k) => (n.gets++, inner.get(k)),
          getMany: (k) => (n.getManys++, inner.getMany(k)),
          write: (ops, sync) => (n.writes++, inner.write(ops, sync)),
        });
        return { n, engine };
      };
      const src = await source();
      const batch = await records(src);
      const known = counted();
      const t = await open({}, known.engine);
      await t.keyFilter.settled;
      for (const e of batch.slice(0, 5)) await t.merge(e.key, e.record); // these keys are read
      Object.assign(known.n, { gets: 0, getManys: 0, writes: 0 });
      await t.mergeMany(batch);
      expect(known.n).toEqual({ gets: 0, getManys: 1, writes: 1 });
      const fresh = counted();
      const f = await open({}, fresh.engine);
      await f.keyFilter.settled;
      Object.assign(fresh.n, { gets: 0, getManys: 0, writes: 0 });
      await f.mergeMany(batch);
      expect(fresh.n).toEqual({ gets: 0, getManys: 0, writes: 1 });
      for (const s of [src, t, f]) await s.close();
    });

    it('a key given twice in one batch gets both records', async () => {
      const a = await open();
      const b = await open();
      const t = await open();
      const ra = await a.put('k', v('from a'));
      const rb = await b.put('k', v('from b'));
      const res = await t.mergeMany([
        { key: Buffer.from('k'), record: ra.record },
        { key: Buffer.from('x'), record: (await a.put('x', v('x'))).record },
        { key: Buffer.from('k'), record: rb.record },
      ]);
      expect(res[0]).toEqual(res[2]);
      expect(res[0]!.versions).toBe(2);
      expect(texts((await t.get('k')).values)).toEqual(['from a', 'from b']);
      for (const s of [a, b, t]) await s.close();
    });

    it('writes the keys it can, then rejects with the first error in entry order', async () => {
      const src = await source();
      const batch = await records(src);
      const t = await open({ limits: { maxSiblings: 2 } });
      // k0 holds two siblings at the source: a third, concurrent, is one too many here.
      const k0 = batch.find((e) => e.key.toString() === 'k0')!;
      await t.put('k0', v('local'));
      const bad = [
        ...batch.filter((e) => e !== k0 && e.key.toString() !== 'k5'),
        { key: Buffer.from('k5'), record: Buffer.from('not a record') },
        k0,
        { key: Buffer.alloc(0), record: k0.record },
      ];
      const e = await rejection(t.mergeMany(bad));
      expect(e.code).toBe('KV_BAD_RECORD');
      expect(e.message).toContain('"k5"');
      expect(texts((await t.get('k0')).values)).toEqual(['local']);
      expect((await t.get('k5')).versions).toBe(0);
      expect(texts((await t.get('k30')).values)).toEqual(['a30']);
      expect((await t.ranges.stats({ start: 0n, end: 0n })).keys).toBe(batch.length - 1);
      await src.close();
      await t.close();
    });

    it('under the per-key locks: a put racing a batch is kept, and overlapping batches and a range delete finish', async () => {
      const src = await source();
      const batch = await records(src);
      const t = await open();
      const reversed = [...batch].reverse();
      const racing = batch.slice(0, 30).map((e, i) => t.put(e.key, v(`racer ${i}`)));
      const [r1, r2] = await Promise.all([
        t.mergeMany(batch),
        t.mergeMany(reversed),
        t.mergeMany(batch.slice(10, 20)),
        ...racing,
      ]);
      expect((r1 as MergeResult[]).length).toBe(batch.length);
      expect((r2 as MergeResult[]).length).toBe(batch.length);
      for (let i = 0; i < 30; i++) expect(texts((await t.get(batch[i]!.key)).values)).toContain(`racer ${i}`);
      await Promise.all([
        t.mergeMany(batch),
        t.ranges.delete({ start: 0n, end: 0n }, { batchCount: 7 }),
        t.mergeMany(reversed),
      ]);
      await t.close();
      await src.close();
    });

    it('keys it adds are known to the key filter: a blind put afterwards is a sibling, not an overwrite', async () => {
      const src = await source();
      const batch = await records(src);
      const t = await open();
      await t.keyFilter.settled;
      await t.mergeMany(batch);
      await t.put('k40', v('blind'));
      expect(texts((await t.get('k40')).values)).toEqual(['a40', 'blind']);
      await src.close();
      await t.close();
    });

    it('sets a corrupt stored record aside and repairs the key', async () => {
      const engine = kind.make();
      const t = await open({}, engine);
      const a = await open();
      const w = await a.put('k', v('from replica'));
      await t.merge('k', w.record);
      const k = Buffer.from('k');
      const [hi, lo] = tokenHalves(k);
      const bytes = (await engine.get(dataKey(hi, lo, k)))!;
      bytes[bytes.length - 6]! ^= 0xff;
      await engine.write([{ type: 'put', key: dataKey(hi, lo, k), value: bytes }], false);
      const [r] = await t.mergeMany([{ key: k, record: w.record }]);
      expect(r!.changed).toBe(true);
      expect(texts((await t.get('k')).values)).toEqual(['from replica']);
      const it = engine.iterator(Buffer.from('q'), Buffer.from('r'));
      expect(await it.nextv(10)).toHaveLength(1); // quarantined, not silently dropped
      await it.close();
      await t.close();
      await a.close();
    });

    it('an empty batch is nothing; a closed store refuses', async () => {
      const t = await open();
      expect(await t.mergeMany([])).toEqual([]);
      await t.close();
      expect((await rejection(t.mergeMany([]))).code).toBe('KV_CLOSED');
    });
  });
}
