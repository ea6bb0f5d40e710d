/**
 * A map's fields at the store level, on a fixed seed: three replicas take requests of
 * mixed field ops as their issuer (Store.writeMany: register assigns and clears, counter
 * increments, flag enables and disables, in a nested map too), and each written record
 * (a counter's as its delta, or its full state) is delivered to the others late, out of
 * order, more than once or (until the end) not at all. Then everything is delivered and
 * the replicas exchange what they hold.
 *
 * The laws, against a model: every replica ends with the same bytes for every field; a
 * register holds the last assign or clear made (the replicas' shared clock advances
 * between requests, so "last" is the order they were made in, which last-writer-wins
 * must keep whatever order they arrive in); a counter's value is the sum of every
 * increment; a flag is enabled exactly when some enable was seen by no disable (as an
 * OR-set's element). A request sent twice with its request id is applied once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedKey, subKey, type FieldName } from '../../src/buckets/index.js';
import { MemoryEngine, Store, type SubOp } from '../../src/storage/index.js';
import { value } from '../../src/kinds/counter/counter.js';
import { decodeCounter } from '../../src/kinds/counter/counter-record.js';
import { versionBytes } from '../../src/kinds/versions/codec.js';

const PARENT = storedKey('profiles', Buffer.from('user:1'));
const REGISTER: readonly FieldName[] = [
  { name: 'address', type: 'map' },
  { name: 'city', type: 'register' },
];
const COUNTER: readonly FieldName[] = [{ name: 'logins', type: 'counter' }];
const FLAG: readonly FieldName[] = [{ name: 'admin', type: 'flag' }];
const key = (fields: readonly FieldName[]) => subKey(PARENT, { fields });

type Step =
  | {
      readonly kind: 'update';
      readonly at: number;
      readonly assign: number | null | undefined;
      readonly amount: number;
      readonly flag: 'enable' | 'disable' | undefined;
      readonly twice: boolean;
    }
  | { readonly kind: 'deliver'; readonly pick: number; readonly keep: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('update' as const),
    at: fc.nat(2),
    // A value to assign, null to clear, undefined to leave the register alone.
    assign: fc.option(fc.option(fc.nat(99), { nil: null }), { nil: undefined }),
    amount: fc.integer({ min: -5, max: 5 }),
    flag: fc.constantFrom('enable' as const, 'disable' as const, undefined),
    twice: fc.boolean(),
  }),
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(1000), keep: fc.boolean() }),
  },
);

interface Delivery {
  readonly to: number;
  readonly key: Buffer;
  readonly record: Buffer;
  /** The flag's enables its sender had seen when it sent this (a flag's record only). */
  readonly enables?: ReadonlySet<number>;
}

describe('a map on three replicas', () => {
  it('converges: registers to the last write, counters to the sum, flags as observed-remove; a request sent twice applies once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 50 }), async (steps) => {
        let clock = 1_000_000;
        const stores = await Promise.all(
          [0, 1, 2].map(() => Store.open({ engine: new MemoryEngine(), now: () => clock })),
        );
        try {
          let lastRegister: number | null = null;
          let sum = 0;
          let nextEnable = 0,
            requests = 0;
          const enables: number[] = [];
          const disabled = new Set<number>();
          const seenEnables = stores.map(() => new Set<number>());
          const inFlight: Delivery[] = [];
          const deliver = async (d: Delivery): Promise<void> => {
            try {
              await stores[d.to]!.merge(d.key, d.record);
            } catch (e) {
              // A counter's delta past a gap is refused (KV_COUNTER_GAP): the full state follows at the end.
              if ((e as { code?: string }).code !== 'KV_COUNTER_GAP') throw e;
            }
            for (const id of d.enables ?? []) seenEnables[d.to]!.add(id);
          };
          for (const step of steps) {
            if (step.kind === 'deliver') {
              if (inFlight.length === 0) continue;
              const i = step.pick % inFlight.length;
              const d = inFlight[i]!;
              if (!step.keep) inFlight.splice(i, 1);
              await deliver(d);
              continue;
            }
            clock += 1000;
            const s = stores[step.at]!;
            const ops: SubOp[] = [];
            if (step.assign === null) {
              const read = await s.get(key(REGISTER));
              if (read.context.length > 0)
                ops.push({ op: 'remove', path: { fields: REGISTER }, context: read.context });
            } else if (step.assign !== undefined)
              ops.push({ op: 'assign', path: { fields: REGISTER }, value: Buffer.from(String(step.assign)) });
            if (step.amount !== 0) ops.push({ op: 'increment', path: { fields: COUNTER }, amount: step.amount });
            let disabling = false;
            if (step.flag === 'enable') ops.push({ op: 'add', path: { fields: FLAG } });
            else if (step.flag === 'disable') {
              const read = await s.get(key(FLAG));
              if (read.values.length > 0) {
                ops.push({ op: 'remove', path: { fields: FLAG }, context: read.context });
                disabling = true;
              }
            }
            if (ops.length === 0) continue;
            const requestId = Buffer.from(`req-${requests++}`);
            const r = await s.writeMany(PARENT, ops, { requestId });
            if (step.twice) expect((await s.writeMany(PARENT, ops, { requestId })).duplicate).toBe(true);
            // The model, once per request.
            if (ops.some((o) => o.op === 'remove' && o.path.fields === REGISTER)) lastRegister = null;
            if (step.assign !== undefined && step.assign !== null) lastRegister = step.assign;
            sum += step.amount;
            if (step.flag === 'enable') (seenEnables[step.at]!.add(nextEnable), enables.push(nextEnable++));
            if (disabling) for (const id of seenEnables[step.at]!) disabled.add(id);
            ops.forEach((o, i) => {
              const w = r.writes[i]!;
              for (const to of [0, 1, 2])
                if (to !== step.at)
                  inFlight.push({
                    to,
                    key: w.key,
                    record: w.delta ?? w.record,
                    ...(o.path.fields === FLAG ? { enables: new Set(seenEnables[step.at]) } : {}),
                  });
            });
          }
          for (const d of inFlight) await deliver(d);
          // Anti-entropy: each replica's records of every field to the others, twice round.
          for (let round = 0; round < 2; round++)
            for (const from of [0, 1, 2])
              for (const r of (await stores[from]!.readRange(PARENT, undefined, 100)).records)
                for (const to of [0, 1, 2]) if (to !== from) await stores[to]!.merge(r.key, r.record);
          const pages = await Promise.all(stores.map((s) => s.readRange(PARENT, undefined, 100)));
          const bytes = pages.map((p) =>
            p.records.map((r) => `${r.key.toString('hex')}=${versionBytes(r.record).toString('hex')}`),
          );
          expect(bytes[1], 'replica 1 holds what replica 0 does').toEqual(bytes[0]);
          expect(bytes[2], 'replica 2 holds what replica 0 does').toEqual(bytes[0]);
          const register = await stores[0]!.get(key(REGISTER));
          expect(register.values.map(String), 'the register holds the last write').toEqual(
            lastRegister === null ? [] : [String(lastRegister)],
          );
          const counter = pages[0]!.records.find((r) => r.key.equals(key(COUNTER)));
          expect(
            counter === undefined ? 0n : value(decodeCounter(counter.record).state),
            'the counter is the sum',
          ).toBe(BigInt(sum));
          const flag = (await stores[0]!.get(key(FLAG))).values.length > 0;
          expect(flag, `the flag: enables ${enables.join(',')}, disabled ${[...disabled].join(',')}`).toBe(
            enables.some((id) => !disabled.has(id)),
          );
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      }),
      { numRuns: 120, seed: 31, endOnFailure: true },
    );
  });
});
