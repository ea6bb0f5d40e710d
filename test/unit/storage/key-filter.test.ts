import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyBits, KeyFilter } from '../../../src/storage/key-filter.js';
import { mulberry32 } from '../../../src/ring/allocate-tokens.js';

const u32 = fc.integer({ min: 0, max: 0xffffffff });

describe('KeyBits (the Bloom filter)', () => {
  it('never forgets a key it was given', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(u32, u32), { maxLength: 2000 }), (tokens) => {
        const bits = new KeyBits(tokens.length);
        for (const [hi, lo] of tokens) bits.add(hi, lo);
        for (const [hi, lo] of tokens) expect(bits.has(hi, lo)).toBe(true);
      }),
      { numRuns: 50 },
    );
  });

  it('answers "maybe" for under 0.5% of absent keys at its designed load', () => {
    const random = mulberry32(7);
    const r32 = () => Math.floor(random() * 2 ** 32);
    const bits = new KeyBits(100_000);
    for (let i = 0; i < bits.capacity; i++) bits.add(r32(), r32());
    let maybe = 0;
    for (let i = 0; i < 100_000; i++) if (bits.has(r32(), r32())) maybe++;
    expect(maybe / 100_000).toBeLessThan(0.005);
  });
});

describe('KeyFilter', () => {
  /** A filter over a fake "disk": an array of token halves, scanned with a pause. */
  function setup(disk: Array<[number, number]>, pause = async () => {}) {
    const errors: unknown[] = [];
    const filter = new KeyFilter(
      async (add) => {
        for (const [i, [hi, lo]] of disk.entries()) {
          if (i % 100 === 0) await pause();
          add(hi, lo);
        }
      },
      (e) => void errors.push(e),
    );
    return { filter, errors };
  }

  it('answers "maybe" for everything until the scan at open has finished', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { filter } = setup([[1, 2]], () => gate);
    const started = filter.start(0);
    expect(filter.ready).toBe(false);
    expect(filter.mightHave(9, 9)).toBe(true);
    release();
    await started;
    expect(filter.ready).toBe(true);
    expect(filter.mightHave(1, 2)).toBe(true);
    expect(filter.mightHave(9, 9)).toBe(false);
  });

  it('keeps keys added while a scan runs, which the scan did not see', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { filter } = setup(
      [
        [1, 1],
        [2, 2],
      ],
      () => gate,
    );
    const started = filter.start(0);
    filter.add(3, 3, true); // a write that landed after the scan's snapshot
    release();
    await started;
    expect(filter.mightHave(3, 3)).toBe(true);
    expect(filter.mightHave(1, 1)).toBe(true);
  });

  it('stays "maybe" when its scan fails: a partial filter would lie', async () => {
    const errors: unknown[] = [];
    const filter = new KeyFilter(
      async (add) => {
        add(1, 1);
        throw new Error('disk gone');
      },
      (e) => void errors.push(e),
    );
    await filter.start(0);
    expect(filter.ready).toBe(false);
    expect(filter.mightHave(5, 5)).toBe(true);
    expect(errors).toHaveLength(1);
  });

  it('grows: past its capacity it builds a larger filter and forgets nothing', async () => {
    const random = mulberry32(11);
    const r32 = () => Math.floor(random() * 2 ** 32);
    const disk: Array<[number, number]> = [];
    const { filter } = setup(disk);
    await filter.start(0);
    const first = filter.stats.capacity;
    for (let i = 0; i <= first + 10; i++) {
      const t: [number, number] = [r32(), r32()];
      disk.push(t); // the write lands...
      filter.add(t[0], t[1], true); // ...then the filter learns it
    }
    await filter.settled();
    expect(filter.stats.capacity).toBeGreaterThan(first);
    for (const [hi, lo] of disk) expect(filter.mightHave(hi, lo)).toBe(true);
  });

  it('does not start another scan after a growth scan fails (a closing store): settled() returns', async () => {
    // A store closed while its filter was growing: the scan stops with an error. The
    // filter used to start the next growth scan at once, which failed the same way, for
    // ever, and close() (which waits for settled()) never returned.
    let scans = 0;
    let closed = false;
    const errors: unknown[] = [];
    const filter = new KeyFilter(
      async (add) => {
        if (++scans > 20) await new Promise(() => {}); // scanning in a loop (the bug): park it, the test times out
        await new Promise((r) => setTimeout(r, 1));
        if (closed) throw new Error('the store closed during the key filter scan');
        add(1, 1);
        await new Promise((r) => setTimeout(r, 5));
        if (closed) throw new Error('the store closed during the key filter scan');
      },
      (e) => void errors.push(e),
    );
    await filter.start(0);
    const capacity = filter.stats.capacity;
    for (let i = 0; i <= capacity; i++) filter.add(i, i * 7, true); // past capacity: a growth scan starts
    closed = true; // ...and the store closes under it
    await filter.settled();
    expect(scans).toBe(2);
    expect(errors).toHaveLength(1);
    expect(filter.ready).toBe(true); // the old filter still answers, "maybe" for every key it was told
    for (let i = 0; i <= capacity; i += 997) expect(filter.mightHave(i, i * 7)).toBe(true);
  });
});
