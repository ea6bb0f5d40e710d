/**
 * Counter histories for property tests (test/property/counter.property.test.ts on the
 * algebra, counter-store.property.test.ts on three Stores): increments with write ids
 * drawn from six requests (so one request is issued again, at the replica that issued it
 * or at another), increments without ids, deltas delivered, dropped, delivered twice,
 * reordered or hinted, hand-offs and full-state merges, over 3 replicas; and the oracle
 * both check every state against: the table of every dot issued and its request.
 *
 * Must not: play a history (each test plays it on what it tests). The oracle throws an
 * Error saying what broke (fast-check shrinks on it as on a failed expect).
 */
import fc from 'fast-check';
import { KvError } from '../src/storage/index.js';
import type { Key, MergeResult, Store } from '../src/storage/index.js';
import { value } from '../src/kinds/counter/counter.js';
import type { CounterState } from '../src/kinds/counter/counter.js';

export type Step =
  | { kind: 'inc'; at: number; req: number }
  | { kind: 'blind'; at: number; amount: number }
  | { kind: 'deliver'; msg: number; keep: boolean }
  | { kind: 'drop'; msg: number }
  | { kind: 'hint'; msg: number }
  | { kind: 'handoff'; to: number }
  | { kind: 'merge'; into: number; from: number }
  | { kind: 'burst'; at: number; n: number };

export const amountArb = fc.integer({ min: -3, max: 3 }).filter((a) => a !== 0);
export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('inc' as const), at: fc.nat(2), req: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('blind' as const), at: fc.nat(2), amount: amountArb }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('deliver' as const), msg: fc.nat(), keep: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), msg: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hint' as const), msg: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('handoff' as const), to: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('merge' as const), into: fc.nat(2), from: fc.nat(2) }) },
);
/** Six requests' amounts (request k's id is counterWriteId([k], amount)), and a history. */
export const historyArb = fc.tuple(
  fc.array(amountArb, { minLength: 6, maxLength: 6 }),
  fc.array(stepArb, { minLength: 1, maxLength: 80, size: 'max' }),
);

/**
 * The message a deliver, drop or hint step picks from those in flight (its `msg` modulo
 * their number), taken off the list unless a delivery keeps it (a message delivered twice);
 * undefined for a drop, or when none is in flight.
 */
export function takeMessage<M>(step: Step, inFlight: M[]): M | undefined {
  if (inFlight.length === 0 || !('msg' in step)) return undefined;
  const k = step.msg % inFlight.length;
  const m = inFlight[k]!;
  if (step.kind !== 'deliver' || !step.keep) inFlight.splice(k, 1);
  return step.kind === 'drop' ? undefined : m;
}

export interface IssuedDot {
  readonly actor: string;
  readonly counter: number;
  /** The request: `r<k>` for request k, `b<step>` for an increment without an id (each its own). */
  readonly op: string;
  readonly amount: number;
}

/**
 * At this step, `s` counts what its entries cover once, less its voids, and loses no
 * request it covers; `once`: nor counts one twice (inside the log window).
 */
export function checkHeld(s: CounterState, dots: readonly IssuedDot[], once = false): void {
  const fail = (what: string): never => {
    throw new Error(`counter oracle: ${what}`);
  };
  const floor = new Map(s.entries.map((e) => [e.actor, e.floor]));
  const held = dots.filter((d) => d.counter <= (floor.get(d.actor) ?? 0));
  const sum = (xs: readonly { amount: number }[]): bigint => xs.reduce((t, x) => t + BigInt(x.amount), 0n);
  const expected = sum(held) - sum(s.voids);
  if (value(s) !== expected) fail(`value ${value(s)}, but its covered dots less its voids make ${expected}`);
  const heldAt = new Map(held.map((d) => [`${d.actor}/${d.counter}`, d]));
  for (const v of s.voids) {
    const d = heldAt.get(`${v.actor}/${v.counter}`);
    if (d === undefined) return fail(`a void on dot ${v.counter}, which the entries do not cover`);
    if (v.amount !== d.amount) fail(`a void of ${v.amount} on a dot of ${d.amount}`);
  }
  const voided = new Set(s.voids.map((v) => `${v.actor}/${v.counter}`));
  const least = new Map<string, IssuedDot>();
  for (const d of held) {
    const l = least.get(d.op);
    if (l === undefined || d.actor < l.actor || (d.actor === l.actor && d.counter < l.counter)) least.set(d.op, d);
  }
  for (const [op, d] of least)
    if (voided.has(`${d.actor}/${d.counter}`)) fail(`request ${op} lost: its least covered dot is voided`);
  if (!once) return;
  const counted = new Map<string, number>();
  for (const d of held) if (!voided.has(`${d.actor}/${d.counter}`)) counted.set(d.op, (counted.get(d.op) ?? 0) + 1);
  for (const [op, n] of counted) if (n !== 1) fail(`request ${op} counted ${n} times`);
}

/**
 * Deliver a counter increment to a replica as the coordinator does: its delta, or, when the
 * replica missed an earlier delta of the issuer (KV_COUNTER_GAP), the issuer's record.
 */
export async function deliverCounter(
  store: Store,
  key: Key,
  delta: Uint8Array,
  full: Uint8Array,
): Promise<MergeResult> {
  return store.merge(key, delta).catch((e: unknown) => {
    if (!(e instanceof KvError && e.code === 'KV_COUNTER_GAP')) throw e;
    return store.merge(key, full);
  });
}
