/**
 * Sub-keys (src/buckets/subkeys.ts) over random parents and paths, on a fixed seed (a CI
 * run tests the same cases each time; a random seed is for hunts):
 *
 * 1. parseSubKey ∘ subKey is the identity, and one sub-key has one encoding: bytes that
 *    parse re-encode to themselves, and bytes that do not are refused with a DT_* code
 *    (random corruptions of good sub-keys: never read as another sub-key, never a crash);
 * 2. a parent's sub-keys (and a field's) sort contiguously: the keys inside its span are
 *    exactly its own, whatever other parents (one's key a prefix of another's, bytes 00
 *    and ff) and ordinary keys (default and named buckets) sort among them;
 * 3. placement: a sub-key has its parent's token, an ordinary key its own as before; in a
 *    store, the records under a parent's data-key span are exactly its sub-keys';
 * 4. contexts: contextCheckOf is today's check (the token's low half) for an ordinary key
 *    and differs between sibling sub-keys, so a context read from one element (from the
 *    store or from resolveReplies) is refused on another; and the store's key filter,
 *    rebuilt from disk, still knows a sub-key written before (a blind write after a
 *    restart is a sibling, not an overwrite).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BUCKET,
  DataTypeError,
  FIELD_TYPES,
  MARK,
  bucketOf,
  parseSubKey,
  storedKey,
  subKey,
  subKeyPolicy,
  subKeySpan,
  type FieldName,
  type SubPath,
} from '../../src/buckets/index.js';
import { hashInto } from '../../src/ring/index.js';
import { KvError, MemoryEngine, Store, resolveReplies } from '../../src/storage/index.js';
import { contextCheckOf, dataKey, subKeyDataSpan, tokenHalves } from '../../src/storage/keys.js';

const RUNS = { seed: 30, endOnFailure: true } as const;

/** Few distinct bytes, so prefixes, 00 and ff (the span's carry) and equal names are common. */
const byte = fc.constantFrom(0x00, 0x01, 0x61, 0x62, 0x6d, 0x72, 0xff);
const bytes = (min: number, max: number, long: number): fc.Arbitrary<Buffer> =>
  fc.oneof(
    { weight: 9, arbitrary: fc.array(byte, { minLength: min, maxLength: max }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.constant(Buffer.alloc(long, 0x61)) },
  );

const bucketArb = fc.constantFrom('a', 'ab', 'b', 'tags.v2');
/** A parent key: usually short, now and then 300 bytes (a two-byte varint length). */
const keyArb = bytes(1, 4, 300);
const parentArb = fc.tuple(bucketArb, keyArb).map(([b, k]) => storedKey(b, k));
const nameArb = bytes(1, 3, 255);
const elementArb = bytes(1, 4, 1024);

const mapsArb = fc.array(
  nameArb.map((name): FieldName => ({ name, type: 'map' })),
  { maxLength: 3 },
);
const pathArb: fc.Arbitrary<SubPath> = fc.oneof(
  elementArb.map((element) => ({ element })),
  fc
    .tuple(mapsArb, nameArb, fc.constantFrom('register' as const, 'flag' as const, 'counter' as const))
    .map(([maps, name, type]) => ({ fields: [...maps, { name, type }] })),
  fc
    .tuple(mapsArb, nameArb, elementArb)
    .map(([maps, name, element]) => ({ fields: [...maps, { name, type: 'set' as const }], element })),
);

const plain = (p: SubPath): unknown => ({
  fields: (p.fields ?? []).map((f) => [Buffer.from(f.name as Uint8Array).toString('hex'), f.type]),
  element: p.element === undefined ? undefined : Buffer.from(p.element as Uint8Array).toString('hex'),
});

/** A parsed sub-key's parts as the path they came from. */
const pathOf = (k: Uint8Array): SubPath => {
  const p = parseSubKey(k);
  return { fields: p.fields, ...(p.element === undefined ? {} : { element: p.element }) };
};

describe('sub-keys: encode and parse', () => {
  it('parse ∘ encode is the identity', () => {
    fc.assert(
      fc.property(bucketArb, keyArb, pathArb, (bucket, key, path) => {
        const parent = storedKey(bucket, key);
        const k = subKey(parent, path);
        const p = parseSubKey(k);
        expect(p.bucket).toBe(bucket);
        expect(p.key.equals(key)).toBe(true);
        expect(p.parent.equals(parent)).toBe(true);
        expect(plain(pathOf(k))).toEqual(plain(path));
      }),
      { ...RUNS, numRuns: 2000 },
    );
  });

  it('a corrupted sub-key parses to what re-encodes to it, or is refused with a DT_* code', () => {
    const edit = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), at: fc.nat(), to: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
      fc.record({
        kind: fc.constant('insert' as const),
        at: fc.nat(),
        to: fc.constantFrom(0x00, 0x01, 0x63, 0x66, 0x6d, 0x72, 0x73, 0x80, 0xff),
      }),
    );
    let refused = 0,
      parsed = 0;
    fc.assert(
      fc.property(parentArb, pathArb, fc.array(edit, { minLength: 1, maxLength: 3 }), (parent, path, edits) => {
        let k = Buffer.from(subKey(parent, path));
        for (const e of edits) {
          const at = e.at % (k.length + 1);
          if (e.kind === 'set' && at < k.length) k[at] = e.to;
          else if (e.kind === 'cut') k = k.subarray(0, at);
          else if (e.kind === 'insert') k = Buffer.concat([k.subarray(0, at), Buffer.from([e.to]), k.subarray(at)]);
        }
        let p: ReturnType<typeof parseSubKey>;
        try {
          p = parseSubKey(k);
        } catch (err) {
          expect(err).toBeInstanceOf(DataTypeError);
          expect((err as DataTypeError).code).toMatch(/^DT_/);
          refused++;
          return;
        }
        parsed++;
        expect(subKey(p.parent, pathOf(k)).equals(k)).toBe(true);
      }),
      { ...RUNS, numRuns: 3000 },
    );
    expect(refused).toBeGreaterThan(300); // both outcomes were tried
    expect(parsed).toBeGreaterThan(300);
  });

  it('near-sub-keys (the mark, then pieces of the grammar, some bent) are refused or parse canonically', () => {
    // Pieces: a bucket name with its length, a (sometimes non-minimal) length, a tag, a field, an element, any byte.
    const piece = fc.oneof(
      bucketArb.map((b) => Buffer.concat([Buffer.from([b.length]), Buffer.from(b)])),
      fc
        .constantFrom(
          [0x01],
          [0x05],
          [0x81, 0x00],
          [0x85, 0x00],
          [0x80, 0x01],
          [0xac, 0x02],
          [0x80, 0x80, 0x80, 0x80, 0x01],
        )
        .map((a) => Buffer.from(a)),
      fc
        .tuple(
          fc.constantFrom(0x63, 0x66, 0x6d, 0x72, 0x73, 0x01, 0x00),
          fc.integer({ min: 0, max: 4 }),
          bytes(0, 4, 255),
        )
        .map(([t, n, b]) => Buffer.concat([Buffer.from([t, n]), b])),
      bytes(0, 4, 1025),
      fc.integer({ min: 0, max: 255 }).map((b) => Buffer.from([b])),
    );
    let parsed = 0;
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const k = Buffer.concat([MARK, Buffer.from([0]), ...pieces]);
        try {
          const p = parseSubKey(k);
          parsed++;
          expect(subKey(p.parent, pathOf(k)).equals(k)).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(DataTypeError);
        }
      }),
      { ...RUNS, numRuns: 5000 },
    );
    expect(parsed).toBeGreaterThan(20);
  });
});

describe('bucket names read from stored keys', () => {
  it('a marked key names the bucket its name bytes spell when bucketName would take them (checked byte by byte, as the pattern)', () => {
    const nameByte = fc.oneof(
      fc.constantFrom(0x2d, 0x2e, 0x5f, 0x30, 0x39, 0x61, 0x7a, 0x41, 0x2f, 0x3a, 0x60, 0x7b, 0x20),
      fc.integer({ min: 0, max: 255 }),
    );
    fc.assert(
      fc.property(fc.array(nameByte, { minLength: 1, maxLength: 66 }), (name) => {
        const text = Buffer.from(name).toString('latin1');
        const valid = name.length <= 64 && /^[a-z0-9][a-z0-9_.-]*$/.test(text);
        const named = Buffer.concat([MARK, Buffer.from([name.length]), Buffer.from(name), Buffer.from('k')]);
        expect(bucketOf(named)).toBe(valid ? text : DEFAULT_BUCKET);
        const sub = Buffer.concat([
          MARK,
          Buffer.from([0, name.length]),
          Buffer.from(name),
          Buffer.from([1]),
          Buffer.from('k'),
          Buffer.from([1]),
          Buffer.from('e'),
        ]);
        expect(bucketOf(sub)).toBe(valid ? text : DEFAULT_BUCKET);
      }),
      { ...RUNS, numRuns: 3000 },
    );
  });
});

describe('sub-keys: spans', () => {
  const ordinaryArb = fc.oneof(
    fc.tuple(bucketArb, keyArb).map(([b, k]) => storedKey(b, k)),
    fc
      .array(byte, { minLength: 1, maxLength: 8 })
      .map((a) => Buffer.from(a))
      .filter((k) => !k.subarray(0, 4).equals(MARK))
      .map((k) => storedKey('default', k)),
  );
  const entryArb = fc.tuple(parentArb, pathArb).map(([parent, path]) => ({ parent, path, key: subKey(parent, path) }));

  it("a parent's sub-keys, and a field's, are exactly the keys inside its span", () => {
    fc.assert(
      fc.property(
        fc.array(entryArb, { minLength: 1, maxLength: 40 }),
        fc.array(ordinaryArb, { maxLength: 20 }),
        (entries, ordinary) => {
          const all = [...entries.map((e) => e.key), ...ordinary, ...entries.map((e) => e.parent)].sort(Buffer.compare);
          const inside = (s: { gte: Buffer; lt: Buffer }): Buffer[] =>
            all.filter((k) => Buffer.compare(s.gte, k) <= 0 && Buffer.compare(k, s.lt) < 0);
          const hex = (ks: Buffer[]): string[] => ks.map((k) => k.toString('hex'));
          for (const e of entries) {
            // Every key of the span is one of the parent's sub-keys, and each of them is in it: contiguous in sorted order.
            const own = entries.filter((x) => x.parent.equals(e.parent)).map((x) => x.key);
            const span = inside(subKeySpan(e.parent));
            expect(hex(span).sort()).toEqual(hex(own).sort());
            const first = all.findIndex((k) => k.equals(span[0]!));
            expect(hex(all.slice(first, first + span.length))).toEqual(hex(span));
            // The same under each field of its path: the keys whose path begins with those fields.
            const fields = e.path.fields ?? [];
            const sig = (p: SubPath, d: number): string =>
              JSON.stringify(plain({ fields: (p.fields ?? []).slice(0, d) }));
            for (let d = 1; d <= fields.length; d++) {
              const want = entries.filter((x) => x.parent.equals(e.parent) && sig(x.path, d) === sig(e.path, d));
              expect(hex(inside(subKeySpan(e.parent, fields.slice(0, d)))).sort()).toEqual(
                hex(want.map((x) => x.key)).sort(),
              );
            }
          }
        },
      ),
      { ...RUNS, numRuns: 500 },
    );
  });

  it('every field type has a tag of its own', () => {
    const parent = storedKey('a', Buffer.from('k'));
    const keys = FIELD_TYPES.map((type) => subKeySpan(parent, [{ name: 'x', type }]).gte.toString('hex'));
    expect(new Set(keys).size).toBe(FIELD_TYPES.length);
  });
});

describe('sub-keys: placement', () => {
  /** A key's own hash, as tokenHalves gave every key before sub-keys. */
  const ownHalves = (k: Uint8Array): [number, number] => {
    const out = new Uint32Array(2);
    hashInto(k, out);
    return [out[0]!, out[1]!];
  };
  const ordinaryArb = fc.oneof(
    fc.tuple(bucketArb, keyArb).map(([b, k]) => storedKey(b, k)),
    fc
      .uint8Array({ minLength: 1, maxLength: 12 })
      .map((a) => Buffer.from(a))
      .filter((k) => !k.subarray(0, 4).equals(MARK)),
  );

  it("a sub-key has its parent's token; any other key its own hash", () => {
    fc.assert(
      fc.property(parentArb, pathArb, ordinaryArb, (parent, path, other) => {
        const k = subKey(parent, path);
        expect(tokenHalves(k)).toEqual(tokenHalves(parent));
        expect(tokenHalves(parent)).toEqual(ownHalves(parent));
        expect(tokenHalves(other)).toEqual(ownHalves(other));
        expect(ownHalves(k)).not.toEqual(ownHalves(parent)); // the test could fail: placed by its own bytes it would move
      }),
      { ...RUNS, numRuns: 2000 },
    );
  });

  it("a store's records under a parent's data-key span are exactly its sub-keys'", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(parentArb, pathArb), { minLength: 1, maxLength: 12 }),
        fc.array(ordinaryArb, { maxLength: 8 }),
        async (entries, ordinary) => {
          const engine = new MemoryEngine();
          const store = await Store.open({ engine });
          try {
            const subs = entries.map(([parent, path]) => ({ parent, key: subKey(parent, path) }));
            for (const k of [...subs.map((x) => x.key), ...subs.map((x) => x.parent), ...ordinary])
              await store.put(k, Buffer.from(k.toString('hex')));
            for (const { parent } of subs) {
              const span = subKeyDataSpan(parent);
              const [hi, lo] = tokenHalves(parent);
              const want = [
                ...new Set(
                  subs.filter((x) => x.parent.equals(parent)).map((x) => dataKey(hi, lo, x.key).toString('hex')),
                ),
              ].sort();
              const it = engine.keyIterator(span.gte, span.lt);
              const got: string[] = [];
              for (let keys = await it.nextv(100); keys.length > 0; keys = await it.nextv(100))
                got.push(...keys.map((k) => k.toString('hex')));
              await it.close();
              expect(got).toEqual(want);
            }
            for (const { key } of subs)
              expect((await store.get(key)).values.map(String)).toEqual([key.toString('hex')]);
          } finally {
            await store.close();
          }
        },
      ),
      { ...RUNS, numRuns: 60 },
    );
  });
});

describe('sub-keys: context checks', () => {
  const siblingsArb = fc.tuple(parentArb, pathArb, pathArb).filter(([p, a, b]) => !subKey(p, a).equals(subKey(p, b)));
  const badContext = async (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'none',
      (e: unknown) => (e instanceof KvError ? e.code : String(e)),
    );

  it("is the token's low half for an ordinary key, and differs between sibling sub-keys", () => {
    fc.assert(
      fc.property(siblingsArb, fc.uint8Array({ minLength: 1, maxLength: 12 }), ([parent, a, b], plain) => {
        for (const k of [parent, Buffer.from(plain)]) expect(contextCheckOf(k)).toBe(tokenHalves(k)[1]);
        expect(contextCheckOf(subKey(parent, a))).not.toBe(contextCheckOf(subKey(parent, b)));
      }),
      { ...RUNS, numRuns: 3000 },
    );
  });

  it("a context read from one sub-key is refused on its sibling; it works on its own; a restart's key filter still knows it", async () => {
    await fc.assert(
      fc.asyncProperty(siblingsArb, async ([parent, a, b]) => {
        const x = subKey(parent, a),
          y = subKey(parent, b);
        const engine = new MemoryEngine();
        let store = await Store.open({ engine });
        try {
          await store.put(x, Buffer.from('1'));
          const fromGet = (await store.get(x)).context;
          const fromReplies = resolveReplies(x, [await store.getRecord(x)]).context;
          for (const ctx of [fromGet, fromReplies])
            expect(await badContext(store.put(y, Buffer.from('2'), ctx))).toBe('KV_BAD_CONTEXT');
          await store.put(x, Buffer.from('3'), fromReplies);
          expect((await store.get(x)).values.map(String)).toEqual(['3']);
          await store.close();
          store = await Store.open({ engine });
          await store.keyFilter.settled;
          expect(store.keyFilter.ready).toBe(true);
          await store.put(x, Buffer.from('4')); // blind: a sibling of what is on disk (a map's register: last writer wins)
          expect((await store.get(x)).values.map(String).sort()).toEqual(
            subKeyPolicy(x) === 'lww' ? ['4'] : ['3', '4'],
          );
        } finally {
          await store.close();
        }
      }),
      { ...RUNS, numRuns: 60 },
    );
  });
});
