/**
 * Safe to send twice: any write delivered any number of times, to any replicas (through
 * any coordinators), interleaved with other writes and merges, counts as one write — on
 * the pure algebra (versions.ts) and through real stores (write ids derived from request
 * ids, the duplicate check, the version 2 codec).
 *
 * The oracle is versions.property.test.ts's, for a write that may have several copies (a
 * dot per replica that issued it): a write is superseded exactly when another write's
 * context saw it — covered one of its copies, or carried its id. After full anti-entropy
 * the values shown must be exactly those of the writes nothing superseded, each once: no
 * second sibling from a copy, no superseded copy coming back, nothing lost; and through
 * stores, every replica holds the same versions. The window is
 * bounded (versions.ts: RETIRED_MAX), so a history has at most that many writes; the
 * unit tests show what happens past it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryEngine, Store } from '../../src/storage/index.js';
import {
  clockBytes,
  contextFromClock,
  decodeContext,
  decodeRecord,
  encodeRecord,
  versionBytes,
} from '../../src/kinds/versions/codec.js';
import {
  EMPTY_VERSIONS,
  RETIRED_MAX,
  isDuplicate,
  liveIds,
  liveValues,
  merge,
  sameVersions,
  update,
} from '../../src/kinds/versions/versions.js';
import type { Clock, Versions } from '../../src/kinds/versions/versions.js';
import type { WriteId } from '../../src/kinds/dots.js';

const ACTORS = ['A', 'B', 'C'].map((c) => c.repeat(16));

type Op =
  | { kind: 'write'; del: boolean; at: number; readFrom: number }
  | { kind: 'again'; which: number; at: number }
  | { kind: 'merge'; into: number; from: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('write' as const),
      del: fc.nat(3).map((n) => n === 0),
      at: fc.nat(2),
      readFrom: fc.nat(2),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('again' as const), which: fc.nat(), at: fc.nat(2) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('merge' as const), into: fc.nat(2), from: fc.nat(2) }) },
);
const historyArb = fc.array(opArb, { minLength: 1, maxLength: 50 });

interface Ctx {
  readonly clock: Clock;
  readonly ids: readonly WriteId[];
}

const read = (v: Versions): Ctx => ({ clock: v.clock, ids: liveIds(v) });
const idOf = (i: number): WriteId => `id${String(i).padStart(6, '0')}`; // 8 characters, as write ids are
const valueOf = (i: number): Buffer => Buffer.from(`w${i}`);
const shown = (v: Versions): string[] => liveValues(v, 0).map(String).sort();

/** A replica taking a write, as Store does: no new dot for an id it knows. */
function deliver(v: Versions, at: number, value: Buffer | null, ctx: Ctx, id: WriteId, now: number): Versions {
  if (isDuplicate(v, id)) return v;
  return update(v, ctx.clock, ACTORS[at]!, value, { seenIds: ctx.ids, id, now });
}

function converge(replicas: readonly Versions[]): Versions {
  return replicas.reduce((a, b) => merge(a, b), EMPTY_VERSIONS);
}

interface Logical {
  readonly value: Buffer | null;
  readonly ctx: Ctx;
  /** The dots its deliveries issued (none for a delivery recognised as a repeat). */
  readonly copies: { actor: string; counter: number }[];
}

/** Run the history; the converged versions, the values the oracle expects, and every state a replica passed through. */
function play(history: readonly Op[]): { all: Versions; expected: string[]; seen: Versions[] } {
  const seen: Versions[] = [];
  const replicas: Versions[] = [EMPTY_VERSIONS, EMPTY_VERSIONS, EMPTY_VERSIONS];
  const writes: Logical[] = [];
  const send = (i: number, at: number, now: number): void => {
    const w = writes[i]!;
    const before = replicas[at]!;
    replicas[at] = deliver(before, at, w.value, w.ctx, idOf(i), now);
    if (replicas[at] !== before) w.copies.push({ actor: ACTORS[at]!, counter: replicas[at]!.clock.get(ACTORS[at]!)! });
  };
  for (const [t, op] of history.entries()) {
    if (op.kind === 'merge') replicas[op.into] = merge(replicas[op.into]!, replicas[op.from]!);
    else if (op.kind === 'write' && writes.length < RETIRED_MAX) {
      writes.push({ value: op.del ? null : valueOf(writes.length), ctx: read(replicas[op.readFrom]!), copies: [] });
      send(writes.length - 1, op.at, t * 1000);
    } else if (op.kind === 'again' && writes.length > 0) send(op.which % writes.length, op.at, t * 1000);
    seen.push(...replicas);
  }
  const saw = (ctx: Ctx, i: number): boolean =>
    ctx.ids.includes(idOf(i)) || writes[i]!.copies.some((c) => (ctx.clock.get(c.actor) ?? 0) >= c.counter);
  const expected = writes
    .flatMap((w, i) => (w.value !== null && !writes.some((o, j) => j !== i && saw(o.ctx, i)) ? [String(w.value)] : []))
    .sort();
  return { all: converge(replicas), expected, seen };
}

describe('a write delivered again counts once', () => {
  it('on the algebra: after full anti-entropy, exactly the values of the writes nothing superseded, each once', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const { all, expected } = play(history);
        expect(shown(all)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the merge a join with write ids and retired ids: idempotent, commutative, associative, and canonical in the codec', () => {
    const same = (a: Versions, b: Versions): boolean =>
      encodeRecord({ versions: a, ownerEpoch: undefined, deletedAt: undefined }).equals(
        encodeRecord({ versions: b, ownerEpoch: undefined, deletedAt: undefined }),
      );
    fc.assert(
      fc.property(historyArb, fc.nat(), fc.nat(), fc.nat(), (history, i, j, k) => {
        const { seen } = play(history);
        const [a, b, c] = [seen[i % seen.length]!, seen[j % seen.length]!, seen[k % seen.length]!];
        expect(same(merge(a, a), a)).toBe(true);
        expect(same(merge(a, b), merge(b, a))).toBe(true);
        expect(same(merge(merge(a, b), c), merge(a, merge(b, c)))).toBe(true);
        const rec = encodeRecord({ versions: a, ownerEpoch: 7, deletedAt: undefined });
        expect(same(decodeRecord(rec).versions, a)).toBe(true);
        expect(sameVersions(decodeRecord(rec).versions, a)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('carries the ids of the siblings a read saw in its context, and reads them back', () => {
    fc.assert(
      fc.property(historyArb, fc.nat(), fc.integer({ min: 0, max: 0xffffffff }), (history, i, check) => {
        const { seen } = play(history);
        const v = seen[i % seen.length]!;
        const causal = clockBytes(encodeRecord({ versions: v, ownerEpoch: undefined, deletedAt: undefined }));
        const ctx = decodeContext(contextFromClock(check, causal.clock, causal.format), check);
        expect([...ctx.clock].sort()).toEqual([...v.clock].sort());
        expect(ctx.ids).toEqual(liveIds(v));
      }),
      { numRuns: 500 },
    );
  });

  it('needs the write ids: a copy of a superseded write comes back without them', () => {
    // Write 0 at A; B reads A and supersedes it; write 0 again at C (a hedge): with ids,
    // C's copy is recognised once it meets B's version; with the ids stripped it comes back.
    const ctx0 = read(EMPTY_VERSIONS);
    const a = deliver(EMPTY_VERSIONS, 0, valueOf(0), ctx0, idOf(0), 0);
    const b = deliver(merge(EMPTY_VERSIONS, a), 1, valueOf(1), read(a), idOf(1), 1000);
    const c = deliver(EMPTY_VERSIONS, 2, valueOf(0), ctx0, idOf(0), 2000);
    expect(shown(converge([a, b, c]))).toEqual(['w1']);
    const stripped = (v: Versions): Versions => ({
      clock: v.clock,
      siblings: v.siblings.map(({ actor, counter, value }) => ({ actor, counter, value })),
    });
    expect(shown(converge([stripped(a), stripped(b), stripped(c)]))).toEqual(['w0', 'w1']);
  });
});

describe('through real stores (request ids, the duplicate check, the codec)', () => {
  const KEY = 'k';

  it('shows exactly the values of the writes nothing superseded, never a value twice, and every replica ends with the same versions', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, async (history) => {
        let t = 0;
        const stores = await Promise.all([0, 1, 2].map(() => Store.open({ engine: new MemoryEngine(), now: () => t })));
        const writes: { value: Buffer | null; context: Buffer; requestId: Buffer }[] = [];
        for (const [i, op] of history.entries()) {
          t = i * 1000;
          if (op.kind === 'merge') {
            const rec = await stores[op.from]!.getRecord(KEY);
            if (rec) await stores[op.into]!.merge(KEY, rec);
          } else if (op.kind === 'write' && writes.length < RETIRED_MAX) {
            const w = {
              value: op.del ? null : valueOf(writes.length),
              context: (await stores[op.readFrom]!.get(KEY)).context,
              requestId: Buffer.from(`request-${writes.length}`),
            };
            writes.push(w);
            await (w.value === null
              ? stores[op.at]!.delete(KEY, w.context, w)
              : stores[op.at]!.put(KEY, w.value, w.context, w));
          } else if (op.kind === 'again' && writes.length > 0) {
            const w = writes[op.which % writes.length]!;
            await (w.value === null
              ? stores[op.at]!.delete(KEY, w.context, w)
              : stores[op.at]!.put(KEY, w.value, w.context, w));
          }
        }
        for (let round = 0; round < 2; round++)
          for (const from of stores)
            for (const into of stores) {
              const rec = await from.getRecord(KEY);
              if (rec) await into.merge(KEY, rec);
            }
        // Converged: every replica holds the same versions (a copy's entries are not refused as pruned ones).
        const held = await Promise.all(
          stores.map(async (s) => {
            const rec = await s.getRecord(KEY);
            return rec === undefined ? '-' : versionBytes(rec).toString('hex');
          }),
        );
        expect(new Set(held).size, held.join('\n')).toBe(1);
        const got = await Promise.all(stores.map((s) => s.get(KEY)));
        const { expected } = play(history);
        for (const g of got) {
          expect(g.values.map(String).sort()).toEqual(expected);
          expect(new Set(g.values.map(String)).size).toBe(g.values.length);
        }
        await Promise.all(stores.map((s) => s.close()));
      }),
      { numRuns: 150 },
    );
  });
});
