/**
 * Counters through the store (issue 30): the histories of counter.property.test.ts
 * (testkit/counter-histories.ts: requests sent again at the same replica or another,
 * increments without ids, deltas delivered, dropped, delivered twice, reordered, hinted
 * and handed off, full-state merges) played on three real Stores on MemoryEngine, with
 * Store.counterUpdate as issuer, Store.merge / Store.ingest for deltas and full records,
 * and HintStore.add / list / remove for hints held by a third store. The oracle is the
 * table of every dot the stores issued (read from each delta):
 *  - at every step, every replica, every hint and the read join of every pair of replicas
 *    (resolveCounterReplies) counts each dot it covers once, less its voids, loses no
 *    request it covers, and counts none twice (deltas apply in order: a replica that
 *    missed one refuses the next with KV_COUNTER_GAP and is sent the issuer's full state,
 *    as the coordinator does; hints hold full states);
 *  - a request is a duplicate at its issuer exactly when that store already logs it, and
 *    then nothing is written;
 *  - after a hand-off the target holds every state hinted for it (a hint joins them);
 *  - after the hints are handed off and every replica merges every other, the replicas hold
 *    the same state (byte-equal bodies) and count each request once: never lost, never twice.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryEngine, Store, resolveCounterReplies } from '../../src/storage/index.js';
import { versionBytes } from '../../src/kinds/versions/codec.js';
import { counterWriteId, value } from '../../src/kinds/counter/counter.js';
import { decodeCounter, decodeCounterDelta } from '../../src/kinds/counter/counter-record.js';
import type { CounterState } from '../../src/kinds/counter/counter.js';
import { checkHeld, deliverCounter, historyArb, takeMessage } from '../../testkit/counter-histories.js';
import type { IssuedDot, Step } from '../../testkit/counter-histories.js';

const KEY = 'hits';
const NAMES = ['r0', 'r1', 'r2'];
const quiet = { warn: () => {}, error: () => {} };

const stateOf = (record: Buffer | undefined): CounterState | undefined =>
  record === undefined ? undefined : decodeCounter(record).state;

async function play(amounts: readonly number[], history: readonly Step[]): Promise<void> {
  // Store i has id bytes i + 1, so its actors sort as the replicas do.
  const stores = await Promise.all(
    NAMES.map((_, i) =>
      Store.open({ engine: new MemoryEngine(), randomBytes: (n) => Buffer.alloc(n, i + 1), logger: quiet }),
    ),
  );
  try {
    /** Each message: the delta, and the issuer's record then (what the coordinator sends on a gap, and hints). */
    const inFlight: { to: number; delta: Buffer; full: Buffer }[] = [];
    /** Per replica, the states hinted for it since its last hand-off: it must hold each after the next. */
    const hinted: Buffer[][] = [[], [], []];
    const dots: IssuedDot[] = [];
    /** Hints for replica `to` are held by the next replica round the ring. */
    const holder = (to: number): Store => stores[(to + 1) % 3]!;
    const check = async (): Promise<void> => {
      const records = await Promise.all(stores.map((s) => s.getRecord(KEY)));
      for (const r of records) if (r !== undefined) checkHeld(stateOf(r)!, dots, true);
      for (const [to] of NAMES.entries()) {
        const hint = await holder(to).hints.get(NAMES[to]!, KEY);
        if (hint !== undefined) checkHeld(stateOf(hint)!, dots, true);
      }
      for (const [a, b] of [
        [0, 1],
        [1, 2],
        [0, 2],
      ] as const) {
        const read = resolveCounterReplies([records[a], records[b]]);
        if (read.record !== undefined) {
          checkHeld(stateOf(read.record)!, dots, true);
          expect(read.value).toBe(value(stateOf(read.record)!));
        }
      }
    };
    const issue = async (at: number, amount: number, op: string, requestId?: Buffer): Promise<void> => {
      const store = stores[at]!;
      const before = await store.getRecord(KEY);
      const id = requestId === undefined ? undefined : counterWriteId(requestId, amount);
      const logged = id !== undefined && (stateOf(before)?.log.some((o) => o.id === id) ?? false);
      const r = await store.counterUpdate(KEY, amount, requestId === undefined ? {} : { requestId });
      expect(r.duplicate, 'a duplicate exactly when the issuer logs the id').toBe(logged);
      if (r.duplicate) expect(r.record.equals(before!)).toBe(true);
      else {
        const [entry] = decodeCounterDelta(r.delta).state.entries;
        dots.push({ actor: entry!.actor, counter: entry!.floor, op, amount });
      }
      expect((await store.getRecord(KEY))!.equals(r.record)).toBe(true);
      for (const to of [0, 1, 2]) if (to !== at) inFlight.push({ to, delta: r.delta, full: r.record });
    };
    for (const [i, step] of history.entries()) {
      switch (step.kind) {
        case 'inc':
          await issue(step.at, amounts[step.req]!, `r${step.req}`, Buffer.from([step.req]));
          break;
        case 'blind':
          await issue(step.at, step.amount, `b${i}`);
          break;
        case 'deliver': {
          const m = takeMessage(step, inFlight);
          if (m) await deliverCounter(stores[m.to]!, KEY, m.delta, m.full);
          break;
        }
        case 'drop':
          takeMessage(step, inFlight);
          break;
        case 'hint': {
          const m = takeMessage(step, inFlight);
          if (m) {
            await holder(m.to).hints.add(NAMES[m.to]!, KEY, m.full);
            hinted[m.to]!.push(m.full);
          }
          break;
        }
        case 'handoff': {
          const h = holder(step.to);
          for await (const batch of h.hints.list(NAMES[step.to]!))
            for (const hint of batch) {
              await stores[step.to]!.merge(hint.key, hint.record);
              expect(await h.hints.remove(NAMES[step.to]!, hint.key, hint.record)).toBe(true);
            }
          // A hint is the join of its states: after the hand-off the target holds every one (the issuer need not be alive).
          const floors = new Map(
            stateOf(await stores[step.to]!.getRecord(KEY))?.entries.map((e) => [e.actor, e.floor]),
          );
          for (const d of hinted[step.to]!)
            for (const e of stateOf(d)!.entries)
              expect(floors.get(e.actor) ?? 0, 'a hinted state lost').toBeGreaterThanOrEqual(e.floor);
          hinted[step.to] = [];
          break;
        }
        case 'merge': {
          // A full record, as read repair (merge) or a stream (ingest) moves it.
          const record = await stores[step.from]!.getRecord(KEY);
          if (record === undefined) break;
          if (i % 2 === 0) await stores[step.into]!.merge(KEY, record);
          else await stores[step.into]!.ingest([{ key: KEY, record }]);
          break;
        }
        case 'burst':
          throw new Error('not in these histories');
      }
      await check();
    }
    // Hand every hint off, then every replica merges every other, twice round.
    for (const to of [0, 1, 2]) {
      const hint = await holder(to).hints.get(NAMES[to]!, KEY);
      if (hint !== undefined) await stores[to]!.merge(KEY, hint);
    }
    for (let round = 0; round < 2; round++)
      for (const into of stores)
        for (const from of stores) {
          const record = await from.getRecord(KEY);
          if (record !== undefined) await into.merge(KEY, record);
        }
    await check();
    const records = await Promise.all(stores.map((s) => s.getRecord(KEY)));
    if (dots.length === 0) return;
    for (const r of records) expect(versionBytes(r!).equals(versionBytes(records[0]!))).toBe(true);
    const ops = new Map(dots.map((d) => [d.op, d.amount]));
    expect(value(stateOf(records[0])!), 'each request counted once').toBe(
      [...ops.values()].reduce((t, a) => t + BigInt(a), 0n),
    );
  } finally {
    for (const s of stores) await s.close();
  }
}

describe('counters on three stores (property)', () => {
  it('count each request once, never lose one, at every step and after a full exchange', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, ([amounts, history]) => play(amounts, history)),
      { numRuns: 60, seed: 29, endOnFailure: true },
    );
  }, 120_000);
});
