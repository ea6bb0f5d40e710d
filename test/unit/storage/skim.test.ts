/**
 * codec.ts skimRecord, the check Store.ingest runs instead of a decode on a record it
 * copies: against decodeRecord, on random valid records of every format and on fuzzed
 * bytes. It must never accept what the decoder refuses; where it accepts, its facts
 * (tombstones only, earliest expiry, counts) are the decoded versions', and the versions
 * section is byte for byte what encodeRecord writes for them (so a copied record equals
 * a merged one). spliceRecord must equal encodeRecord's record.
 */
import { crc32 as crc32Of } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord, spliceRecord } from '../../../src/kinds/versions/codec.js';
import { skimRecord } from '../../../src/kinds/versions/skim.js';
import type { StoredRecord } from '../../../src/kinds/versions/codec.js';
import type { RecordSkim } from '../../../src/kinds/versions/skim.js';
import { isDeleted, nextExpiry } from '../../../src/kinds/versions/versions.js';
import { recordArb } from '../../../testkit/record-arb.js';

const out: RecordSkim = {
  format: 0,
  versionsStart: 0,
  versionsEnd: 0,
  actors: 0,
  siblings: 0,
  retired: 0,
  deleted: false,
  nextExpiry: undefined,
};

function decoded(bytes: Buffer): StoredRecord | undefined {
  try {
    return decodeRecord(bytes);
  } catch {
    return undefined;
  }
}

/** The versions section encodeRecord writes for `rec`'s versions (no bookkeeping: a 2-byte header). */
function canonical(rec: StoredRecord): Buffer {
  const bytes = encodeRecord({ versions: rec.versions, ownerEpoch: undefined, deletedAt: undefined });
  return bytes.subarray(2, bytes.length - 4);
}

/** The skim agrees with the decoder on `bytes`: refuses what it refuses, and where it accepts, says what it says. */
function agrees(bytes: Buffer): boolean {
  const ok = skimRecord(bytes, out);
  const rec = decoded(bytes);
  if (!ok) return true; // refused: the caller decodes (and the decoder decides)
  expect(rec).toBeDefined();
  const v = rec!.versions;
  expect(out.format).toBe(bytes[0]);
  expect(out.actors).toBe(v.clock.size);
  expect(out.siblings).toBe(v.siblings.length);
  expect(out.retired).toBe(v.retired?.length ?? 0);
  expect(out.deleted).toBe(isDeleted(v));
  expect(out.nextExpiry).toBe(nextExpiry(v));
  expect(bytes.subarray(out.versionsStart, out.versionsEnd).equals(canonical(rec!))).toBe(true);
  return true;
}

describe('skimRecord', () => {
  it('accepts every record encodeRecord writes, with the decoded versions’ facts, and spliceRecord rebuilds encodeRecord’s record', () => {
    fc.assert(
      fc.property(recordArb, fc.option(fc.nat(2 ** 40), { nil: undefined }), (rec, deletedAt) => {
        const bytes = encodeRecord(rec);
        expect(skimRecord(bytes, out)).toBe(true);
        agrees(bytes);
        const spliced = spliceRecord(out.format, bytes.subarray(out.versionsStart, out.versionsEnd), deletedAt);
        expect(spliced.equals(encodeRecord({ versions: rec.versions, ownerEpoch: undefined, deletedAt }))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('never accepts what decodeRecord refuses: records with bytes flipped, cut, inserted (checksum fixed, so the walk is what is tested)', () => {
    const damage = fc.record({
      at: fc.nat(),
      byte: fc.integer({ min: 0, max: 255 }),
      how: fc.constantFrom('flip', 'cut', 'insert', 'drop'),
      fixCrc: fc.boolean(),
    });
    fc.assert(
      fc.property(recordArb, fc.array(damage, { minLength: 1, maxLength: 3 }), (rec, hits) => {
        let b = Buffer.from(encodeRecord(rec));
        for (const h of hits) {
          const body = b.subarray(0, Math.max(0, b.length - 4));
          const at = body.length === 0 ? 0 : h.at % body.length;
          let next: Buffer;
          if (h.how === 'flip') ((next = Buffer.from(body)), (next[at] = h.byte));
          else if (h.how === 'cut') next = body.subarray(0, at);
          else if (h.how === 'insert')
            next = Buffer.concat([body.subarray(0, at), Buffer.from([h.byte]), body.subarray(at)]);
          else next = Buffer.concat([body.subarray(0, at), body.subarray(at + 1)]);
          const crc = Buffer.alloc(4);
          crc.writeUInt32BE(h.fixCrc ? crc32Of(next) : (b.readUInt32BE(b.length - 4) ^ 1) >>> 0);
          b = Buffer.concat([next, crc]);
        }
        agrees(b);
      }),
      { numRuns: 2000 },
    );
  });

  it('never accepts random bytes the decoder refuses', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.constantFrom(1, 2, 3), (raw, format) => {
        const body = Buffer.from(raw);
        if (body.length > 0) body[0] = format;
        const crc = Buffer.alloc(4);
        crc.writeUInt32BE(crc32Of(body));
        agrees(Buffer.concat([body, crc]));
      }),
      { numRuns: 2000 },
    );
  });

  describe('refuses, as the decoder does, each rule broken on its own (records written byte by byte)', () => {
    const A = 'A'.repeat(16),
      B = 'B'.repeat(16);
    const I1 = 'id-00001',
      I2 = 'id-00002';
    type Sib = { ai: number; c: number; value?: string; ref?: number; extras?: number; exp?: number; at?: number };
    interface Parts {
      format?: number;
      flags?: number;
      header?: number[];
      actors?: [string, number][];
      ids?: string[];
      retired?: [string, number][];
      siblings?: Sib[];
      tail?: number[];
    }
    const varint = (n: number): number[] => {
      const out: number[] = [];
      while (n >= 0x80) (out.push((n % 0x80) | 0x80), (n = Math.floor(n / 0x80)));
      out.push(n);
      return out;
    };
    function build(p: Parts): Buffer {
      const format = p.format ?? 1,
        withIds = format >= 2,
        withExtras = format === 3;
      const b: number[] = [format, p.flags ?? 0, ...(p.header ?? [])];
      const actors = p.actors ?? [[A, 2]];
      b.push(...varint(actors.length));
      for (const [a, c] of actors) b.push(...Buffer.from(a, 'latin1'), ...varint(c));
      if (withIds) {
        const ids = p.ids ?? [];
        b.push(...varint(ids.length));
        for (const id of ids) b.push(...Buffer.from(id, 'latin1'));
        const retired = p.retired ?? [];
        b.push(...varint(retired.length));
        for (const [id, at] of retired) b.push(...Buffer.from(id, 'latin1'), ...varint(at));
      }
      const sibs = p.siblings ?? [{ ai: 0, c: 1, value: 'x' }];
      b.push(...varint(sibs.length));
      for (const s of sibs) {
        b.push(...varint(s.ai), ...varint(s.c));
        if (s.value === undefined) b.push(0);
        else b.push(1, ...varint(s.value.length), ...Buffer.from(s.value));
        if (withIds) b.push(...varint(s.ref ?? 0));
        if (withExtras) {
          const extras = s.extras ?? (s.exp !== undefined ? 1 : 0) | (s.at !== undefined ? 2 : 0);
          b.push(extras);
          if (s.exp !== undefined) b.push(...varint(s.exp));
          if (s.at !== undefined) b.push(...varint(s.at));
        }
      }
      b.push(...(p.tail ?? []));
      const body = Buffer.from(b);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32Of(body));
      return Buffer.concat([body, crc]);
    }

    it('accepts the well-formed records the cases start from', () => {
      for (const p of [
        {},
        { format: 2, ids: [I1], siblings: [{ ai: 0, c: 1, value: 'x', ref: 1 }] },
        { format: 2, retired: [[I1, 5]] as [string, number][] },
        { format: 3, siblings: [{ ai: 0, c: 1, value: 'x', exp: 9 }] },
        { flags: 3, header: [7, 9] },
      ]) {
        const bytes = build(p);
        expect(() => decodeRecord(bytes)).not.toThrow();
        expect(skimRecord(bytes, out)).toBe(true);
        agrees(bytes);
      }
    });

    const cases: [string, Parts][] = [
      ['unknown flags', { flags: 4 }],
      [
        'clock actors out of order',
        {
          actors: [
            [B, 1],
            [A, 1],
          ],
          siblings: [],
        },
      ],
      [
        'the same actor twice',
        {
          actors: [
            [A, 1],
            [A, 2],
          ],
          siblings: [],
        },
      ],
      ['a zero counter in the clock', { actors: [[A, 0]], siblings: [] }],
      ['a sibling naming an actor the clock lacks', { siblings: [{ ai: 1, c: 1, value: 'x' }] }],
      ['a sibling counter of 0', { siblings: [{ ai: 0, c: 0, value: 'x' }] }],
      ['a sibling dot past the clock', { siblings: [{ ai: 0, c: 3, value: 'x' }] }],
      [
        'siblings out of order',
        {
          siblings: [
            { ai: 0, c: 2, value: 'x' },
            { ai: 0, c: 1, value: 'y' },
          ],
        },
      ],
      [
        'the same dot twice',
        {
          siblings: [
            { ai: 0, c: 1, value: 'x' },
            { ai: 0, c: 1, value: 'x' },
          ],
        },
      ],
      ['an unknown sibling kind', { siblings: [{ ai: 0, c: 1 }] }],
      ['a value longer than the record', { siblings: [{ ai: 0, c: 1, value: 'x' }] }],
      [
        'write ids out of order',
        {
          format: 2,
          ids: [I2, I1],
          siblings: [
            { ai: 0, c: 1, value: 'x', ref: 1 },
            { ai: 0, c: 2, value: 'y', ref: 2 },
          ],
        },
      ],
      ['a write id no sibling holds', { format: 2, ids: [I1, I2], siblings: [{ ai: 0, c: 1, value: 'x', ref: 1 }] }],
      [
        'a sibling naming a write id past the list',
        { format: 2, ids: [I1], siblings: [{ ai: 0, c: 1, value: 'x', ref: 2 }] },
      ],
      [
        'retired ids out of order',
        {
          format: 2,
          retired: [
            [I2, 1],
            [I1, 1],
          ],
        },
      ],
      [
        'a write id both live and retired',
        { format: 2, ids: [I1], retired: [[I1, 1]], siblings: [{ ai: 0, c: 1, value: 'x', ref: 1 }] },
      ],
      ['a version 2 record without ids', { format: 2 }],
      ['a version 3 record without extras', { format: 3 }],
      ['unknown sibling extras', { format: 3, siblings: [{ ai: 0, c: 1, value: 'x', extras: 4 }] }],
      ['a tombstone with an expiry', { format: 3, siblings: [{ ai: 0, c: 1, exp: 5 }] }],
      ['trailing bytes', { tail: [0] }],
      ['an integer past 2^53', { actors: [[A, 2 ** 55]], siblings: [] }],
    ];
    for (const [name, p] of cases)
      it(name, () => {
        let bytes = build(p);
        if (name === 'an unknown sibling kind' || name === 'a value longer than the record') {
          // Patch the kind byte (2), or the value's length (past the end), then fix the checksum.
          const body = Buffer.from(bytes.subarray(0, bytes.length - 4));
          const at = 2 + 1 + 16 + 1 + 1 + 1 + 1; // header, n actors, actor, counter, n siblings, actor index, counter
          if (name === 'an unknown sibling kind') body[at] = 2;
          else body[at + 1] = 9;
          const crc = Buffer.alloc(4);
          crc.writeUInt32BE(crc32Of(body));
          bytes = Buffer.concat([body, crc]);
        }
        expect(() => decodeRecord(bytes)).toThrow();
        expect(skimRecord(bytes, out)).toBe(false);
      });
  });

  it('refuses a non-minimal varint the decoder accepts (not canonical: the record is decoded and re-encoded instead)', () => {
    const rec = encodeRecord({
      versions: {
        clock: new Map([['A'.repeat(16), 1]]),
        siblings: [{ actor: 'A'.repeat(16), counter: 1, value: Buffer.from('x') }],
      },
      ownerEpoch: undefined,
      deletedAt: undefined,
    });
    // The sibling's counter 1 as 0x81 0x00.
    const body = rec.subarray(0, rec.length - 4);
    const at = 2 + 1 + 16 + 1 + 1 + 1; // header, n actors, actor, its counter, n siblings, actor index
    expect(body[at]).toBe(1);
    const longer = Buffer.concat([body.subarray(0, at), Buffer.from([0x81, 0x00]), body.subarray(at + 1)]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32Of(longer));
    const bytes = Buffer.concat([longer, crc]);
    expect(decodeRecord(bytes).versions.siblings[0]!.counter).toBe(1);
    expect(skimRecord(bytes, out)).toBe(false);
    expect(skimRecord(rec, out)).toBe(true);
  });
});
