/**
 * Bounded clocks on the algebra (versions.ts `prune`, `reprune`; docs/causality.md#bounded-clocks):
 * pruning never turns a concurrent write into a superseded one, never makes a replica
 * issue a dot twice, and leaves a converged key's clock with the actors of its siblings.
 *
 * Histories over 3 replicas: puts and deletes (each reading from a random replica),
 * merges (re-pruned as the store merges: `reprune`), stale copies (a replica's state
 * kept, as a hint is, and delivered later, or dropped past the grace period), full
 * anti-entropy rounds, new epochs (a replica moving to a fresh
 * actor, as after an unclean restart), and prunes. A prune runs only when the key's
 * history is stable — no replica and no copy on its way holds a sibling the pruning
 * replica superseded — which is what the store's gate (unchanged for the grace period,
 * confirmed by repair, hints older than the grace dropped) stands for. It keeps the
 * replica's own actor, or retires it first (a fresh actor for the next write), as the
 * store's pass does.
 *
 * The oracle is versions.property's, with "saw" taken from what the read returned as
 * well as from its context: a write is superseded exactly when another write's read saw
 * it. After every copy is delivered and full anti-entropy, each replica holds exactly
 * the writes nothing superseded; no dot was issued twice; and after a last prune every
 * replica holds the same bytes, with one clock entry per sibling's actor at most.
 *
 * The last test runs the same histories with rule 1 (keep the replica's own actor) or
 * rule 2 (keep a live sibling's actor) removed, and shows each fails: without rule 1 a
 * replica reissues a dot another holds, and the write is dropped as seen; without rule 2
 * a write does not supersede a sibling its read returned. It also shows that a merge must
 * re-prune only when the other copy brought nothing else (`reprune`): dropping the new
 * entries of a copy that brought new history lets a superseded sibling come back.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../../src/kinds/versions/codec.js';
import { EMPTY_VERSIONS, merge, prunable, prune, reprune, update } from '../../src/kinds/versions/versions.js';
import type { Clock, Versions } from '../../src/kinds/versions/versions.js';
import type { Actor } from '../../src/kinds/dots.js';

const REPLICAS = 3;

type Op =
  | { kind: 'put' | 'del'; at: number; readFrom: number }
  | { kind: 'merge'; into: number; from: number }
  | { kind: 'stash'; from: number }
  | { kind: 'deliver'; which: number; into: number }
  | { kind: 'expire'; which: number }
  | { kind: 'sync' }
  | { kind: 'epoch'; at: number }
  | { kind: 'prune'; at: number; retire: boolean };

const r = fc.nat(REPLICAS - 1);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('put' as const), at: r, readFrom: r }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('del' as const), at: r, readFrom: r }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('merge' as const), into: r, from: r }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stash' as const), from: r }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deliver' as const), which: fc.nat(), into: r }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), which: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('sync' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('epoch' as const), at: r }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('prune' as const), at: r, retire: fc.boolean() }) },
);
const historyArb = fc.array(opArb, { minLength: 1, maxLength: 80, size: 'max' });

/** How a replica prunes: the real rule, or one with a condition removed (the mutations). */
type Pruner = (v: Versions, keep: Actor | undefined) => Versions;
const noRule1: Pruner = (v) => prune(v, undefined);
const noRule2: Pruner = (v, keep) => {
  const clock = new Map([...v.clock].filter(([a]) => a === keep));
  return { ...v, clock };
};

/** How a replica re-prunes a merge: the real rule, or one that drops the entries its old state lacked even when the copy brought new history. */
type Repruner = (old: Versions, merged: Versions, keep: Actor | undefined) => Versions;
const alwaysReprune: Repruner = (old, merged, keep) => {
  const extra = new Set(prunable(merged, keep).filter((a) => !old.clock.has(a)));
  return { ...merged, clock: new Map([...merged.clock].filter(([a]) => !extra.has(a))) };
};

const actorOf = (replica: number, epoch: number): Actor =>
  `${String.fromCharCode(65 + replica)}${String(epoch).padStart(15, '0')}`;
const dotOf = (actor: Actor, counter: number): string => `${actor}/${counter}`;

interface Write {
  readonly id: string;
  readonly del: boolean;
  readonly context: Clock;
  /** The dots of the siblings the read returned. */
  readonly saw: ReadonlySet<string>;
}

/** True when `x` holds no sibling that `v` has seen and no longer holds: a prune at `v` cannot resurrect anything through `x`. */
function holdsNothingSuperseded(x: Versions, v: Versions): boolean {
  return x.siblings.every(
    (s) =>
      (v.clock.get(s.actor) ?? 0) < s.counter || v.siblings.some((t) => t.actor === s.actor && t.counter === s.counter),
  );
}

function bytes(v: Versions): Buffer {
  return encodeRecord({ versions: v, ownerEpoch: undefined, deletedAt: undefined });
}

/** Prunes that dropped an entry before the end of a history: the histories must exercise them. */
const stats = { dropped: 0 };

/** Run a history; throws (expect) where a property fails. */
function play(history: readonly Op[], pruner: Pruner = prune, repruner: Repruner = reprune): void {
  const replicas: Versions[] = Array.from({ length: REPLICAS }, () => EMPTY_VERSIONS);
  const epochs = Array.from({ length: REPLICAS }, () => 0);
  const pending: Versions[] = [];
  const writes = new Map<string, Write>(); // by dot
  const issued = new Set<string>();
  const into = (i: number, copy: Versions): void => {
    const old = replicas[i]!;
    replicas[i] = repruner(old, merge(old, copy), actorOf(i, epochs[i]!));
    noneSupersededHeld(replicas[i]!);
  };
  /** No replica holds a write that a write it has seen (its clock covers the dot) saw: nothing comes back. */
  const noneSupersededHeld = (v: Versions): void => {
    for (const s of v.siblings) {
      const dot = dotOf(s.actor, s.counter);
      for (const [wdot, w] of writes) {
        const [actor, counter] = [wdot.slice(0, 16), Number(wdot.slice(17))];
        if ((v.clock.get(actor) ?? 0) >= counter && w.saw.has(dot))
          expect.fail(`${dot} came back after ${wdot}, whose read saw it`);
      }
    }
  };
  const pruneAt = (i: number, retire: boolean): void => {
    const v = replicas[i]!;
    if (!replicas.every((x) => holdsNothingSuperseded(x, v)) || !pending.every((x) => holdsNothingSuperseded(x, v)))
      return; // not stable yet
    if (retire) epochs[i]!++; // the store's pass: a fresh actor first, so its own old one may go
    replicas[i] = pruner(v, retire ? undefined : actorOf(i, epochs[i]!));
    if (replicas[i]!.clock.size < v.clock.size) stats.dropped++;
  };
  const sync = (): void => {
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < REPLICAS; i++) for (let j = 0; j < REPLICAS; j++) into(i, replicas[j]!);
  };
  for (const [n, op] of history.entries()) {
    if (op.kind === 'merge') into(op.into, replicas[op.from]!);
    else if (op.kind === 'stash') pending.push(replicas[op.from]!);
    else if (op.kind === 'deliver') {
      if (pending.length > 0) into(op.into, pending.splice(op.which % pending.length, 1)[0]!);
    } else if (op.kind === 'expire') pending.splice(op.which % Math.max(1, pending.length), 1);
    else if (op.kind === 'sync') sync();
    else if (op.kind === 'epoch') epochs[op.at]!++;
    else if (op.kind === 'prune') pruneAt(op.at, op.retire);
    else {
      const read = replicas[op.readFrom]!;
      const actor = actorOf(op.at, epochs[op.at]!);
      const id = `w${n}`;
      const next = update(replicas[op.at]!, read.clock, actor, op.kind === 'put' ? Buffer.from(id) : null);
      const dot = dotOf(actor, next.clock.get(actor)!);
      expect(issued.has(dot), `dot ${dot} issued twice`).toBe(false);
      issued.add(dot);
      writes.set(dot, {
        id,
        del: op.kind === 'del',
        context: read.clock,
        saw: new Set(read.siblings.map((s) => dotOf(s.actor, s.counter))),
      });
      replicas[op.at] = next;
    }
  }
  // Every copy delivered, then full anti-entropy.
  for (const [k, copy] of pending.splice(0).entries()) into(k % REPLICAS, copy);
  sync();
  const survivors = [...writes.entries()]
    .filter(([dot, w]) => {
      const [actor, counter] = [dot.slice(0, 16), Number(dot.slice(17))];
      return ![...writes.values()].some((o) => o !== w && ((o.context.get(actor) ?? 0) >= counter || o.saw.has(dot)));
    })
    .map(([, w]) => w.id)
    .sort();
  for (const v of replicas) {
    const held = v.siblings.map((s) => {
      const w = writes.get(dotOf(s.actor, s.counter))!;
      expect(s.value === null ? null : String(s.value)).toBe(w.del ? null : w.id);
      return w.id;
    });
    expect(held.sort()).toEqual(survivors);
  }
  // A last prune on each replica (stable now): the same bytes everywhere, one entry per sibling's actor at most.
  const before = stats.dropped;
  for (let i = 0; i < REPLICAS; i++) pruneAt(i, true);
  stats.dropped = before;
  const first = bytes(replicas[0]!);
  for (const v of replicas) {
    expect(bytes(v).equals(first)).toBe(true);
    expect(v.clock.size).toBeLessThanOrEqual(new Set(v.siblings.map((s) => s.actor)).size);
  }
}

describe('clock pruning on the algebra (3 replicas, stale copies, new epochs)', () => {
  it('never supersedes a concurrent write, never reissues a dot, and bounds the converged clock', () => {
    stats.dropped = 0;
    fc.assert(
      fc.property(historyArb, (h) => play(h)),
      { numRuns: 1000 },
    );
    expect(stats.dropped).toBeGreaterThan(300);
  });

  it('prune keeps the canonical encoding and leaves the codec invariant true', () => {
    fc.assert(
      fc.property(historyArb, fc.boolean(), (h, keepOwn) => {
        let v: Versions = EMPTY_VERSIONS;
        for (const [n, op] of h.entries())
          if (op.kind === 'put' || op.kind === 'del')
            v = update(
              v,
              n % 3 === 0 ? new Map() : v.clock,
              actorOf(op.at, n % 2),
              op.kind === 'put' ? Buffer.from(`w${n}`) : null,
            );
        const keep = keepOwn ? actorOf(0, 0) : undefined;
        const p = prune(v, keep);
        // The bytes decode back to the same versions (the codec checks every sibling's dot is covered).
        expect(bytes(p).equals(bytes({ clock: new Map([...p.clock].reverse()), siblings: p.siblings }))).toBe(true);
        expect(prunable(p, keep)).toEqual([]);
        expect(prune(p, keep)).toBe(p);
        if (keep !== undefined && v.clock.has(keep)) expect(p.clock.get(keep)).toBe(v.clock.get(keep));
        for (const s of v.siblings) expect(p.clock.get(s.actor)).toBe(v.clock.get(s.actor));
      }),
      { numRuns: 300 },
    );
  });

  it("fails without rule 1 (own actor) or rule 2 (live siblings' actors), or when a merge drops entries that came with new history", () => {
    const mutants: [string, Pruner, Repruner][] = [
      ['rule 1', noRule1, reprune],
      ['rule 2', noRule2, reprune],
      ['reprune', prune, alwaysReprune],
    ];
    for (const [name, pruner, repruner] of mutants) {
      const out = fc.check(
        fc.property(historyArb, (h) => play(h, pruner, repruner)),
        { numRuns: 1000, seed: 29 },
      );
      expect(out.failed, `${name} mutated should fail`).toBe(true);
    }
  });
});
