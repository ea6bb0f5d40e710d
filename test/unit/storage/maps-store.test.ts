/**
 * A map's register at the store (issue 30): last-writer-wins by its path, whatever its
 * bucket's sibling policy, on every path a record takes between replicas — merge,
 * mergeMany (anti-entropy), hints, ingest (streaming), and the coordinator's join of
 * replies (read repair) — while every other sub-key (a flag) keeps concurrent adds. And
 * what one writeMany may answer: no delta for an increment seen before, and no more than
 * MAX_WRITE_MANY_BYTES of records, refused before anything is written.
 */
import { describe, expect, it } from 'vitest';
import { storedKey, subKey } from '../../../src/buckets/index.js';
import { DataTypeError } from '../../../src/buckets/index.js';
import { MAX_WRITE_MANY_BYTES, MemoryEngine, Store, resolvePage, resolveReplies } from '../../../src/storage/index.js';
import { decodeRecord } from '../../../src/kinds/versions/codec.js';

const parent = storedKey('profiles', Buffer.from('user:1'));
const register = { fields: [{ name: 'name', type: 'register' as const }] };
const flag = { fields: [{ name: 'admin', type: 'flag' as const }] };
const reg = subKey(parent, register);

/** Two replicas that each assign the register (b later, by its clock) and enable the flag, neither seeing the other. */
async function concurrent(): Promise<{ a: Buffer; b: Buffer; flagA: Buffer; flagB: Buffer }> {
  const [sa, sb] = await Promise.all(
    [1_000, 2_000].map((t) => Store.open({ engine: new MemoryEngine(), now: () => t, policyOf: () => 'siblings' })),
  );
  const wa = await sa!.writeMany(parent, [
    { op: 'assign', path: register, value: Buffer.from('Ada') },
    { op: 'add', path: flag },
  ]);
  const wb = await sb!.writeMany(parent, [
    { op: 'assign', path: register, value: Buffer.from('Grace') },
    { op: 'add', path: flag },
  ]);
  await Promise.all([sa!.close(), sb!.close()]);
  return { a: wa.writes[0]!.record, b: wb.writes[0]!.record, flagA: wa.writes[1]!.record, flagB: wb.writes[1]!.record };
}

describe("a map's register", () => {
  it('keeps the last write on merge, mergeMany and ingest, in either order; a flag keeps both adds', async () => {
    const { a, b, flagA, flagB } = await concurrent();
    const versionsOf = async (s: Store): Promise<number> => (await s.get(reg)).versions;
    for (const [first, second] of [
      [a, b],
      [b, a],
    ] as const) {
      const s = await Store.open({ engine: new MemoryEngine(), policyOf: () => 'siblings' });
      await s.merge(reg, first);
      await s.merge(reg, second);
      expect((await s.get(reg)).values.map(String)).toEqual(['Grace']);
      expect(await versionsOf(s)).toBe(1);
      const t = await Store.open({ engine: new MemoryEngine(), policyOf: () => 'siblings' });
      await t.mergeMany([
        { key: reg, record: first },
        { key: reg, record: second },
      ]);
      expect((await t.get(reg)).values.map(String)).toEqual(['Grace']);
      const u = await Store.open({ engine: new MemoryEngine(), policyOf: () => 'siblings' });
      await u.ingest([{ key: reg, record: first }]);
      await u.ingest([{ key: reg, record: second }]);
      expect((await u.get(reg)).values.map(String)).toEqual(['Grace']);
      await Promise.all([s.close(), t.close(), u.close()]);
    }
    const f = await Store.open({ engine: new MemoryEngine(), policyOf: () => 'lww' }); // even in a bucket whose own policy is lww
    const fk = subKey(parent, flag);
    await f.mergeMany([
      { key: fk, record: flagA },
      { key: fk, record: flagB },
    ]);
    expect((await f.get(fk)).versions).toBe(2); // two concurrent enables: both kept (observed-remove)
    await f.close();
  });

  it("is joined last-writer-wins from replicas' replies, one value, and the stale reply repaired", async () => {
    const { a, b } = await concurrent();
    const r = resolveReplies(reg, [a, b]);
    expect(r.values.map(String)).toEqual(['Grace']);
    expect(r.stale).toEqual([true, true]); // b holds the winner, but not a's clock entry, which the join carries
    const page = resolvePage([
      { records: [{ key: reg, record: a }], next: undefined },
      { records: [{ key: reg, record: b }], next: undefined },
    ]);
    expect(page.entries.map((e) => (e.kind === 'versions' ? e.read.values.map(String) : []))).toEqual([['Grace']]);
  });
});

describe('what one map update writes and answers', () => {
  it("a hint joins a register's records last-writer-wins too", async () => {
    const { a, b } = await concurrent();
    const s = await Store.open({ engine: new MemoryEngine() });
    await s.hints.add('n9', reg, a);
    await s.hints.add('n9', reg, b);
    const held = (await s.hints.get('n9', reg))!;
    expect(decodeRecord(held).versions.siblings.map((x) => String(x.value))).toEqual(['Grace']);
    await s.close();
  });

  it('an increment seen before answers its full state and no delta (the delta would be the same bytes again)', async () => {
    const s = await Store.open({ engine: new MemoryEngine() });
    const inc = [{ op: 'increment' as const, path: { fields: [{ name: 'n', type: 'counter' as const }] }, amount: 2 }];
    const first = await s.writeMany(parent, inc, { requestId: Buffer.from('r1') });
    expect(first.writes[0]!.delta).toBeDefined();
    const again = await s.writeMany(parent, inc, { requestId: Buffer.from('r1') });
    expect(again.duplicate).toBe(true);
    expect(again.writes[0]!.delta).toBeUndefined();
    await s.close();
  });

  it(`refuses an update whose records would pass ${MAX_WRITE_MANY_BYTES} bytes, writing none of it`, async () => {
    const s = await Store.open({ engine: new MemoryEngine() });
    const big = Buffer.alloc(1 << 20, 7);
    const ops = Array.from({ length: 7 }, (_, i) => ({
      op: 'assign' as const,
      path: { fields: [{ name: `r${i}`, type: 'register' as const }] },
      value: big,
    }));
    const e = await s.writeMany(parent, ops).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(DataTypeError);
    expect((e as DataTypeError).code).toBe('DT_BAD_OP');
    expect((e as Error).message).toMatch(/over the limit of 6291456 one update may write; split it/);
    expect((await s.readRange(parent, undefined, 100)).records).toEqual([]);
    // Five of them fit.
    await s.writeMany(parent, ops.slice(0, 5));
    for (let i = 0; i < 7; i++)
      expect(
        (await s.get(subKey(parent, ops[i]!.path))).values.map((v) => v.length),
        `r${i}`,
      ).toEqual(i < 5 ? [1 << 20] : []);
    await s.close();
  });
});
