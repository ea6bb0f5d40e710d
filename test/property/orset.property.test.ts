/**
 * The observed-remove set at the store level, on a fixed seed (a CI run tests the same
 * histories each time; a random seed is for hunts): three replicas take adds and removes
 * of a few elements as their issuer (Store.writeMany), and each written record is
 * delivered to the others late, out of order, more than once or (until the end) not at
 * all. A remove carries the context of a read of the element on its own replica. Then
 * every record is delivered and the replicas exchange what they hold.
 *
 * The OR-set's law, checked against a model of which adds each replica had seen: at the
 * end every replica agrees, and an element is present exactly when some add of it was
 * observed by no remove — so a remove never takes an add it did not see (a concurrent
 * one), and an add every remove saw never comes back. Merge order, duplicates and
 * redelivery are the merge's commutativity, associativity and idempotence on real bytes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedKey, subKey } from '../../src/buckets/index.js';
import { MemoryEngine, Store } from '../../src/storage/index.js';

const PARENT = storedKey('carts', Buffer.from('cart'));
const ELEMENTS = ['a', 'b', 'c'] as const;
type Element = (typeof ELEMENTS)[number];

type Step =
  | { readonly kind: 'add'; readonly at: number; readonly element: Element }
  | { readonly kind: 'remove'; readonly at: number; readonly element: Element }
  | { readonly kind: 'deliver'; readonly pick: number; readonly keep: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), at: fc.nat(2), element: fc.constantFrom(...ELEMENTS) }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat(2), element: fc.constantFrom(...ELEMENTS) }),
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(1000), keep: fc.boolean() }),
  },
);

/** A record in flight: which replica it goes to, and the adds its sender had seen of the element when it was sent. */
interface Delivery {
  readonly to: number;
  readonly element: Element;
  readonly record: Buffer;
  readonly seen: ReadonlySet<number>;
}

describe('observed-remove set on three replicas', () => {
  it('converges, and an element is present exactly when some add of it was seen by no remove', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 60 }), async (steps) => {
        const stores = await Promise.all([0, 1, 2].map(() => Store.open({ engine: new MemoryEngine() })));
        try {
          // The model: the add ids each replica has seen of each element, and the ids some remove saw.
          const seen = stores.map(() => new Map<Element, Set<number>>(ELEMENTS.map((e) => [e, new Set<number>()])));
          const removed = new Set<number>();
          const added = new Map<Element, number[]>(ELEMENTS.map((e) => [e, []]));
          const inFlight: Delivery[] = [];
          let nextAdd = 0;
          const sendOn = (from: number, element: Element, record: Buffer): void => {
            for (const to of [0, 1, 2])
              if (to !== from) inFlight.push({ to, element, record, seen: new Set(seen[from]!.get(element)) });
          };
          const deliver = async (d: Delivery): Promise<void> => {
            await stores[d.to]!.merge(subKey(PARENT, { element: d.element }), d.record);
            for (const id of d.seen) seen[d.to]!.get(d.element)!.add(id);
          };
          for (const step of steps) {
            if (step.kind === 'add') {
              const id = nextAdd++;
              added.get(step.element)!.push(id);
              const [w] = (await stores[step.at]!.writeMany(PARENT, [{ op: 'add', path: { element: step.element } }]))
                .writes;
              seen[step.at]!.get(step.element)!.add(id);
              sendOn(step.at, step.element, w!.record);
            } else if (step.kind === 'remove') {
              const read = await stores[step.at]!.get(subKey(PARENT, { element: step.element }));
              if (read.values.length === 0) continue; // nothing there to remove: a client would not send it
              const [w] = (
                await stores[step.at]!.writeMany(PARENT, [
                  { op: 'remove', path: { element: step.element }, context: read.context },
                ])
              ).writes;
              for (const id of seen[step.at]!.get(step.element)!) removed.add(id);
              sendOn(step.at, step.element, w!.record);
            } else if (inFlight.length > 0) {
              const i = step.pick % inFlight.length;
              const d = inFlight[i]!;
              if (!step.keep) inFlight.splice(i, 1); // kept: delivered again later (a duplicate)
              await deliver(d);
            }
          }
          for (const d of inFlight) await deliver(d);
          // Anti-entropy: each replica's records of every element to the others, twice round.
          for (let round = 0; round < 2; round++)
            for (const from of [0, 1, 2])
              for (const r of (await stores[from]!.readRange(PARENT, undefined, 100)).records)
                for (const to of [0, 1, 2]) if (to !== from) await stores[to]!.merge(r.key, r.record);
          for (const e of ELEMENTS) {
            const want = added.get(e)!.some((id) => !removed.has(id));
            const reads = await Promise.all(stores.map((s) => s.get(subKey(PARENT, { element: e }))));
            const present = reads.map((r) => r.values.length > 0);
            expect(present, `element ${e}: adds ${added.get(e)!.join(',')}, removed ${[...removed].join(',')}`).toEqual(
              [want, want, want],
            );
          }
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      }),
      { numRuns: 150, seed: 30, endOnFailure: true },
    );
  });
});
