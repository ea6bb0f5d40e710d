/**
 * The store's semantics, run against every engine: causal versions, tombstones, limits
 * and errors, per-key serialisation, range operations, hints, actors and corruption.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KvError, Store } from '../../../src/storage/index.js';
import type { Engine, StoreOptions } from '../../../src/storage/index.js';
import { dataKey, tokenHalves } from '../../../src/storage/keys.js';
import { MAX_TOKEN, tokenOf } from '../../../src/ring/index.js';
import { ENGINE_KINDS, wrapEngine } from './engines.js';

const v = (text: string) => Buffer.from(text);
const texts = (values: Buffer[]) => values.map(String).sort();
const DAY = 24 * 3600 * 1000;

/** Expect a promise to reject with a KvError of this code; return the error. */
async function rejects(p: Promise<unknown>, code: string): Promise<KvError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, `expected ${code}`).toBeInstanceOf(KvError);
  expect((e as KvError).code).toBe(code);
  return e as KvError;
}

/** Every item of an async iterable (Array.fromAsync needs Node 22). */
async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** A wall clock the test moves by hand. */
function manualClock(start = Date.UTC(2026, 10, 30)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

for (const makeKind of ENGINE_KINDS) {
  const kind = makeKind();
  describe(`store on ${kind.name}`, () => {
    afterAll(() => kind.cleanup());

    async function open(
      options: Omit<StoreOptions, 'engine' | 'path'> = {},
      engine: Engine = kind.make(),
    ): Promise<Store> {
      return Store.open({ engine, ...options });
    }

    describe('causal versions', () => {
      it('reads nothing, with a context, for a key never written', async () => {
        const s = await open();
        const r = await s.get('absent');
        expect(r).toMatchObject({ values: [], versions: 0, deleted: false });
        expect(r.context.length).toBeGreaterThan(0);
        await s.close();
      });

      it('a write with the context of a read replaces exactly what that read saw', async () => {
        const s = await open();
        await s.put('k', v('a'));
        const r1 = await s.get('k');
        await s.put('k', v('b'), r1.context);
        expect(texts((await s.get('k')).values)).toEqual(['b']);
        await s.close();
      });

      it('a blind write to an existing key becomes a sibling, never an overwrite', async () => {
        const s = await open();
        await s.put('k', v('a'));
        await s.put('k', v('b'));
        const r = await s.get('k');
        expect(texts(r.values)).toEqual(['a', 'b']);
        await s.put('k', v('c'), r.context);
        expect(texts((await s.get('k')).values)).toEqual(['c']);
        await s.close();
      });

      it('two writes with the same context both survive as siblings', async () => {
        const s = await open();
        await s.put('k', v('base'));
        const { context } = await s.get('k');
        await Promise.all([s.put('k', v('x'), context), s.put('k', v('y'), context)]);
        expect(texts((await s.get('k')).values)).toEqual(['x', 'y']);
        await s.close();
      });

      it('a stale context supersedes only what it saw', async () => {
        const s = await open();
        await s.put('k', v('a'));
        const old = await s.get('k');
        await s.put('k', v('b'), old.context); // k = {b}
        await s.put('k', v('c'), old.context); // saw only a: b stays
        expect(texts((await s.get('k')).values)).toEqual(['b', 'c']);
        await s.close();
      });

      it('a write returns a context that covers it', async () => {
        const s = await open();
        const w = await s.put('k', v('a'));
        await s.put('k', v('b'), w.context);
        expect(texts((await s.get('k')).values)).toEqual(['b']);
        await s.close();
      });

      it('accepts string and byte keys alike (a string is its UTF-8 bytes)', async () => {
        const s = await open();
        await s.put('clé', v('1'));
        expect(texts((await s.get(Buffer.from('clé', 'utf8'))).values)).toEqual(['1']);
        await s.put(new Uint8Array([0, 255, 0]), v('2'));
        expect(texts((await s.get(Buffer.from([0, 255, 0]))).values)).toEqual(['2']);
        await s.close();
      });

      it('stores an empty value, distinct from a delete', async () => {
        const s = await open();
        await s.put('k', Buffer.alloc(0));
        const r = await s.get('k');
        expect(r.values).toHaveLength(1);
        expect(r.values[0]).toHaveLength(0);
        expect(r.deleted).toBe(false);
        await s.close();
      });
    });

    describe('deletes and tombstones', () => {
      it('a delete with a context removes what it saw; the key reads as absent', async () => {
        const s = await open();
        await s.put('k', v('a'));
        const r = await s.get('k');
        await s.delete('k', r.context);
        const after = await s.get('k');
        expect(after).toMatchObject({ values: [], deleted: true, versions: 1 });
        await s.close();
      });

      it('a put concurrent with a delete survives it', async () => {
        const s = await open();
        await s.put('k', v('a'));
        const r = await s.get('k');
        await s.put('k', v('b'), r.context); // concurrent with the delete below
        await s.delete('k', r.context);
        expect(texts((await s.get('k')).values)).toEqual(['b']);
        await s.close();
      });

      it('a put with the context of a deleted read replaces the tombstone', async () => {
        const s = await open();
        await s.put('k', v('a'));
        await s.delete('k', (await s.get('k')).context);
        const gone = await s.get('k');
        await s.put('k', v('again'), gone.context);
        const r = await s.get('k');
        expect(r).toMatchObject({ versions: 1, deleted: false });
        expect(texts(r.values)).toEqual(['again']);
        await s.close();
      });

      it('never resurrects a deleted value when an old replica streams it back within the grace period', async () => {
        const clock = manualClock();
        const a = await open({ now: clock.now });
        const b = await open({ now: clock.now });
        const w = await a.put('k', v('old'));
        await b.merge('k', w.record); // b holds the old value, as a replica would
        await a.delete('k', (await a.get('k')).context);
        clock.advance(9 * DAY);
        expect(await a.purgeTombstones()).toEqual({ purged: 0, unconfirmed: 0 });
        for await (const batch of b.ranges.scan({ start: 0n, end: 0n }))
          for (const e of batch.entries) await a.merge(e.key, e.record);
        expect(await a.get('k')).toMatchObject({ values: [], deleted: true });
        await a.close();
        await b.close();
      });

      it('purges tombstones once the grace period has passed, and only then', async () => {
        const clock = manualClock();
        const s = await open({ now: clock.now, tombstoneGraceMs: DAY });
        await s.put('gone', v('x'));
        await s.delete('gone', (await s.get('gone')).context);
        await s.put('live', v('y'));
        clock.advance(DAY - 1);
        expect(await s.purgeTombstones()).toEqual({ purged: 0, unconfirmed: 0 });
        clock.advance(2);
        expect(await s.purgeTombstones()).toEqual({ purged: 1, unconfirmed: 0 });
        expect(await s.get('gone')).toMatchObject({ values: [], versions: 0, deleted: false });
        expect(texts((await s.get('live')).values)).toEqual(['y']);
        expect(await s.ranges.stats({ start: 0n, end: 0n })).toMatchObject({ keys: 1 });
        expect(await s.purgeTombstones()).toEqual({ purged: 0, unconfirmed: 0 });
        await s.close();
      });

      it('restarts the grace period when a deleted key changes again', async () => {
        const clock = manualClock();
        const s = await open({ now: clock.now, tombstoneGraceMs: DAY });
        await s.put('k', v('x'));
        const r = await s.get('k');
        await s.delete('k', r.context);
        clock.advance(DAY / 2);
        await s.delete('k', r.context); // a concurrent delete arrives: still deleted, newly changed
        clock.advance(DAY / 2 + 1);
        expect(await s.purgeTombstones()).toEqual({ purged: 0, unconfirmed: 0 });
        clock.advance(DAY / 2);
        expect(await s.purgeTombstones()).toEqual({ purged: 1, unconfirmed: 0 });
        await s.close();
      });

      it('keeps a key that was deleted and then written again', async () => {
        const clock = manualClock();
        const s = await open({ now: clock.now, tombstoneGraceMs: 0 });
        await s.put('k', v('x'));
        await s.delete('k', (await s.get('k')).context);
        await s.put('k', v('back'), (await s.get('k')).context);
        clock.advance(1);
        expect(await s.purgeTombstones()).toEqual({ purged: 0, unconfirmed: 0 });
        expect(texts((await s.get('k')).values)).toEqual(['back']);
        await s.close();
      });

      it('a key purged and written again never reuses a dot another replica holds', async () => {
        const clock = manualClock();
        const a = await open({ now: clock.now, tombstoneGraceMs: 0 });
        const b = await open({ now: clock.now });
        const first = await a.put('k', v('one'));
        await b.merge('k', first.record);
        await a.delete('k', (await a.get('k')).context);
        clock.advance(1);
        expect(await a.purgeTombstones()).toEqual({ purged: 1, unconfirmed: 0 });
        const second = await a.put('k', v('two')); // a has forgotten k entirely
        // b never saw the delete: it holds "one"; "two" is a new write and must survive.
        const merged = await b.merge('k', second.record);
        expect(merged.changed).toBe(true);
        expect(texts((await b.get('k')).values)).toEqual(['one', 'two']);
        await a.close();
        await b.close();
      });
    });

    describe('merge', () => {
      it('is idempotent: merging what is already here writes nothing', async () => {
        const a = await open();
        const b = await open();
        const w = await a.put('k', v('x'));
        expect((await b.merge('k', w.record)).changed).toBe(true);
        const before = b.writeStats.writes;
        expect((await b.merge('k', w.record)).changed).toBe(false);
        expect(b.writeStats.writes).toBe(before);
        expect((await a.merge('k', w.record)).changed).toBe(false);
        await a.close();
        await b.close();
      });

      it('keeps concurrent writes from two replicas as siblings, in either order', async () => {
        const a = await open();
        const b = await open();
        const wa = await a.put('k', v('from-a'));
        const wb = await b.put('k', v('from-b'));
        await a.merge('k', wb.record);
        await b.merge('k', wa.record);
        expect(texts((await a.get('k')).values)).toEqual(['from-a', 'from-b']);
        expect(texts((await b.get('k')).values)).toEqual(['from-a', 'from-b']);
        expect(await a.ranges.hash({ start: 0n, end: 0n })).toEqual(await b.ranges.hash({ start: 0n, end: 0n }));
        await a.close();
        await b.close();
      });

      it('a write on one replica with a context read on another supersedes what the read saw', async () => {
        const a = await open();
        const b = await open();
        const w = await a.put('k', v('v1'));
        await b.merge('k', w.record);
        const readAtB = await b.get('k');
        const w2 = await a.put('k', v('v2'), readAtB.context); // coordinated on a with b's context
        await b.merge('k', w2.record);
        expect(texts((await b.get('k')).values)).toEqual(['v2']);
        await a.close();
        await b.close();
      });

      it('refuses a record that does not decode, and stores nothing', async () => {
        const s = await open();
        const e = await rejects(s.merge('k', Buffer.from('not a record')), 'KV_BAD_RECORD');
        expect(e.message).toContain('"k"');
        expect(await s.get('k')).toMatchObject({ versions: 0 });
        await s.close();
      });
    });

    describe('limits and bad input', () => {
      it('refuses empty and oversized keys before writing anything', async () => {
        const s = await open({ limits: { maxKeyBytes: 8 } });
        await rejects(s.put('', v('x')), 'KV_KEY_EMPTY');
        const e = await rejects(s.put('123456789', v('x')), 'KV_KEY_TOO_LARGE');
        expect(e.message).toMatch(/9 bytes.*limit of 8/);
        await rejects(s.get(Buffer.alloc(9)), 'KV_KEY_TOO_LARGE');
        await rejects(s.put(42 as unknown as string, v('x')), 'KV_BAD_KEY');
        expect(await s.ranges.stats({ start: 0n, end: 0n })).toEqual({ keys: 0, bytes: 0 });
        await s.close();
      });

      it('defaults: keys up to 4,096 bytes, values up to 1 MiB', async () => {
        const s = await open();
        await s.put(Buffer.alloc(4096, 1), Buffer.alloc(1 << 20));
        await rejects(s.put(Buffer.alloc(4097, 1), v('x')), 'KV_KEY_TOO_LARGE');
        await rejects(s.put('k', Buffer.alloc((1 << 20) + 1)), 'KV_VALUE_TOO_LARGE');
        await rejects(s.put('k', 'text' as unknown as Buffer), 'KV_BAD_VALUE');
        expect(await s.ranges.stats({ start: 0n, end: 0n })).toMatchObject({ keys: 1 });
        await s.close();
      });

      it('refuses a malformed context, and a context read from another key', async () => {
        const s = await open();
        await s.put('a', v('1'));
        const ctxA = (await s.get('a')).context;
        await s.put('b', v('1'));
        await rejects(s.put('b', v('2'), Buffer.from([9, 9, 9])), 'KV_BAD_CONTEXT');
        const e = await rejects(s.put('b', v('2'), ctxA), 'KV_BAD_CONTEXT');
        expect(e.message).toContain('different key');
        await rejects(s.put('b', v('2'), Buffer.concat([ctxA, Buffer.from([0])])), 'KV_BAD_CONTEXT');
        expect(texts((await s.get('b')).values)).toEqual(['1']);
        await s.close();
      });

      it('caps siblings with a clear error and warns before the cap', async () => {
        const warnings: unknown[] = [];
        const logger = { warn: (o: object) => void warnings.push(o), error: () => {} };
        const s = await open({ limits: { maxSiblings: 3, warnSiblings: 2 }, logger });
        await s.put('k', v('1'));
        await s.put('k', v('2'));
        expect(warnings).toHaveLength(1);
        await s.put('k', v('3'));
        const e = await rejects(s.put('k', v('4')), 'KV_TOO_MANY_SIBLINGS');
        expect(e.message).toMatch(/4 concurrent versions.*limit of 3/);
        const r = await s.get('k');
        expect(texts(r.values)).toEqual(['1', '2', '3']);
        await s.put('k', v('resolved'), r.context); // resolving with the read's context always fits
        expect(texts((await s.get('k')).values)).toEqual(['resolved']);
        await s.close();
      });

      it('caps the bytes of a record, however the siblings pile up', async () => {
        const s = await open({ limits: { maxValueBytes: 1000, maxRecordBytes: 2500 } });
        await s.put('k', Buffer.alloc(1000, 1));
        await s.put('k', Buffer.alloc(1000, 2));
        const e = await rejects(s.put('k', Buffer.alloc(1000, 3)), 'KV_RECORD_TOO_LARGE');
        expect(e.message).toMatch(/over the limit of 2500/);
        const r = await s.get('k');
        expect(r.values).toHaveLength(2);
        const other = await open({ limits: { maxValueBytes: 1000, maxRecordBytes: 2500 } });
        const big = await other.put('k', Buffer.alloc(1000, 4));
        await rejects(s.merge('k', big.record), 'KV_RECORD_TOO_LARGE');
        await s.put('k', Buffer.alloc(1000, 5), r.context); // resolving always fits
        expect((await s.get('k')).values).toHaveLength(1);
        await rejects(
          Store.open({ engine: kind.make(), limits: { maxValueBytes: 10_000, maxRecordBytes: 10_500 } }),
          'KV_BAD_OPTION',
        );
        await s.close();
        await other.close();
      });

      it('turns engine failures into KV_IO, and loses nothing that was acknowledged', async () => {
        const inner = kind.make();
        let failing = false;
        const flaky = wrapEngine(inner, {
          write: (ops, sync) =>
            failing ? Promise.reject(new Error('No space left on device')) : inner.write(ops, sync),
        });
        const s = await open({}, flaky);
        const w = await s.put('k', v('kept'));
        failing = true;
        const e = await rejects(s.put('k', v('lost'), w.context), 'KV_IO');
        expect(e.message).toContain('No space left on device');
        await rejects(s.hints.add('n2', v('k'), w.record), 'KV_IO');
        failing = false;
        expect(texts((await s.get('k')).values)).toEqual(['kept']);
        await s.put('k', v('next'), w.context);
        expect(texts((await s.get('k')).values)).toEqual(['next']);
        expect(s.hints.stats().count).toBe(0);
        await s.close();
      });

      it('refuses options out of range', async () => {
        await rejects(Store.open({ engine: kind.make(), limits: { maxKeyBytes: 0 } }), 'KV_BAD_OPTION');
        await rejects(Store.open({ engine: kind.make(), durability: 'fast' as 'sync' }), 'KV_BAD_OPTION');
        await rejects(Store.open({ engine: kind.make(), tombstoneGraceMs: -1 }), 'KV_BAD_OPTION');
        await rejects(Store.open({}), 'KV_BAD_OPTION');
      });

      it('refuses a hint for a target whose id is empty or too long', async () => {
        const s = await open();
        const rec = (await s.put('k', v('x'))).record;
        await rejects(s.hints.add('', v('k'), rec), 'KV_BAD_OPTION');
        await rejects(s.hints.add('n'.repeat(256), v('k'), rec), 'KV_BAD_OPTION');
        await rejects(s.hints.add('n2', Buffer.alloc(0), rec), 'KV_KEY_EMPTY');
        await rejects(s.hints.add('n2', 42 as unknown as string, rec), 'KV_BAD_KEY');
        await rejects(s.hints.add('n2', 'x'.repeat(4097), rec), 'KV_KEY_TOO_LARGE');
        expect(s.hints.stats().count).toBe(0);
        await s.hints.add('n2', 'k', rec); // a string key is its UTF-8 bytes, as everywhere
        expect((await collect(s.hints.list('n2'))).flat().map((h) => String(h.key))).toEqual(['k']);
        await s.close();
      });

      it('refuses a range whose bounds are not tokens', async () => {
        const s = await open();
        await rejects(s.ranges.stats({ start: -1n, end: 5n }), 'KV_BAD_RANGE');
        await rejects(s.ranges.hash({ start: 0n, end: MAX_TOKEN + 1n }), 'KV_BAD_RANGE');
        await s.close();
      });

      it('refuses every operation once closed', async () => {
        const s = await open();
        await s.close();
        await rejects(s.get('k'), 'KV_CLOSED');
        await rejects(s.put('k', v('x')), 'KV_CLOSED');
        await rejects(s.hints.add('n2', v('k'), Buffer.alloc(0)), 'KV_CLOSED');
      });
    });

    describe('per-key serialisation', () => {
      it('100 concurrent blind puts to one key lose nothing', async () => {
        const s = await open();
        await Promise.all(Array.from({ length: 100 }, (_, i) => s.put('hot', v(`w${i}`))));
        const r = await s.get('hot');
        expect(r.values).toHaveLength(100);
        expect(new Set(r.values.map(String)).size).toBe(100);
        await s.close();
      });

      it('100 concurrent read-modify-writes to one key lose nothing', async () => {
        const s = await open({ limits: { maxSiblings: 200 } });
        await s.put('counter', v(''));
        // Each caller reads, then writes its mark with the read's context. Exactly the marks
        // that no other caller's read saw must survive; every mark a read saw is superseded
        // by that caller's write.
        const seen = new Set<string>();
        await Promise.all(
          Array.from({ length: 100 }, async (_, i) => {
            const r = await s.get('counter');
            for (const x of r.values) seen.add(String(x));
            await s.put('counter', v(`m${i}`), r.context);
          }),
        );
        const r = await s.get('counter');
        const expected = Array.from({ length: 100 }, (_, i) => `m${i}`).filter((m) => !seen.has(m));
        expect(expected.length).toBeGreaterThan(0);
        expect(texts(r.values)).toEqual(expected.sort());
        await s.close();
      });

      it('concurrent puts to one key on two replicas, merged both ways, keep all 50', async () => {
        const a = await open();
        const b = await open();
        const records = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).put('k', v(`w${i}`))));
        for (const r of records) await Promise.all([a.merge('k', r.record), b.merge('k', r.record)]);
        expect(texts((await a.get('k')).values)).toEqual(texts((await b.get('k')).values));
        expect((await a.get('k')).values).toHaveLength(50);
        await a.close();
        await b.close();
      });
    });

    describe('token ranges', () => {
      /** Write n keys; return them with their tokens, in token order. */
      async function fill(s: Store, n: number): Promise<Array<{ key: string; token: bigint }>> {
        const keys = Array.from({ length: n }, (_, i) => `key-${i}`);
        await Promise.all(keys.map((k) => s.put(k, v(`value of ${k}`))));
        return keys.map((key) => ({ key, token: tokenOf(key) })).sort((x, y) => (x.token < y.token ? -1 : 1));
      }

      async function scanKeys(s: Store, range: { start: bigint; end: bigint }, limits = {}): Promise<string[]> {
        const out: string[] = [];
        for await (const b of s.ranges.scan(range, limits)) out.push(...b.entries.map((e) => e.key.toString()));
        return out;
      }

      it('scans a range (start, end] in token order, with wrap-around and the whole ring', async () => {
        const s = await open();
        const keys = await fill(s, 300);
        const t = keys.map((k) => k.token);
        const inRange = (start: bigint, end: bigint) =>
          keys
            .filter(({ token }) =>
              start < end ? token > start && token <= end : start === end || token > start || token <= end,
            )
            .map((k) => k.key);
        expect(await scanKeys(s, { start: t[99]!, end: t[199]! })).toEqual(inRange(t[99]!, t[199]!));
        expect(await scanKeys(s, { start: t[99]!, end: t[199]! })).toHaveLength(100);
        const wrapped = await scanKeys(s, { start: t[249]!, end: t[49]! });
        expect(wrapped).toEqual([...keys.slice(250), ...keys.slice(0, 50)].map((k) => k.key));
        expect(await scanKeys(s, { start: 5n, end: 5n })).toEqual(keys.map((k) => k.key));
        expect(await scanKeys(s, { start: MAX_TOKEN, end: t[9]! })).toEqual(keys.slice(0, 10).map((k) => k.key));
        expect(await scanKeys(s, { start: t[289]!, end: MAX_TOKEN })).toEqual(keys.slice(290).map((k) => k.key));
        await s.close();
      });

      it('cuts scans into batches by count and by bytes; a big record is its own batch', async () => {
        const s = await open();
        await fill(s, 50);
        await s.put('big', Buffer.alloc(10_000, 7));
        const sizes: number[] = [],
          bytes: number[] = [];
        for await (const b of s.ranges.scan({ start: 0n, end: 0n }, { batchCount: 7, batchBytes: 2_000 })) {
          sizes.push(b.entries.length);
          bytes.push(b.entries.reduce((n, e) => n + e.key.length + 9 + e.record.length, 0));
        }
        expect(sizes.reduce((a, b) => a + b)).toBe(51);
        expect(Math.max(...sizes)).toBeLessThanOrEqual(7);
        for (const [i, n] of bytes.entries()) if (sizes[i]! > 1) expect(n).toBeLessThanOrEqual(2_000);
        expect(bytes.some((n) => n > 10_000)).toBe(true);
        await rejects(s.ranges.scan({ start: 0n, end: 0n }, { batchCount: 0 }).next(), 'KV_BAD_OPTION');
        await s.close();
      });

      it('counts keys and bytes in a range exactly', async () => {
        const s = await open();
        const keys = await fill(s, 100);
        const range = { start: keys[19]!.token, end: keys[69]!.token };
        const stats = await s.ranges.stats(range);
        expect(stats.keys).toBe(50);
        let bytes = 0;
        for await (const b of s.ranges.scan(range))
          for (const e of b.entries) bytes += 1 + 8 + e.key.length + e.record.length;
        expect(stats.bytes).toBe(bytes);
        expect(await s.ranges.approximateBytes(range)).toBeGreaterThanOrEqual(0);
        await s.close();
      });

      it('hashes a range independently of write order, and changes with any version', async () => {
        const a = await open();
        const b = await open();
        const keys = Array.from({ length: 60 }, (_, i) => `h${i}`);
        const records = await Promise.all(keys.map((k) => a.put(k, v(k))));
        for (const i of [...keys.keys()].reverse()) await b.merge(keys[i]!, records[i]!.record);
        const all = { start: 0n, end: 0n };
        const ha = await a.ranges.hash(all);
        expect(ha.keys).toBe(60);
        expect(await b.ranges.hash(all)).toEqual(ha);
        await b.put('h7', v('concurrent'));
        const changed = await b.ranges.hash(all);
        expect(changed.hash).not.toBe(ha.hash);
        const sub = { start: tokenOf('h7') - 1n, end: tokenOf('h7') };
        expect((await a.ranges.hash(sub)).hash).not.toBe((await b.ranges.hash(sub)).hash);
        expect(await a.ranges.hash({ start: 1n, end: 2n })).toEqual({ hash: '0000000000000000', keys: 0 });
        await a.close();
        await b.close();
      });

      it('deletes a range, and only that range', async () => {
        const s = await open();
        const keys = await fill(s, 200);
        const range = { start: keys[49]!.token, end: keys[149]!.token };
        expect(await s.ranges.delete(range, { batchCount: 16 })).toEqual({ deleted: 100, kept: 0 });
        expect(await s.ranges.stats(range)).toEqual({ keys: 0, bytes: 0 });
        expect(await s.ranges.stats({ start: 0n, end: 0n })).toMatchObject({ keys: 100 });
        expect((await s.get(keys[50]!.key)).values).toEqual([]);
        expect(texts((await s.get(keys[150]!.key)).values)).toEqual([`value of ${keys[150]!.key}`]);
        await s.close();
      });

      it('a write that races a range delete is kept, not lost', async () => {
        const s = await open();
        const keys = await fill(s, 400);
        const victim = keys[300]!.key;
        const deleting = s.ranges.delete({ start: 0n, end: 0n }, { batchCount: 10 });
        const racing = s.put(victim, v('written during cleanup'));
        const [result] = await Promise.all([deleting, racing]);
        expect(result.deleted + result.kept).toBe(400);
        const left = texts((await s.get(victim)).values);
        expect(left).toContain('written during cleanup');
        expect(result.kept).toBe(await s.ranges.stats({ start: 0n, end: 0n }).then((x) => x.keys));
        await s.close();
      });
    });

    describe('hints', () => {
      it('keeps hints per target in token order, merges repeats, deletes once delivered', async () => {
        const src = await open();
        const s = await open();
        const told: string[] = [];
        s.hints.onTargets = (ids) => told.push(ids.join(','));
        const w1 = await src.put('k1', v('a'));
        const w2 = await src.put('k2', v('b'));
        const w3 = await src.put('k1', v('c'));
        await s.hints.add('node-2', v('k1'), w1.record);
        await s.hints.add('node-2', v('k2'), w2.record);
        await s.hints.add('node-2', v('k1'), w3.record); // merges into the first hint for k1
        await s.hints.add('node-3', v('k2'), w2.record);
        expect(s.hints.stats().count).toBe(3);
        expect(Object.fromEntries([...s.hints.targets()].map(([t, x]) => [t, x.count]))).toEqual({
          'node-2': 2,
          'node-3': 1,
        });
        const listed: Array<{ key: Buffer; record: Buffer }> = [];
        for await (const batch of s.hints.list('node-2', { batchCount: 1 })) listed.push(...batch);
        expect(listed.map((h) => h.key.toString())).toEqual(
          ['k1', 'k2'].sort((x, y) => (tokenOf(x) < tokenOf(y) ? -1 : 1)),
        );
        // Deliver k1's hint to a fresh replica: it gets both siblings.
        const target = await open();
        const h1 = listed.find((h) => h.key.toString() === 'k1')!;
        await target.merge('k1', h1.record);
        expect(texts((await target.get('k1')).values)).toEqual(['a', 'c']);
        expect(await s.hints.remove('node-2', h1.key, h1.record)).toBe(true);
        expect(await s.hints.remove('node-2', h1.key, h1.record)).toBe(false);
        expect(s.hints.stats().count).toBe(2);
        // Whom hints are held for is told when that set changes, not on every hint.
        expect(told).toEqual(['node-2', 'node-2,node-3']);
        const h2 = listed.find((h) => h.key.toString() === 'k2')!;
        expect(await s.hints.remove('node-2', h2.key, h2.record)).toBe(true);
        expect(told).toEqual(['node-2', 'node-2,node-3', 'node-3']);
        for (const x of [src, s, target]) await x.close();
      });

      it('keeps a hint that grew while it was being delivered', async () => {
        const src = await open();
        const s = await open();
        await s.hints.add('n2', v('k'), (await src.put('k', v('1'))).record);
        const first = (await collect(s.hints.list('n2'))).flat()[0];
        await s.hints.add('n2', v('k'), (await src.put('k', v('2'))).record); // arrives mid-delivery
        expect(await s.hints.remove('n2', first!.key, first!.record)).toBe(false);
        const now = (await collect(s.hints.list('n2'))).flat()[0];
        const target = await open();
        await target.merge('k', now!.record);
        expect(texts((await target.get('k')).values)).toEqual(['1', '2']);
        for (const x of [src, s, target]) await x.close();
      });

      it('refuses new hints when full, by count and by bytes, and accepts again after delivery', async () => {
        const src = await open();
        const s = await open({ hints: { maxCount: 2, maxBytes: 10_000 } });
        const rec = (await src.put('k', v('x'))).record;
        await s.hints.add('n2', v('a'), rec);
        await s.hints.add('n2', v('b'), rec);
        const e = await rejects(s.hints.add('n2', v('c'), rec), 'KV_HINTS_FULL');
        expect(e.message).toMatch(/full.*2 hints/);
        await s.hints.add('n2', v('a'), rec); // merging into an existing hint needs no room
        const a = (await collect(s.hints.list('n2'))).flat().find((h) => String(h.key) === 'a')!; // hints carry their time: a's own bytes
        expect(await s.hints.remove('n2', v('a'), a.record)).toBe(true);
        await s.hints.add('n2', v('c'), rec);
        // Concurrent adds cannot overshoot the cap together.
        const fresh = await open({ hints: { maxCount: 2 } });
        const many = await Promise.allSettled(['x1', 'x2', 'x3', 'x4'].map((k) => fresh.hints.add('n4', v(k), rec)));
        expect(many.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
        expect(fresh.hints.stats().count).toBe(2);
        await fresh.close();
        const big = (await src.put('big', Buffer.alloc(20_000))).record;
        await rejects(s.hints.add('n3', v('big'), big), 'KV_HINTS_FULL');
        expect(s.hints.stats()).toMatchObject({ count: 2 });
        await rejects(s.hints.add('n2', v('d'), Buffer.from('junk')), 'KV_BAD_RECORD');
        await src.close();
        await s.close();
      });

      it('counts stored hints again when the store reopens', async () => {
        const engine = kind.make();
        const src = await open();
        const s = await open({}, engine);
        await s.hints.add('n2', v('a'), (await src.put('a', v('x'))).record);
        await s.hints.add('n3', v('b'), (await src.put('b', v('y'))).record);
        const stats = s.hints.stats();
        await s.close();
        const again = await open({}, engine);
        expect(again.hints.stats()).toEqual(stats);
        expect([...again.hints.targets().keys()].sort()).toEqual(['n2', 'n3']);
        await again.close();
        await src.close();
      });
    });

    describe('actors and restarts', () => {
      it('keeps the store id and versions across a clean restart', async () => {
        const engine = kind.make();
        const s = await open({}, engine);
        const id = s.id;
        await s.put('k', v('1'));
        await s.close();
        const again = await open({}, engine);
        expect(again.id).toBe(id);
        await again.put('k', v('2'), (await again.get('k')).context);
        expect(texts((await again.get('k')).values)).toEqual(['2']);
        await again.close();
      });

      it('after an unclean shutdown, writes go under a new actor so no dot can repeat', async () => {
        const engine = kind.make();
        const s = await open({}, engine);
        const first = await s.put('k', v('1'));
        // Simulate a crash: no close(); reopen the engine underneath.
        await engine.close();
        const warnings: unknown[] = [];
        const again = await open({ logger: { warn: (o) => void warnings.push(o), error: () => {} } }, engine);
        expect(warnings).toHaveLength(1);
        const second = await again.put('k', v('2'));
        const other = await open();
        await other.merge('k', first.record);
        await other.merge('k', second.record);
        expect(texts((await other.get('k')).values)).toEqual(['1', '2']);
        await again.close();
        await other.close();
      });

      it('after a power cut loses a write whose dot a replica holds, the dot is not issued again', async () => {
        /** The engine's contents now, in a new engine: the disk as a power cut would leave it. */
        async function snapshot(from: Engine): Promise<Engine> {
          const to = kind.make();
          await to.open();
          const it = from.iterator(Buffer.from([0]), Buffer.alloc(8, 0xff));
          for (let batch = await it.nextv(1000); batch.length > 0; batch = await it.nextv(1000))
            await to.write(
              batch.map(([key, value]) => ({ type: 'put' as const, key, value })),
              false,
            );
          await it.close();
          await to.close();
          return to;
        }
        const engine = kind.make();
        const a = await open({}, engine);
        const b = await open();
        const first = await a.put('k', v('v1'));
        const disk = await snapshot(engine); // what survives the cut: v1 only
        const second = await a.put('k', v('v2'), first.context); // acknowledged, replicated...
        await b.merge('k', second.record);
        const after = await open({ logger: { warn: () => {}, error: () => {} } }, disk); // ...and lost here
        const third = await after.put('k', v('v3'));
        await b.merge('k', third.record);
        expect(texts((await b.get('k')).values)).toEqual(['v2', 'v3']);
        await after.close();
        await b.close();
      });
    });

    describe('key filter', () => {
      /** An engine that counts point reads. */
      function counting(inner: Engine): { engine: Engine; reads: () => number } {
        let reads = 0;
        const engine = wrapEngine(inner, {
          get: (k) => (reads++, inner.get(k)),
          getMany: (k) => ((reads += k.length), inner.getMany(k)),
        });
        return { engine, reads: () => reads };
      }

      it('keys on disk at open are never taken for new: a blind put after a restart is a sibling', async () => {
        const engine = kind.make();
        const s = await open({}, engine);
        const keys = Array.from({ length: 300 }, (_, i) => `key-${i}`);
        await Promise.all(keys.map((k) => s.put(k, v('before'))));
        await s.close();
        const again = await open({}, engine);
        await again.keyFilter.settled;
        expect(again.keyFilter.ready).toBe(true);
        await Promise.all(keys.map((k) => again.put(k, v('after'))));
        for (const k of keys) expect(texts((await again.get(k)).values)).toEqual(['after', 'before']);
        await again.close();
      });

      it('a new key is written without reading; a known key is read first', async () => {
        const { engine, reads } = counting(kind.make());
        const s = await open({}, engine);
        await s.keyFilter.settled;
        const before = reads();
        await s.put('fresh', v('1'));
        expect(reads()).toBe(before);
        await s.put('fresh', v('2'));
        expect(reads()).toBe(before + 1);
        expect(texts((await s.get('fresh')).values)).toEqual(['1', '2']);
        await s.close();
      });
    });

    describe('corruption', () => {
      /** Overwrite the stored record of `key` with bytes that fail the checksum. */
      async function corrupt(engine: Engine, key: string): Promise<void> {
        const k = Buffer.from(key);
        const [hi, lo] = tokenHalves(k);
        const dk = dataKey(hi, lo, k);
        const bytes = (await engine.get(dk))!;
        bytes[bytes.length - 6]! ^= 0xff;
        await engine.write([{ type: 'put', key: dk, value: bytes }], false);
      }

      it('reports a corrupt record with its key, and keeps serving other keys', async () => {
        const engine = kind.make();
        const errors: unknown[] = [];
        const s = await open({ logger: { warn: () => {}, error: (o) => void errors.push(o) } }, engine);
        await s.put('bad', v('x'));
        await s.put('good', v('y'));
        await corrupt(engine, 'bad');
        const e = await rejects(s.get('bad'), 'KV_CORRUPT_RECORD');
        expect(e.message).toContain('"bad"');
        expect(e.message).toContain('checksum');
        expect(texts((await s.get('good')).values)).toEqual(['y']);
        const scanned: string[] = [],
          corrupted: string[] = [];
        for await (const b of s.ranges.scan({ start: 0n, end: 0n })) {
          scanned.push(...b.entries.map((x) => x.key.toString()));
          corrupted.push(...b.corrupt.map(String));
        }
        expect(scanned).toEqual(['good']);
        expect(corrupted).toEqual(['bad']);
        expect(errors.length).toBeGreaterThan(0);
        await s.close();
      });

      it('refuses to open over corrupt metadata, saying what to do, rather than risk reusing dots', async () => {
        for (const name of ['store-id', 'epoch-lease', 'epoch-floor']) {
          const engine = kind.make();
          const s = await open({}, engine);
          await s.close();
          await engine.open();
          await engine.write(
            [{ type: 'put', key: Buffer.concat([Buffer.from('m'), Buffer.from(name)]), value: Buffer.from([1, 2, 3]) }],
            true,
          );
          await engine.close();
          const e = await rejects(Store.open({ engine }), 'KV_CORRUPT_RECORD');
          expect(e.message).toContain(name);
          expect(e.message).toMatch(/new, empty data directory/);
          await engine.open(); // the failed open released the database
          await engine.close();
        }
      });

      it('a write over a corrupt record sets the bad bytes aside and repairs the key', async () => {
        const engine = kind.make();
        const s = await open({}, engine);
        const replica = await open();
        const w = await replica.put('k', v('from replica'));
        await s.merge('k', w.record);
        await corrupt(engine, 'k');
        await s.merge('k', w.record); // anti-entropy or read repair brings it back
        expect(texts((await s.get('k')).values)).toEqual(['from replica']);
        const it = engine.iterator(Buffer.from('q'), Buffer.from('r'));
        expect(await it.nextv(10)).toHaveLength(1); // quarantined, not silently dropped
        await it.close();
        await s.close();
        await replica.close();
      });
    });
  });
}

describe('store on LevelDB: opening', () => {
  it('reports a data directory it cannot open with KV_IO and the path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ringkv-io-'));
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, 'x');
    const e = await rejects(Store.open({ path: join(file, 'db') }), 'KV_IO');
    expect(e.message).toContain(file);
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the data directory, parents included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ringkv-mk-'));
    const s = await Store.open({ path: join(dir, 'data', 'node1', 'db') });
    await s.put('k', Buffer.from('v'));
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second store on the same directory while the first is open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ringkv-lock-'));
    const first = await Store.open({ path: join(dir, 'db') });
    await rejects(Store.open({ path: join(dir, 'db') }), 'KV_IO');
    await first.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
