/**
 * The store's set operations (issue 30): `writeMany` (presence writes on sub-keys in one
 * batch: add supersedes what the issuer holds, remove what its context saw), and
 * `readRange` (a parent's sub-keys in pages). The add-wins and observed-remove rules are
 * shown on two stores; each refusal with its code; the one-batch and lock-order promises;
 * and resolvePage, the join of several replicas' pages.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DataTypeError, storedKey, subKey } from '../../../src/buckets/index.js';
import {
  KvError,
  MAX_RANGE_KEYS,
  MAX_SUB_OPS,
  MemoryEngine,
  PRESENT,
  Store,
  resolvePage,
} from '../../../src/storage/index.js';
import type { Engine, StoreOptions, SubOp } from '../../../src/storage/index.js';
import { decodeRecord } from '../../../src/kinds/versions/codec.js';
import { dataKey, tokenHalves } from '../../../src/storage/keys.js';
import { ENGINE_KINDS, wrapEngine } from './engines.js';

const parent = storedKey('tags', Buffer.from('doc:1'));
const other = storedKey('tags', Buffer.from('doc:10')); // extends the first parent's key: its sub-keys must stay apart
const el = (e: string) => subKey(parent, { element: e });
const add = (e: string): SubOp => ({ op: 'add', path: { element: e } });
const remove = (e: string, context: Uint8Array): SubOp => ({ op: 'remove', path: { element: e }, context });

/** The code (and message) of what the promise rejects with. */
async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof KvError) && !(e instanceof DataTypeError)) throw new Error(`expected a refusal, got ${String(e)}`);
  return { code: e.code, message: e.message };
}

/** Flip the last byte (the checksum's) of a key's record on disk, as bit rot would: its data key and the bad bytes. */
async function corrupt(engine: Engine, k: Buffer): Promise<{ dk: Buffer; bytes: Buffer }> {
  const [hi, lo] = tokenHalves(k);
  const dk = dataKey(hi, lo, k);
  const bytes = (await engine.get(dk))!;
  bytes[bytes.length - 1]! ^= 0xff;
  await engine.write([{ type: 'put', key: dk, value: bytes }], false);
  return { dk, bytes };
}

/** True when the element's record on this store holds a live sibling. */
async function present(s: Store, e: string, p = parent): Promise<boolean> {
  return (await s.get(subKey(p, { element: e }))).values.length > 0;
}

for (const makeKind of ENGINE_KINDS) {
  const kind = makeKind();
  describe(`sets on ${kind.name}`, () => {
    afterAll(() => kind.cleanup());
    const open = (o: Omit<StoreOptions, 'engine' | 'path'> = {}, engine: Engine = kind.make()) =>
      Store.open({ engine, ...o });

    it('adds elements as sub-key records of one live PRESENT sibling, and removes them with their context', async () => {
      const s = await open();
      const r = await s.writeMany(parent, [add('x'), add('y')]);
      expect(r.duplicate).toBe(false);
      expect(r.writes.map((w) => [w.key.equals(el(w.key.subarray(-1).toString())), w.duplicate])).toEqual([
        [true, false],
        [true, false],
      ]);
      for (const w of r.writes) {
        const v = decodeRecord(w.record).versions;
        expect(v.siblings.map((x) => x.value)).toEqual([PRESENT]);
        expect((await s.getRecord(w.key))!.equals(w.record)).toBe(true);
      }
      // Adding again supersedes what this replica holds: still one live sibling.
      const again = await s.writeMany(parent, [add('x')]);
      expect(decodeRecord(again.writes[0]!.record).versions.siblings).toHaveLength(1);
      const read = await s.get(el('x'));
      await s.writeMany(parent, [remove('x', read.context)]);
      expect([await present(s, 'x'), await present(s, 'y')]).toEqual([false, true]);
      expect((await s.get(el('x'))).deleted).toBe(true);
      // A re-add supersedes the tombstone too (the issuer's own clock is its context): one sibling, live.
      const readded = await s.writeMany(parent, [add('x')]);
      expect(decodeRecord(readded.writes[0]!.record).versions.siblings.map((x) => x.value)).toEqual([PRESENT]);
      await s.close();
    });

    it('add wins: a remove on one replica does not cover an add it never saw', async () => {
      const a = await open(),
        b = await open();
      const first = await a.writeMany(parent, [add('e')]);
      await b.merge(el('e'), first.writes[0]!.record);
      const seen = await b.get(el('e'));
      const removed = await b.writeMany(parent, [remove('e', seen.context)]);
      const readded = await a.writeMany(parent, [add('e')]); // concurrent with the remove
      await a.merge(el('e'), removed.writes[0]!.record);
      await b.merge(el('e'), readded.writes[0]!.record);
      expect([await present(a, 'e'), await present(b, 'e')]).toEqual([true, true]);
      await a.close();
      await b.close();
    });

    it('observed remove: a remove issued where the add has not arrived still supersedes it when it does', async () => {
      const a = await open(),
        b = await open();
      const added = await a.writeMany(parent, [add('e')]);
      const seen = await a.get(el('e')); // the reader read a
      const removed = await b.writeMany(parent, [remove('e', seen.context)]); // b never held e
      expect(await present(b, 'e')).toBe(false);
      await b.merge(el('e'), added.writes[0]!.record); // the add arrives late
      await a.merge(el('e'), removed.writes[0]!.record);
      expect([await present(a, 'e'), await present(b, 'e')]).toEqual([false, false]);
      await a.close();
      await b.close();
    });

    it('answers a request sent twice as a duplicate, writing nothing the second time', async () => {
      const s = await open();
      const rid = Buffer.from('req-1');
      const first = await s.writeMany(parent, [add('x'), add('y')], { requestId: rid });
      const writes = s.writeStats.writes;
      const again = await s.writeMany(parent, [add('x'), add('y')], { requestId: rid });
      expect(again.duplicate).toBe(true);
      expect(again.writes.map((w, i) => w.duplicate && w.record.equals(first.writes[i]!.record))).toEqual([true, true]);
      expect(s.writeStats.writes).toBe(writes);
      expect(s.writeStats.duplicates).toBe(2);
      // One op seen before and one new: only the new one is written.
      const mixed = await s.writeMany(parent, [add('x'), add('z')], { requestId: rid });
      expect([mixed.duplicate, ...mixed.writes.map((w) => w.duplicate)]).toEqual([false, true, false]);
      expect(s.writeStats.duplicates).toBe(3);
      // A remove retried with its context is one remove too.
      const ctx = (await s.get(el('x'))).context;
      await s.writeMany(parent, [remove('x', ctx)], { requestId: Buffer.from('req-2') });
      expect((await s.writeMany(parent, [remove('x', ctx)], { requestId: Buffer.from('req-2') })).duplicate).toBe(true);
      await s.close();
    });

    it('refuses bad calls whole, each with its code, and writes nothing', async () => {
      const s = await open({ limits: { maxValueBytes: 64 } });
      await s.counterUpdate(el('counted'), 1); // a sub-key holding a counter (a rolled-back or confused node)
      await s.put(subKey(parent, { fields: [{ name: 'v', type: 'counter' }] }), Buffer.from('versions')); // and a counter field holding versions
      const ctx = (await s.get(el('y'))).context;
      const cases: Array<[string, () => Promise<unknown>, string, RegExp]> = [
        ['no op', () => s.writeMany(parent, []), 'DT_BAD_OP', /1 to 1000 ops, got 0/],
        [
          'too many ops',
          () =>
            s.writeMany(
              parent,
              Array.from({ length: MAX_SUB_OPS + 1 }, (_, i) => add(`e${i}`)),
            ),
          'DT_BAD_OP',
          /got 1001; split/,
        ],
        [
          'one element twice',
          () => s.writeMany(parent, [add('a'), add('b'), add('a')]),
          'DT_BAD_OP',
          /op 2 names the same element or field as op 0/,
        ],
        [
          'a register path',
          () => s.writeMany(parent, [{ op: 'add', path: { fields: [{ name: 'r', type: 'register' }] } }]),
          'DT_BAD_OP',
          /add applies to a set element or a flag field \(enable\), not a register field/,
        ],
        [
          'an unknown op',
          () => s.writeMany(parent, [{ op: 'toggle', path: { element: 'a' } } as unknown as SubOp]),
          'DT_BAD_OP',
          /unknown op "toggle"; use add, remove, assign, increment/,
        ],
        [
          'a remove without context',
          () => s.writeMany(parent, [add('a'), remove('b', Buffer.alloc(0))]),
          'DT_NO_CONTEXT',
          /op 1: a remove needs the context/,
        ],
        [
          "another element's context",
          () => s.writeMany(parent, [remove('x', ctx)]),
          'KV_BAD_CONTEXT',
          /op 0: .*read from a different key/,
        ],
        [
          'a default-bucket parent',
          () => s.writeMany(Buffer.from('plain'), [add('a')]),
          'DT_BAD_PARENT',
          /named buckets/,
        ],
        ['an empty element', () => s.writeMany(parent, [add('')]), 'DT_ELEMENT_EMPTY', /at least one byte/],
        [
          'an element too large',
          () => s.writeMany(parent, [add('e'.repeat(1025))]),
          'DT_ELEMENT_TOO_LARGE',
          /1025 bytes/,
        ],
        [
          'a bad request id',
          () => s.writeMany(parent, [add('a')], { requestId: Buffer.alloc(0) }),
          'KV_BAD_REQUEST_ID',
          /1 to 64 bytes/,
        ],
        [
          'a counter at a sub-key',
          () => s.writeMany(parent, [add('a'), add('counted')]),
          'KV_WRONG_TYPE',
          /holds a counter, and an add op/,
        ],
        [
          'an assign to a counter field',
          () =>
            s.writeMany(parent, [
              { op: 'assign', path: { fields: [{ name: 'n', type: 'counter' }] }, value: Buffer.from('v') },
            ]),
          'DT_BAD_OP',
          /assign applies to a register field, not a counter field/,
        ],
        [
          'an increment of a register',
          () =>
            s.writeMany(parent, [{ op: 'increment', path: { fields: [{ name: 'r', type: 'register' }] }, amount: 1 }]),
          'DT_BAD_OP',
          /increment applies to a counter field/,
        ],
        [
          'an increment of 0',
          () =>
            s.writeMany(parent, [{ op: 'increment', path: { fields: [{ name: 'n', type: 'counter' }] }, amount: 0 }]),
          'KV_BAD_AMOUNT',
          /nonzero/,
        ],
        [
          'a register value too large',
          () =>
            s.writeMany(parent, [
              { op: 'assign', path: { fields: [{ name: 'r', type: 'register' }] }, value: Buffer.alloc(65) },
            ]),
          'KV_VALUE_TOO_LARGE',
          /65 bytes is over the limit of 64/,
        ],
        [
          'an increment of versions',
          () =>
            s.writeMany(parent, [
              add('a'),
              { op: 'increment', path: { fields: [{ name: 'v', type: 'counter' }] }, amount: 1 },
            ]),
          'KV_WRONG_TYPE',
          /holds versions .*, and a counter field increment/,
        ],
      ];
      for (const [what, p, code, message] of cases) {
        const r = await refusal(p());
        expect([what, r.code], what).toEqual([what, code]);
        expect(r.message, what).toMatch(message);
      }
      const held = [el('counted'), subKey(parent, { fields: [{ name: 'v', type: 'counter' }] })].sort(Buffer.compare);
      expect((await s.readRange(parent, undefined, 100)).records.map((r) => r.key)).toEqual(held);
      await s.close();
    });

    it('writes one engine batch per call, whatever its size, and takes its locks in key order', async () => {
      let batches = 0;
      const inner = kind.make();
      const s = await open(
        {},
        wrapEngine(inner, {
          write: (ops, sync) => ((batches += ops.some((o) => o.key[0] === 0x64) ? 1 : 0), inner.write(ops, sync)),
        }),
      );
      await s.writeMany(
        parent,
        Array.from({ length: 50 }, (_, i) => add(`e${i}`)),
      );
      expect(batches).toBe(1);
      // Two calls naming the same elements in opposite orders, many times at once: no deadlock, every add lands.
      const names = Array.from({ length: 20 }, (_, i) => `k${i}`);
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          s.writeMany(parent, (i % 2 === 0 ? names : [...names].reverse()).map(add)),
        ),
      );
      for (const n of names) expect(await present(s, n)).toBe(true);
      await s.close();
    });

    it("reads a parent's sub-keys in pages, in key order, and nothing of another parent or of the parent itself", async () => {
      const s = await open();
      const names = Array.from({ length: 25 }, (_, i) => `e${String(i).padStart(2, '0')}`);
      await s.writeMany(parent, names.map(add));
      await s.writeMany(other, [add('z')]);
      await s.put(parent, Buffer.from('the parent key itself'));
      const seen: string[] = [];
      let after: Buffer | undefined,
        pages = 0;
      do {
        const page = await s.readRange(parent, after, 10);
        seen.push(...page.records.map((r) => r.key.subarray(-3).toString()));
        for (const r of page.records) expect((await s.getRecord(r.key))!.equals(r.record)).toBe(true);
        after = page.next;
        pages++;
      } while (after !== undefined);
      expect(seen).toEqual(names);
      expect(pages).toBe(3);
      expect((await s.readRange(other, undefined, 10)).records.map((r) => r.key.subarray(-1).toString())).toEqual([
        'z',
      ]);
      expect(await s.readRange(storedKey('tags', Buffer.from('empty')), undefined, 10)).toEqual({
        records: [],
        corrupt: [],
        next: undefined,
      });
      // A page that ends exactly at the span's end says so.
      expect((await s.readRange(parent, undefined, 25)).next).toBeUndefined();
      expect((await s.readRange(parent, undefined, 24)).next).toBeDefined();
      await s.close();
    });

    it('refuses a bad page request with its code', async () => {
      const s = await open();
      for (const limit of [0, MAX_RANGE_KEYS + 1, 1.5])
        expect((await refusal(s.readRange(parent, undefined, limit))).code).toBe('KV_BAD_OPTION');
      expect(await refusal(s.readRange(parent, subKey(other, { element: 'z' }), 10))).toMatchObject({
        code: 'KV_BAD_OPTION',
        message: expect.stringMatching(/no sub-key of this parent/) as string,
      });
      expect((await refusal(s.readRange(Buffer.from('plain'), undefined, 10))).code).toBe('DT_BAD_PARENT');
      await s.close();
    });

    it('reports a corrupt sub-key record apart and goes on past it', async () => {
      const engine = kind.make();
      const s = await open({}, engine);
      await s.writeMany(parent, [add('a'), add('b'), add('c')]);
      const k = el('b');
      await corrupt(engine, k);
      const page = await s.readRange(parent, undefined, 2);
      expect(page.records.map((r) => r.key.subarray(-1).toString())).toEqual(['a']);
      expect(page.corrupt.map((key) => key.equals(k))).toEqual([true]);
      expect(page.next!.equals(k)).toBe(true);
      expect((await s.readRange(parent, page.next, 2)).records.map((r) => r.key.subarray(-1).toString())).toEqual([
        'c',
      ]);
      await s.close();
    });

    it('sets a corrupt element record aside and writes under a new actor, so no dot is issued twice', async () => {
      const engine = kind.make();
      const s = await open({ logger: { warn: () => {}, error: () => {} } }, engine);
      const first = decodeRecord((await s.writeMany(parent, [add('x')])).writes[0]!.record).versions.siblings[0]!;
      const { dk, bytes } = await corrupt(engine, el('x'));
      const after = decodeRecord((await s.writeMany(parent, [add('x'), add('y')])).writes[0]!.record).versions.siblings;
      expect(after).toHaveLength(1);
      expect(after[0]!.actor).not.toBe(first.actor); // the old actor's dot 1 may be held elsewhere
      const q = dk.subarray(0);
      q[0] = 0x71;
      expect((await engine.get(q))!.equals(bytes)).toBe(true); // the bad bytes kept aside, not lost
      await s.close();
    });

    it('adds and removes a flag field and a set field element as the set elements are', async () => {
      const s = await open();
      const flag = { fields: [{ name: 'on', type: 'flag' as const }] };
      const inSetField = { fields: [{ name: 'tags', type: 'set' as const }], element: 'red' };
      await s.writeMany(parent, [
        { op: 'add', path: flag },
        { op: 'add', path: inSetField },
      ]);
      const ctx = (await s.get(subKey(parent, flag))).context;
      await s.writeMany(parent, [{ op: 'remove', path: flag, context: ctx }]);
      expect((await s.get(subKey(parent, flag))).deleted).toBe(true);
      expect((await s.get(subKey(parent, inSetField))).values).toEqual([PRESENT]);
      await s.close();
    });
  });
}

describe('set sub-keys on a memory engine', () => {
  it('are ingested and merged as any record (a sub-key is a record)', async () => {
    const a = await Store.open({ engine: new MemoryEngine() }),
      b = await Store.open({ engine: new MemoryEngine() });
    const r = await a.writeMany(parent, [add('x')]);
    expect(await b.ingest([{ key: r.writes[0]!.key, record: r.writes[0]!.record }])).toEqual({ copied: 1, merged: 0 });
    expect(await present(b, 'x')).toBe(true);
    await a.close();
    await b.close();
  });
});

describe('resolvePage', () => {
  const names = (keys: readonly Buffer[]) => keys.map((k) => k.subarray(-2).toString());

  it("joins replicas' pages per sub-key up to the least page end, marking who lacks what", async () => {
    const openMemory = () => Store.open({ engine: new MemoryEngine() });
    const [a, b, c] = [await openMemory(), await openMemory(), await openMemory()];
    const all = ['e0', 'e1', 'e2', 'e3', 'e4', 'e5'];
    const added = await a.writeMany(parent, all.map(add));
    // b holds every element but e1; c only e0 and e5, and a removal of e3 that a has not seen.
    for (const w of added.writes) if (!w.key.equals(el('e1'))) await b.merge(w.key, w.record);
    for (const w of added.writes)
      if (w.key.equals(el('e0')) || w.key.equals(el('e5')) || w.key.equals(el('e3'))) await c.merge(w.key, w.record);
    await c.writeMany(parent, [remove('e3', (await c.get(el('e3'))).context)]);
    // a and b stop after 3 sub-keys (e2 and e3: the least is e2), c reads to its end.
    const pages = [
      await a.readRange(parent, undefined, 3),
      await b.readRange(parent, undefined, 3),
      await c.readRange(parent, undefined, 3),
    ];
    const page = resolvePage(pages);
    expect(names(page.entries.map((e) => e.key))).toEqual(['e0', 'e1', 'e2']);
    expect(page.next!.equals(el('e2'))).toBe(true);
    const e1 = page.entries[1]!;
    expect(e1.kind).toBe('versions');
    if (e1.kind === 'versions') {
      expect(e1.read.values).toEqual([PRESENT]);
      expect(e1.read.stale).toEqual([false, true, true]);
      // The element's context removes it: it is that sub-key's, not the parent's.
      await a.writeMany(parent, [remove('e1', e1.read.context)]);
      expect(await present(a, 'e1')).toBe(false);
    }
    // The next page starts after e2 and ends where every reply ends: e3 removed (c's tombstone joined), e4, e5.
    const rest = resolvePage([
      await a.readRange(parent, page.next, 3),
      await b.readRange(parent, page.next, 3),
      await c.readRange(parent, page.next, 3),
    ]);
    expect(names(rest.entries.map((e) => e.key))).toEqual(['e3', 'e4', 'e5']);
    expect(rest.next).toBeUndefined();
    expect(rest.entries.map((e) => (e.kind === 'versions' ? e.read.found : undefined))).toEqual([false, true, true]);
    for (const s of [a, b, c]) await s.close();
  });

  it('joins a counter field by the counter join, and refuses a reply of the other kind', async () => {
    const [a, b] = [await Store.open({ engine: new MemoryEngine() }), await Store.open({ engine: new MemoryEngine() })];
    const field = subKey(parent, { fields: [{ name: 'views', type: 'counter' }] });
    await a.counterUpdate(field, 2);
    await b.counterUpdate(field, 3);
    const page = resolvePage([await a.readRange(parent, undefined, 10), await b.readRange(parent, undefined, 10)]);
    expect(page.entries).toHaveLength(1);
    const [e] = page.entries;
    expect(e!.kind === 'counter' && e!.read.value).toBe(5n);
    expect(e!.read.stale).toEqual([true, true]);
    await b.writeMany(parent, [add('x')]);
    const wrong = (await b.readRange(parent, undefined, 10)).records.find((r) => r.key.equals(el('x')))!;
    const counterRecord = (await a.readRange(parent, undefined, 10)).records[0]!.record;
    expect(() =>
      resolvePage([
        { records: [{ key: el('x'), record: counterRecord }], next: undefined },
        { records: [wrong], next: undefined },
      ]),
    ).toThrow(expect.objectContaining({ code: 'KV_WRONG_TYPE' }) as Error);
    expect(resolvePage([{ records: [], next: undefined }])).toEqual({ entries: [], next: undefined });
    for (const s of [a, b]) await s.close();
  });
});
