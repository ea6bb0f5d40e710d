/**
 * The coordinator's typed paths (issue 30): counters issued on the first primary up and
 * sent on as deltas (the full state to a replica that missed one, and to hints), counted
 * once per request id through any coordinator; sets as one record per element, read in
 * pages joined over R primaries and repaired per element, with observed-remove; maps as
 * one record per field, an update with an increment issued as a counter's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { storedKey, subKey, type FieldName } from '../../../src/buckets/index.js';
import { ReplicationError } from '../../../src/replication/replication-errors.js';
import { value } from '../../../src/kinds/counter/counter.js';
import { decodeCounter } from '../../../src/kinds/counter/counter-record.js';
import { FakeCluster, codeOf, eventually } from './fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const counterKey = (k: string): Buffer => storedKey('hits', B(k));
const setKey = (k: string): Buffer => storedKey('carts', B(k));
const subKeyOf = (parent: Buffer, fields: readonly FieldName[]): Buffer => subKey(parent, { fields });

let cluster: FakeCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

/** The counter's value as replica `id` holds it (undefined: none). */
async function heldValue(c: FakeCluster, id: string, key: Buffer): Promise<bigint | undefined> {
  const r = await c.store(id).getRecord(key);
  return r === undefined ? undefined : value(decodeCounter(r).state);
}

async function elementsOf(c: FakeCluster, from: string, key: Buffer, limit?: number): Promise<string[]> {
  const out: string[] = [];
  let after: Buffer | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await c.coordinator(from).setRead(key, { after, limit }, { quorum: 2 });
    out.push(...page.elements.map((e) => String(e.element)));
    if (page.next === undefined) return out;
    after = page.next;
  }
  throw new Error('more than 100 pages');
}

describe('coordinator: counters', () => {
  it('increments from any node are issued on the first primary and reach every replica; a read joins them', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = counterKey('page');
    const owners = c.ring.preferenceList(key, 3);
    let sum = 0n;
    for (const [i, from] of ['n1', 'n2', 'n3', 'n4', 'n5'].entries()) {
      const amount = i % 2 === 0 ? i + 1 : -(i + 1);
      sum += BigInt(amount);
      await c.coordinator(from).counterUpdate(key, amount, { quorum: 2 });
    }
    expect(c.net.callsTo.get(owners[0]!)?.counterUpdate).toBe(4); // its own increment took no hop
    for (const id of owners.slice(1)) expect(c.net.callsTo.get(id)?.counterUpdate ?? 0).toBe(0);
    await eventually(async () =>
      (await Promise.all(owners.map((id) => heldValue(c, id, key)))).every((v) => v === sum),
    );
    for (const from of ['n1', 'n4'])
      expect(await c.coordinator(from).counterGet(key, { quorum: 3 })).toEqual({ value: sum, found: true });
    expect(await c.coordinator('n2').counterGet(counterKey('never'), { quorum: 2 })).toEqual({
      value: 0n,
      found: false,
    });
  });

  it('one request id through two coordinators counts once, on every replica', async () => {
    cluster = await FakeCluster.create(4);
    const c = cluster;
    const key = counterKey('once');
    const requestId = B('0123456789abcdef');
    await c.coordinator('n1').counterUpdate(key, 7, { requestId, quorum: 3 });
    await c.coordinator('n2').counterUpdate(key, 7, { requestId, quorum: 3 }); // a retry through another node
    // The first primary down: the retry is issued on the second, a new issuer for the key.
    c.down.add(c.ring.preferenceList(key, 3)[0]!);
    await c.coordinator('n3').counterUpdate(key, 7, { requestId, quorum: 2 });
    c.down.clear();
    expect((await c.coordinator('n4').counterGet(key, { quorum: 3 })).value).toBe(7n);
    await c.coordinator('n4').counterUpdate(key, 7, { quorum: 2 }); // no request id: a new increment each time
    expect((await c.coordinator('n1').counterGet(key, { quorum: 3 })).value).toBe(14n);
  });

  it('a replica that missed a delta is sent the full state, and ends with every increment', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = counterKey('gap');
    const [first, , third] = c.ring.preferenceList(key, 3) as [string, string, string];
    await c.coordinator(first).counterUpdate(key, 5, { quorum: 2 });
    c.net.faults.set(`*>${third}`, { unreachable: true }); // it misses the next increment (no fallback: 3 nodes)
    await c.coordinator(first).counterUpdate(key, 3, { quorum: 2 });
    c.net.faults.clear();
    await c.store(first).hints.list(third).next(); // the hint stays undelivered: the next delta finds a gap
    expect(await heldValue(c, third, key)).toBe(5n);
    await c.coordinator(first).counterUpdate(key, 1, { quorum: 3 });
    expect(c.coordinator(first).counters.counterGaps).toBe(1);
    expect(await heldValue(c, third, key)).toBe(9n);
  });

  it('with the first primary down, the next one issues; the hint holds the full state', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = counterKey('down');
    const [first, second] = c.ring.preferenceList(key, 3) as [string, string, string];
    await c.coordinator(first).counterUpdate(key, 2, { quorum: 3 });
    c.down.add(first);
    c.net.faults.set(`*>${first}`, { unreachable: true });
    const from = ['n1', 'n2', 'n3', 'n4', 'n5'].find((x) => x !== first)!;
    await c.coordinator(from).counterUpdate(key, 4, { quorum: 3 });
    expect(c.net.callsTo.get(second)?.counterUpdate).toBe(1);
    const fallback = c.ring.targets(key, 3, (x) => x !== first).find((t) => t.for === first)!.id;
    const hint = await c.store(fallback).hints.get(first, key);
    expect(hint).toBeDefined();
    expect(value(decodeCounter(hint!).state)).toBe(6n); // the full state, not the delta of 4
    c.down.clear();
    c.net.faults.clear();
  });

  it('with the first primary on an earlier release (RK_UNSUPPORTED), the next one issues; a set update likewise', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = counterKey('upgrading');
    const [first, second] = c.ring.preferenceList(key, 3) as [string, string, string];
    c.net.faults.set(`*>${first}`, { unsupported: ['counterUpdate', 'writeMany'] });
    const from = ['n1', 'n2', 'n3', 'n4', 'n5'].find((x) => x !== first)!;
    expect(await c.coordinator(from).counterUpdate(key, 4, { quorum: 2 })).toEqual({ value: 4n });
    expect(c.net.callsTo.get(second)?.counterUpdate).toBe(1);
    // Two of a set's primaries on the earlier release, through a coordinator that is none of them: the third issues.
    const set = setKey('upgrading');
    const primaries = c.ring.preferenceList(set, 3);
    for (const p of primaries.slice(0, 2)) c.net.faults.set(`*>${p}`, { unsupported: ['counterUpdate', 'writeMany'] });
    const outside = ['n1', 'n2', 'n3', 'n4', 'n5'].find((x) => !primaries.includes(x))!;
    await c.coordinator(outside).setUpdate(set, [{ op: 'add', element: B('x') }], { quorum: 2 });
    expect(c.net.callsTo.get(primaries[2]!)?.writeMany).toBe(1);
    expect(await c.coordinator(outside).setContains(set, B('x'), { quorum: 2 })).toMatchObject({ present: true });
    c.net.faults.clear();
  });

  it('a read repairs a replica that lacks increments', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = counterKey('repair');
    const [first, , third] = c.ring.preferenceList(key, 3) as [string, string, string];
    c.net.faults.set(`*>${third}`, { unreachable: true });
    await c.coordinator(first).counterUpdate(key, 10, { quorum: 2 });
    c.net.faults.clear();
    expect(await heldValue(c, third, key)).toBeUndefined();
    expect((await c.coordinator(third).counterGet(key, { quorum: 3 })).value).toBe(10n);
    await eventually(async () => (await heldValue(c, third, key)) === 10n);
    expect(c.coordinator(third).counters.readRepairs).toBeGreaterThan(0);
  });

  it('refuses a bad amount before any replica call, and a counter op on versions or a read of a counter as versions', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    for (const amount of [0, 1.5, Number.MAX_SAFE_INTEGER + 2, NaN])
      expect(await codeOf(c.coordinator('n1').counterUpdate(counterKey('k'), amount))).toBe('KV_BAD_AMOUNT');
    expect(c.net.calls.counterUpdate).toBe(0);
    await c.coordinator('n1').put(counterKey('plain'), B('v'), Buffer.alloc(0), { quorum: 3 });
    expect(await codeOf(c.coordinator('n2').counterUpdate(counterKey('plain'), 1))).toBe('KV_WRONG_TYPE');
    expect(await codeOf(c.coordinator('n2').counterGet(counterKey('plain'), { quorum: 3 }))).toBe('KV_WRONG_TYPE');
    await c.coordinator('n1').counterUpdate(counterKey('ctr'), 1, { quorum: 3 });
    expect(await codeOf(c.coordinator('n2').get(counterKey('ctr'), { quorum: 3 }))).toBe('KV_WRONG_TYPE');
  });
});

describe('coordinator: sets', () => {
  it('adds from any node, read back in pages in byte order with a context per element', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = setKey('cart');
    const names = Array.from({ length: 25 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
    for (let i = 0; i < names.length; i += 5)
      await c.coordinator(`n${i / 5 + 1}`).setUpdate(
        key,
        names.slice(i, i + 5).map((n) => ({ op: 'add', element: B(n) })),
        { quorum: 2 },
      );
    expect(await elementsOf(c, 'n3', key)).toEqual(names);
    expect(await elementsOf(c, 'n4', key, 10)).toEqual(names);
    const page = await c.coordinator('n2').setRead(key, { limit: 3 }, { quorum: 3 });
    expect(page.elements.map((e) => String(e.element))).toEqual(names.slice(0, 3));
    expect(String(page.next)).toBe(names[2]);
    for (const e of page.elements) expect(e.context.length).toBeGreaterThan(0);
    expect(await c.coordinator('n1').setContains(key, B('item-07'))).toMatchObject({ present: true });
    expect(await c.coordinator('n1').setContains(key, B('nope'))).toMatchObject({ present: false });
    expect(await elementsOf(c, 'n1', setKey('empty'))).toEqual([]);
  });

  it('a page holds at most its limit even when replicas disagree, and the pages after it hold the rest in order', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = setKey('split');
    const [x, y] = c.ring.preferenceList(key, 3);
    const add = (id: string, names: string[]) =>
      c.store(id!).writeMany(
        key,
        names.map((n) => ({ op: 'add' as const, path: { element: n } })),
      );
    await add(x!, ['e1', 'e3', 'e5', 'e7']);
    await add(y!, ['e2', 'e4', 'e6', 'e8']);
    const page = await c.coordinator('n1').setRead(key, { limit: 3 }, { quorum: 3 });
    expect(page.elements.map((e) => String(e.element))).toEqual(['e1', 'e2', 'e3']);
    expect(String(page.next)).toBe('e3');
    const all: string[] = [];
    let after: Buffer | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const p = await c.coordinator('n1').setRead(key, { after, limit: 3 }, { quorum: 3 });
      expect(p.elements.length).toBeLessThanOrEqual(3);
      all.push(...p.elements.map((e) => String(e.element)));
      if (p.next === undefined) break;
      after = p.next;
    }
    expect(all).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8']);
  });

  it('an update sends only the elements it names, whatever the set holds', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = setKey('big');
    await c.coordinator('n1').setUpdate(
      key,
      Array.from({ length: 500 }, (_, i) => ({ op: 'add' as const, element: B(`e${i}`) })),
      { quorum: 3 },
    );
    const merges = c.net.calls.merge;
    await c.coordinator('n1').setUpdate(key, [{ op: 'add', element: B('one-more') }], { quorum: 3 });
    expect(c.net.calls.merge - merges).toBe(2); // one record to each of the other two replicas
    expect(c.net.calls.readRange).toBe(0);
  });

  it('a remove takes what its read saw; an add it did not see survives it (observed-remove)', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = setKey('or');
    await c.coordinator('n1').setUpdate(
      key,
      [
        { op: 'add', element: B('x') },
        { op: 'add', element: B('y') },
      ],
      { quorum: 3 },
    );
    const seen = await c.coordinator('n2').setContains(key, B('x'), { quorum: 3 });
    await c.coordinator('n3').setUpdate(key, [{ op: 'add', element: B('x') }], { quorum: 3 }); // concurrent with the remove below
    await c.coordinator('n2').setUpdate(key, [{ op: 'remove', element: B('x'), context: seen.context }], { quorum: 3 });
    expect(await elementsOf(c, 'n1', key)).toEqual(['x', 'y']);
    const again = await c.coordinator('n2').setContains(key, B('x'), { quorum: 3 });
    await c
      .coordinator('n2')
      .setUpdate(key, [{ op: 'remove', element: B('x'), context: again.context }], { quorum: 3 });
    expect(await elementsOf(c, 'n3', key)).toEqual(['y']);
    const page = await c.coordinator('n1').setRead(key, {}, { quorum: 3 });
    await c
      .coordinator('n1')
      .setUpdate(key, [{ op: 'remove', element: B('y'), context: page.elements[0]!.context }], { quorum: 3 });
    expect(await elementsOf(c, 'n2', key)).toEqual([]);
  });

  it('a read repairs the elements a replica lacks', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = setKey('repair');
    const lagging = c.ring.preferenceList(key, 3)[2]!;
    const from = c.ring.preferenceList(key, 3)[0]!;
    c.net.faults.set(`*>${lagging}`, { unreachable: true });
    await c.coordinator(from).setUpdate(
      key,
      [
        { op: 'add', element: B('a') },
        { op: 'add', element: B('b') },
      ],
      { quorum: 2 },
    );
    c.net.faults.clear();
    const held = async (): Promise<number> => (await c.store(lagging).readRange(key, undefined, 100)).records.length;
    expect(await held()).toBe(0);
    expect(await elementsOf(c, lagging, key)).toEqual(['a', 'b']);
    await c.coordinator(from).setRead(key, {}, { quorum: 3 });
    await eventually(async () => (await held()) === 2);
  });

  it('refuses bad updates and reads with their codes, before any replica call', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const co = c.coordinator('n1');
    const key = setKey('bad');
    expect(await codeOf(co.setUpdate(key, []))).toBe('RK_BAD_ARGUMENT');
    expect(
      await codeOf(
        co.setUpdate(
          key,
          Array.from({ length: 1001 }, (_, i) => ({ op: 'add' as const, element: B(`e${i}`) })),
        ),
      ),
    ).toBe('RK_BAD_ARGUMENT');
    expect(await codeOf(co.setUpdate(key, [{ op: 'add', element: Buffer.alloc(0) }]))).toBe('DT_ELEMENT_EMPTY');
    expect(await codeOf(co.setUpdate(key, [{ op: 'add', element: Buffer.alloc(1025) }]))).toBe('DT_ELEMENT_TOO_LARGE');
    expect(await codeOf(co.setUpdate(B('default-bucket-key'), [{ op: 'add', element: B('e') }]))).toBe('DT_BAD_PARENT');
    expect(await codeOf(co.setRead(B('default-bucket-key')))).toBe('DT_BAD_PARENT');
    expect(await codeOf(co.setRead(key, { limit: 1001 }))).toBe('RK_BAD_ARGUMENT');
    expect(await codeOf(co.setRead(key, { limit: -1 }))).toBe('RK_BAD_ARGUMENT');
    expect(c.net.calls).toEqual({
      apply: 0,
      merge: 0,
      read: 0,
      digest: 0,
      counterUpdate: 0,
      writeMany: 0,
      readRange: 0,
      paxosPrepare: 0,
      paxosPropose: 0,
      paxosCommit: 0,
    });
    // The replica's checks: a remove without a context, an element given twice.
    expect(await codeOf(co.setUpdate(key, [{ op: 'remove', element: B('e'), context: Buffer.alloc(0) }]))).toBe(
      'DT_NO_CONTEXT',
    );
    expect(
      await codeOf(
        co.setUpdate(key, [
          { op: 'add', element: B('e') },
          { op: 'add', element: B('e') },
        ]),
      ),
    ).toBe('DT_BAD_OP');
  });

  it('a set read needs R primaries up: a fallback holds hints, not the set', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = setKey('unavailable');
    const [first, second] = c.ring.preferenceList(key, 3) as [string, string, string];
    c.down.add(first);
    c.down.add(second);
    const from = ['n1', 'n2', 'n3', 'n4', 'n5'].find((x) => x !== first && x !== second)!; // a node takes itself as up
    const e = await c
      .coordinator(from)
      .setRead(key, {}, { quorum: 2 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ReplicationError);
    expect((e as ReplicationError).code).toBe('RK_UNAVAILABLE');
    expect((e as ReplicationError).message).toMatch(/needs R=2 of its replicas up, but only 1 is/);
    await c.coordinator(from).setUpdate(key, [{ op: 'add', element: B('e') }], { quorum: 2 }); // a write takes fallbacks
    expect(c.coordinator(from).counters.sloppyWrites).toBeGreaterThan(0);
  });
});

describe('coordinator: maps', () => {
  const mapKey = (k: string): Buffer => storedKey('profiles', B(k));
  const counter = [{ name: 'n', type: 'counter' as const }];
  const register = [
    { name: 'm', type: 'map' as const },
    { name: 'r', type: 'register' as const },
  ];
  const tags = [{ name: 'tags', type: 'set' as const }];

  it('an update with an increment is issued on the first primary up; the others get its delta, a replica that missed one the full state, and a hint the full state', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = mapKey('visits');
    const [first, second, third] = c.ring.preferenceList(key, 3) as [string, string, string];
    const outside = ['n1', 'n2', 'n3', 'n4', 'n5'].find((x) => x !== first && x !== second && x !== third)!;
    await c.coordinator(outside).mapUpdate(
      key,
      [
        { op: 'increment', path: { fields: counter }, amount: 2 },
        { op: 'assign', path: { fields: register }, value: B('a') },
      ],
      { quorum: 3 },
    );
    expect(c.net.callsTo.get(first)?.writeMany).toBe(1);
    // The third misses one increment (unreachable, so its hint is kept on a fallback), then takes the next as the full state.
    c.net.faults.set(`*>${third}`, { unreachable: true });
    c.down.add(third);
    await c
      .coordinator(outside)
      .mapUpdate(key, [{ op: 'increment', path: { fields: counter }, amount: 3 }], { quorum: 2 });
    const fallback = c.ring.targets(key, 3, (x) => x !== third).find((t) => t.for === third)!.id;
    const sub = (await c.coordinator(outside).mapRead(key, {}, { quorum: 2 })).entries;
    expect(sub.find((e) => e.kind === 'counter')).toMatchObject({ value: 5n });
    const hinted = [];
    for await (const batch of c.store(fallback).hints.list(third)) hinted.push(...batch);
    expect(hinted.map((h) => value(decodeCounter(h.record).state))).toEqual([5n]); // the full state, not the delta of 3
    c.net.faults.clear();
    c.down.clear();
    const gaps = c.coordinator(outside).counters.counterGaps;
    await c
      .coordinator(outside)
      .mapUpdate(key, [{ op: 'increment', path: { fields: counter }, amount: 1 }], { quorum: 3 });
    expect(c.coordinator(outside).counters.counterGaps).toBe(gaps + 1);
    const page = await c.coordinator(outside).mapRead(key, {}, { quorum: 3 });
    expect(
      page.entries.map((e) => (e.kind === 'counter' ? e.value : e.kind === 'register' ? String(e.value) : e.kind)),
    ).toEqual([6n, 'a']);
  });

  it('an update sends only the fields it names; a read joins replicas and repairs one that lacks a field', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = mapKey('big');
    await c.coordinator('n1').mapUpdate(
      key,
      Array.from({ length: 300 }, (_, i) => ({ op: 'add' as const, path: { fields: tags, element: B(`t${i}`) } })),
      { quorum: 3 },
    );
    const merges = c.net.calls.merge;
    await c
      .coordinator('n1')
      .mapUpdate(key, [{ op: 'assign', path: { fields: register }, value: B('x') }], { quorum: 3 });
    expect(c.net.calls.merge - merges).toBe(2); // one record to each of the other two replicas
    // One replica misses an assign; a read at R=3 returns it and sends it the record.
    const [, , third] = c.ring.preferenceList(key, 3) as [string, string, string];
    c.net.faults.set(`*>${third}`, { unreachable: true });
    await c
      .coordinator('n1')
      .mapUpdate(key, [{ op: 'assign', path: { fields: register }, value: B('y') }], { quorum: 2 });
    c.net.faults.clear();
    const first = await c.coordinator('n1').mapRead(key, { limit: 2 }, { quorum: 3 });
    expect(first.entries).toHaveLength(2);
    let all = [...first.entries],
      after = first.next;
    while (after !== undefined) {
      const p = await c.coordinator('n1').mapRead(key, { after, limit: 100 }, { quorum: 3 });
      all = all.concat(p.entries);
      after = p.next;
    }
    expect(all.filter((e) => e.kind === 'element')).toHaveLength(300);
    expect(all.filter((e) => e.kind === 'register').map((e) => (e.kind === 'register' ? String(e.value) : ''))).toEqual(
      ['y'],
    );
    await eventually(async () => {
      const held = await c.store(third).get(subKeyOf(key, register));
      return held.values.map(String).join() === 'y';
    });
  });

  it('refuses bad ops before any replica call', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = mapKey('bad');
    const calls = c.net.calls.writeMany;
    expect(await codeOf(c.coordinator('n1').mapUpdate(key, []))).toBe('RK_BAD_ARGUMENT');
    expect(
      await codeOf(c.coordinator('n1').mapUpdate(key, [{ op: 'assign', path: { fields: counter }, value: B('v') }])),
    ).toBe('DT_BAD_OP');
    expect(
      await codeOf(c.coordinator('n1').mapUpdate(key, [{ op: 'increment', path: { fields: counter }, amount: 0.5 }])),
    ).toBe('KV_BAD_AMOUNT');
    expect(
      await codeOf(
        c
          .coordinator('n1')
          .mapUpdate(key, [{ op: 'add', path: { fields: [{ name: 'r', type: 'register' }], element: B('e') } }]),
      ),
    ).toBe('DT_BAD_PATH');
    expect(await codeOf(c.coordinator('n1').mapRead(key, { after: B('\x99') }))).toBe('RK_BAD_ARGUMENT');
    expect(c.net.calls.writeMany).toBe(calls);
  });
});
