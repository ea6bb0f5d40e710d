/**
 * No acknowledged write is lost by the coordinator (Jepsen's set check, on the in-memory
 * replica network of 3 to 7 nodes, and of 60): random batches of concurrent blind puts
 * from random coordinators at random W, while nodes go down (the detector knows: sloppy quorum and fallbacks) or
 * silent (unreachable while still thought up: writes fail and coordinators keep hints),
 * with hint delivery now and then. Then everything heals, hints are delivered, and one
 * read per key at R=N repairs what is stale.
 *
 * Blind writes never supersede one another, so the oracle is exact. Once hints are
 * delivered, before any read, a value acknowledged at W must be on at least W of its
 * key's replicas: every acknowledgement came from a replica or from a fallback standing in
 * for a distinct one (this fails if fallbacks or hint delivery drop anything); and on all
 * of them if at most (nodes − 3) were down when it was written — every down replica had a
 * fallback then, and every replica that failed the write got a hint at its coordinator
 * (this fails without those hints). After the
 * reads, each replica must hold every acknowledged value (lost = acknowledged but missing)
 * and nothing that was never written (unexpected). Failed writes may or may not be there.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HintDelivery } from '../../src/hints/delivery.js';
import { MemoryEngine, Store, resolveReplies } from '../../src/storage/index.js';
import { FakeCluster, eventually } from '../unit/replication/fake-cluster.js';

const MAX_NODES = 7;
const KEYS = ['a', 'b', 'c'];
const quiet = { debug() {}, info() {}, warn() {} };

type Fault = 'ok' | 'down' | 'silent';
type Step =
  | { kind: 'puts'; puts: { key: number; at: number; w: number }[] }
  | { kind: 'fault'; node: number; fault: Fault }
  | { kind: 'deliver' };

/** Steps on a cluster of up to `nodes` nodes (node numbers wrap around a smaller one). */
const stepArb = (nodes: number, keys: number): fc.Arbitrary<Step> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('puts' as const),
        puts: fc.array(fc.record({ key: fc.nat(keys - 1), at: fc.nat(nodes - 1), w: fc.integer({ min: 1, max: 3 }) }), {
          minLength: 1,
          maxLength: 6,
        }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('fault' as const),
        node: fc.nat(nodes - 1),
        fault: fc.constantFrom<Fault>('ok', 'down', 'silent'),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('deliver' as const) }) },
  );

function setFault(c: FakeCluster, id: string, f: Fault): void {
  c.down.delete(id);
  c.net.faults.delete(`*>${id}`);
  if (f === 'down') c.down.add(id);
  if (f !== 'ok') c.net.faults.set(`*>${id}`, { unreachable: true });
}

async function deliverAll(c: FakeCluster): Promise<void> {
  await Promise.all(
    [...c.stores.keys()].map((id) =>
      new HintDelivery(
        { self: id, bytesPerSecond: 1 << 30 },
        {
          hints: c.store(id).hints,
          isUp: (t) => !c.down.has(t) && !c.net.faults.has(`*>${t}`),
          send: (t, key, record) => c.net.from(id).call(t, { op: 'merge', key, record }, Date.now() + 1000),
          log: quiet,
        },
      ).run(),
    ),
  );
}

async function play(size: number, steps: readonly Step[], KEYS: readonly string[]): Promise<void> {
  const c = await FakeCluster.create(size, { timeoutMs: 1000 });
  const NODES = [...c.stores.keys()];
  const at = (i: number): string => NODES[i % size]!;
  try {
    /** key → value → [its W, whether every replica must hold it after hint delivery] */
    const acked = new Map<string, Map<string, [number, boolean]>>(KEYS.map((k) => [k, new Map()]));
    const attempted = new Map<string, Set<string>>(KEYS.map((k) => [k, new Set()]));
    let n = 0;
    for (const step of steps) {
      if (step.kind === 'fault') setFault(c, at(step.node), step.fault);
      else if (step.kind === 'deliver') await deliverAll(c);
      else {
        // Every down replica has a fallback while the nodes up outnumber the down ones' needs.
        const everywhere = c.down.size <= size - 3;
        await Promise.all(
          step.puts.map(async ({ key, at: from, w }) => {
            const k = KEYS[key]!,
              value = `v${n++}`;
            attempted.get(k)!.add(value);
            try {
              await c.coordinator(at(from)).put(Buffer.from(k), Buffer.from(value), Buffer.alloc(0), { quorum: w });
              acked.get(k)!.set(value, [w, everywhere]);
            } catch {
              // not acknowledged: may or may not survive
            }
          }),
        );
      }
    }
    // Heal, let the writes still in flight land, hand every hint over, then repair by reading.
    for (const id of NODES) setFault(c, id, 'ok');
    await new Promise((r) => setTimeout(r, 5));
    await deliverAll(c);
    for (const id of NODES) expect(c.store(id).hints.stats().count, `hints left on ${id}`).toBe(0);
    for (const k of KEYS) {
      const held = await Promise.all(c.owners(k).map((id) => c.values(id, k)));
      for (const [value, [w, everywhere]] of acked.get(k)!) {
        const copies = held.filter((vs) => vs.includes(value)).length;
        expect(
          copies,
          `${k}=${value} acknowledged at W=${w}, on ${copies} replicas after hint delivery`,
        ).toBeGreaterThanOrEqual(everywhere ? 3 : w);
      }
    }
    for (const k of KEYS)
      await c
        .coordinator('n1')
        .get(Buffer.from(k), { quorum: 3 })
        .catch(() => undefined);
    for (const k of KEYS) {
      const want = [...acked.get(k)!.keys()];
      await eventually(async () => {
        for (const id of c.owners(k)) {
          const held = await c.values(id, k);
          if (!want.every((v) => held.includes(v))) return false;
        }
        return true;
      }, 1000).catch(async () => {
        const held = await Promise.all(c.owners(k).map(async (id) => `${id}: ${(await c.values(id, k)).join(',')}`));
        throw new Error(`key ${k}: acknowledged ${want.join(',')} but replicas hold ${held.join(' | ')}`);
      });
      for (const id of c.owners(k)) {
        const unexpected = (await c.values(id, k)).filter((v) => !attempted.get(k)!.has(v));
        expect(unexpected, `values on ${id} that nobody wrote`).toEqual([]);
      }
    }
  } finally {
    await c.close();
  }
}

describe('the coordinator loses no acknowledged write', () => {
  it('through failures, sloppy quorum, hints and read repair (random histories)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: MAX_NODES }),
        fc.array(stepArb(MAX_NODES, KEYS.length), { minLength: 1, maxLength: 25 }),
        (size, steps) => play(size, steps, KEYS),
      ),
      { numRuns: 200 },
    );
  }, 120_000);

  it('on 60 nodes, 200 keys and long histories', async () => {
    const keys = Array.from({ length: 200 }, (_, i) => `key${i}`);
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb(60, keys.length), { minLength: 100, maxLength: 300 }), (steps) =>
        play(60, steps, keys),
      ),
      { numRuns: 5 },
    );
  }, 120_000);
});

describe('resolveReplies', () => {
  it('gives the same answer whatever the order of the replies, and its record is stale for no reply', async () => {
    const stores = await Promise.all([0, 1, 2].map(() => Store.open({ engine: new MemoryEngine() })));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              at: fc.nat(2),
              withContextFrom: fc.option(fc.nat(2), { nil: undefined }),
              mergeInto: fc.option(fc.nat(2), { nil: undefined }),
            }),
            { minLength: 1, maxLength: 12 },
          ),
          fc.nat(5),
          async (ops, perm) => {
            const key = `k${Math.random()}`;
            let n = 0;
            for (const op of ops) {
              const ctx =
                op.withContextFrom === undefined ? undefined : (await stores[op.withContextFrom]!.get(key)).context;
              const { record } = await stores[op.at]!.put(key, Buffer.from(`v${n++}`), ctx);
              if (op.mergeInto !== undefined) await stores[op.mergeInto]!.merge(key, record);
            }
            const replies = await Promise.all(stores.map((s) => s.getRecord(key)));
            const orders = [
              [0, 1, 2],
              [0, 2, 1],
              [1, 0, 2],
              [1, 2, 0],
              [2, 0, 1],
              [2, 1, 0],
            ];
            const a = resolveReplies(
              key,
              orders[0]!.map((i) => replies[i]),
            );
            const b = resolveReplies(
              key,
              orders[perm]!.map((i) => replies[i]),
            );
            expect(b.values.map(String).sort()).toEqual(a.values.map(String).sort());
            expect(b.context.equals(a.context)).toBe(true);
            // The merged record is what every replica converges to: nothing in it is stale.
            expect(resolveReplies(key, [a.record, ...replies]).stale[0]).toBe(false);
          },
        ),
        { numRuns: 100 },
      );
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});
