/**
 * Sub-keys (src/buckets/subkeys.ts): the layout byte for byte, the bucket and placement of
 * a sub-key, and each refusal with its code and message. The properties (round trips,
 * spans, placement over random paths) are test/property/subkeys.property.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import {
  BucketTable,
  DEFAULT_BUCKET,
  DataTypeError,
  MARK,
  MAX_ELEMENT_BYTES,
  MAX_FIELD_NAME_BYTES,
  bucketOf,
  defaultProps,
  isSubKey,
  parseSubKey,
  placementKey,
  splitKey,
  storedKey,
  subKey,
  subKeyPolicy,
  subKeySpan,
  type FieldName,
} from '../../../src/buckets/index.js';
import { keyClasses } from '../../../src/cluster/n-classes.js';
import { KvError } from '../../../src/storage/index.js';
import { userKey } from '../../../src/storage/keys.js';

const parent = storedKey('tags', Buffer.from('doc:1'));

/** The code and message of what `f` throws ('none' when it returns). */
const refusal = (f: () => unknown): { code: string; message: string } => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(DataTypeError);
    return { code: (e as DataTypeError).code, message: (e as Error).message };
  }
  return { code: 'none', message: '' };
};

/** The head of `parent`'s sub-keys, by hand: MARK 00 len name varint(len key) key. */
const head = Buffer.concat([MARK, Buffer.from([0, 4]), Buffer.from('tags'), Buffer.from([5]), Buffer.from('doc:1')]);
const hex = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('the layout', () => {
  it('a set element: the head, 01, the element', () => {
    expect(subKey(parent, { element: 'red' })).toEqual(Buffer.concat([head, hex([1], 'red')]));
  });
  it('map fields: a tag, a one-byte length and the name each; a set field element ends with 01 element', () => {
    expect(subKey(parent, { fields: [{ name: 'a', type: 'register' }] })).toEqual(
      Buffer.concat([head, hex('r', [1], 'a')]),
    );
    expect(subKey(parent, { fields: [{ name: 'on', type: 'flag' }] })).toEqual(
      Buffer.concat([head, hex('f', [2], 'on')]),
    );
    expect(subKey(parent, { fields: [{ name: 'n', type: 'counter' }] })).toEqual(
      Buffer.concat([head, hex('c', [1], 'n')]),
    );
    const nested = subKey(parent, {
      fields: [
        { name: 'm', type: 'map' },
        { name: 's', type: 'set' },
      ],
      element: 'x',
    });
    expect(nested).toEqual(Buffer.concat([head, hex('m', [1], 'm', 's', [1], 's', [1], 'x')]));
  });
  it('the parent key length is a varint: 300 bytes take two', () => {
    const long = storedKey('b', Buffer.alloc(300, 0x61));
    const k = subKey(long, { element: 'e' });
    expect([...k.subarray(0, 9)]).toEqual([...MARK, 0, 1, 0x62, 0xac, 0x02]);
    expect(parseSubKey(k).key).toEqual(Buffer.alloc(300, 0x61));
  });
});

describe('what a sub-key is to the rest of the node', () => {
  const k = subKey(parent, { fields: [{ name: 'size', type: 'counter' }] });
  it('its bucket and user key are its parent’s', () => {
    expect(bucketOf(k)).toBe('tags');
    expect(Buffer.from(splitKey(k).key).toString()).toBe('doc:1');
  });
  it('is placed by its parent’s stored key; any other key by itself', () => {
    expect(isSubKey(k)).toBe(true);
    expect(placementKey(k)).toEqual(parent);
    expect(placementKey(parent)).toBe(parent);
    expect(isSubKey(parent)).toBe(false);
    const plain = Buffer.from('user:1');
    expect(placementKey(plain)).toBe(plain);
  });
  it('its N class (streams, repair, kept trees, hint routes) is its parent bucket’s', () => {
    const table = new BucketTable(3);
    table.create('tags', { ...defaultProps(3), n: 5 }, 1000, 'a');
    expect(keyClasses(table).nOf(k)).toBe(5);
    expect(keyClasses(table).nOf(parent)).toBe(5);
  });
  it('parses into its parts', () => {
    const p = parseSubKey(
      subKey(parent, {
        fields: [
          { name: 'm', type: 'map' },
          { name: 'tags', type: 'set' },
        ],
        element: Buffer.from([0, 0xff]),
      }),
    );
    expect(p.bucket).toBe('tags');
    expect(p.parent).toEqual(parent);
    expect(p.key.toString()).toBe('doc:1');
    expect(p.fields.map((f) => [f.name.toString(), f.type])).toEqual([
      ['m', 'map'],
      ['tags', 'set'],
    ]);
    expect([...p.element!]).toEqual([0, 0xff]);
  });
  it('a key marked with 00 after MARK whose head does not parse is an ordinary default-bucket key, as before', () => {
    const odd = Buffer.concat([MARK, Buffer.from([0, 2]), Buffer.from('AB'), Buffer.from([1]), Buffer.from('kx')]); // not a bucket name
    expect(isSubKey(odd)).toBe(false);
    expect(placementKey(odd)).toBe(odd);
    expect(bucketOf(odd)).toBe(DEFAULT_BUCKET);
  });
});

describe('spans', () => {
  it('a parent’s span is its head to the next prefix', () => {
    const s = subKeySpan(parent);
    expect(s.gte).toEqual(head);
    expect(s.lt).toEqual(Buffer.concat([head.subarray(0, -1), Buffer.from([head[head.length - 1]! + 1])]));
  });
  it('a field’s span holds its subtree and nothing of its siblings', () => {
    const s = subKeySpan(parent, [{ name: 'm', type: 'map' }]);
    const inside = subKey(parent, {
      fields: [
        { name: 'm', type: 'map' },
        { name: 'x', type: 'register' },
      ],
    });
    const sibling = subKey(parent, {
      fields: [
        { name: 'mm', type: 'map' },
        { name: 'x', type: 'register' },
      ],
    });
    const within = (k: Buffer): boolean => Buffer.compare(s.gte, k) <= 0 && Buffer.compare(k, s.lt) < 0;
    expect(within(inside)).toBe(true);
    expect(within(sibling)).toBe(false);
  });
  it('carries 0xff over: a key that ends in ff', () => {
    const p = storedKey('b', Buffer.from([0x61, 0xff]));
    const s = subKeySpan(p);
    expect(s.lt).toEqual(Buffer.concat([MARK, Buffer.from([0, 1, 0x62, 2, 0x62])])); // 61 ff: ff dropped, 61 raised
  });
});

describe('refusals: each code, each with a message saying what to do', () => {
  const f = (name: string | Uint8Array, type: FieldName['type']): FieldName => ({ name, type });
  it.each<[string, () => unknown, string, RegExp]>([
    ['an empty element', () => subKey(parent, { element: '' }), 'DT_ELEMENT_EMPTY', /at least one byte/],
    [
      'an element over 1,024 bytes',
      () => subKey(parent, { element: Buffer.alloc(MAX_ELEMENT_BYTES + 1) }),
      'DT_ELEMENT_TOO_LARGE',
      /1025 bytes is over the limit of 1024; use a shorter element/,
    ],
    [
      'an empty field name',
      () => subKey(parent, { fields: [f('', 'register')] }),
      'DT_FIELD_NAME_EMPTY',
      /at least one byte/,
    ],
    [
      'a field name over 255 bytes',
      () => subKey(parent, { fields: [f('n'.repeat(MAX_FIELD_NAME_BYTES + 1), 'register')] }),
      'DT_FIELD_NAME_TOO_LARGE',
      /256 bytes is over the limit of 255; use a shorter name/,
    ],
    [
      'a path 5 deep',
      () => subKey(parent, { fields: [f('a', 'map'), f('b', 'map'), f('c', 'map'), f('d', 'map'), f('e', 'flag')] }),
      'DT_PATH_TOO_DEEP',
      /5 nested fields is over the limit of 4; nest fewer maps/,
    ],
    [
      'an unknown field type',
      () => subKey(parent, { fields: [f('a', 'list' as 'map')] }),
      'DT_BAD_PATH',
      /unknown field type "list": use register, flag, counter, set, map/,
    ],
    [
      'a field inside a register',
      () => subKey(parent, { fields: [f('a', 'register'), f('b', 'flag')] }),
      'DT_BAD_PATH',
      /field "a" is a register: only a map field has fields/,
    ],
    [
      'an element of a counter',
      () => subKey(parent, { fields: [f('a', 'counter')], element: 'x' }),
      'DT_BAD_PATH',
      /field "a" is a counter: only a set field has elements/,
    ],
    [
      'a set field with no element',
      () => subKey(parent, { fields: [f('s', 'set')] }),
      'DT_BAD_PATH',
      /field "s" is a set: name one of its elements/,
    ],
    [
      'a map field with no field',
      () => subKey(parent, { fields: [f('m', 'map')] }),
      'DT_BAD_PATH',
      /field "m" is a map: name one of its fields/,
    ],
    [
      'neither element nor field',
      () => subKey(parent, {}),
      'DT_BAD_PATH',
      /names a set element or a map field: give one/,
    ],
    ['a default-bucket parent', () => subKey(Buffer.from('k'), { element: 'x' }), 'DT_BAD_PARENT', /named buckets/],
    [
      'a sub-key as parent',
      () => subKey(subKey(parent, { element: 'x' }), { element: 'y' }),
      'DT_BAD_PARENT',
      /no sub-keys of its own/,
    ],
    [
      'a span under a register',
      () => subKeySpan(parent, [f('a', 'register'), f('b', 'register')]),
      'DT_BAD_PATH',
      /only a map field has fields/,
    ],
  ])('%s', (_what, call, code, message) => {
    const r = refusal(call);
    expect(r.code).toBe(code);
    expect(r.message).toMatch(message);
  });

  const good = subKey(parent, { fields: [f('m', 'map'), f('s', 'set')], element: 'x' });
  it.each<[string, Buffer, string, RegExp]>([
    ['an ordinary key', parent, 'DT_BAD_SUBKEY', /not a sub-key: a sub-key begins with the bytes 00626b7400/],
    [
      'a head with a bad bucket name',
      Buffer.concat([MARK, Buffer.from([0, 1]), Buffer.from('A'), Buffer.from([1, 0x6b, 1, 0x78])]),
      'DT_BAD_SUBKEY',
      /malformed sub-key/,
    ],
    [
      'a key length as a non-minimal varint',
      Buffer.concat([MARK, Buffer.from([0, 1, 0x62, 0x81, 0x00, 0x6b, 1, 0x78])]),
      'DT_BAD_SUBKEY',
      /malformed sub-key/,
    ],
    [
      'an empty parent key',
      Buffer.concat([MARK, Buffer.from([0, 1, 0x62, 0, 1, 0x78])]),
      'DT_BAD_SUBKEY',
      /malformed sub-key/,
    ],
    ['no path', Buffer.concat([head]), 'DT_BAD_SUBKEY', /no path/],
    [
      'an unknown tag',
      Buffer.concat([head, hex('z', [1], 'a')]),
      'DT_BAD_PATH',
      /byte 0x7a at 0 is no field tag nor the element mark 01/,
    ],
    [
      'a field name cut short',
      Buffer.concat([head, hex('r', [5], 'ab')]),
      'DT_BAD_PATH',
      /field name of 5 bytes cut short at 2/,
    ],
    ['a field that ends at its tag', Buffer.concat([head, hex('r')]), 'DT_BAD_PATH', /ends inside a field/],
    [
      'bytes past a register',
      Buffer.concat([head, hex('r', [1], 'a', 'zz')]),
      'DT_BAD_PATH',
      /2 bytes past the end of register field "a"/,
    ],
    [
      'a set field with no element',
      Buffer.concat([head, hex('s', [1], 'a')]),
      'DT_BAD_PATH',
      /set field "a" names no element/,
    ],
    [
      'a set field followed by another field',
      Buffer.concat([head, hex('s', [1], 'a', 'r', [1], 'b')]),
      'DT_BAD_PATH',
      /no element mark 01/,
    ],
    [
      'an element mark inside a map',
      Buffer.concat([head, hex('m', [1], 'a', [1], 'x')]),
      'DT_BAD_PATH',
      /byte 0x01 at 3 is no field tag$/,
    ],
    ['an empty field name', Buffer.concat([head, hex('r', [0])]), 'DT_FIELD_NAME_EMPTY', /at least one byte/],
    ['an empty element', Buffer.concat([head, hex([1])]), 'DT_ELEMENT_EMPTY', /at least one byte/],
    [
      'an element over the limit',
      Buffer.concat([head, Buffer.from([1]), Buffer.alloc(MAX_ELEMENT_BYTES + 1, 7)]),
      'DT_ELEMENT_TOO_LARGE',
      /over the limit of 1024/,
    ],
    [
      'a path 5 deep',
      Buffer.concat([head, hex('m', [1], 'a', 'm', [1], 'b', 'm', [1], 'c', 'm', [1], 'd', 'r', [1], 'e')]),
      'DT_PATH_TOO_DEEP',
      /5 nested fields/,
    ],
    ['a good sub-key cut by one byte', good.subarray(0, good.length - 1), 'DT_ELEMENT_EMPTY', /at least one byte/],
    [
      'a good sub-key cut by two bytes',
      good.subarray(0, good.length - 2),
      'DT_BAD_PATH',
      /set field "s" names no element/,
    ],
  ])('parse refuses %s', (_what, bytes, code, message) => {
    const r = refusal(() => parseSubKey(bytes));
    expect(r.code).toBe(code);
    expect(r.message).toMatch(message);
  });
});

describe("the store's key check (storage/keys.ts userKey) on sub-keys", () => {
  const codeOf = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      expect(e instanceof DataTypeError || e instanceof KvError).toBe(true);
      return (e as DataTypeError | KvError).code;
    }
    return 'none';
  };
  it('takes a good one; the key limit is on its parent key, not on its path', () => {
    const k = subKey(parent, { element: Buffer.alloc(MAX_ELEMENT_BYTES, 1) });
    expect(userKey(k, 5)).toBe(k); // 'doc:1' is 5 bytes
    expect(codeOf(() => userKey(k, 4))).toBe('KV_KEY_TOO_LARGE');
  });
  it('refuses a malformed path with its DT_* code', () => {
    expect(codeOf(() => userKey(Buffer.concat([head, hex('r', [1], 'a', 'zz')]), 4096))).toBe('DT_BAD_PATH');
    expect(codeOf(() => userKey(Buffer.concat([head, hex([1])]), 4096))).toBe('DT_ELEMENT_EMPTY');
  });
});

describe('subKeyPolicy', () => {
  it("is a register's lww, every other sub-key's siblings, and nothing for a key that is no sub-key (its bucket decides)", () => {
    expect(
      subKeyPolicy(
        subKey(parent, {
          fields: [
            { name: 'm', type: 'map' },
            { name: 'r', type: 'register' },
          ],
        }),
      ),
    ).toBe('lww');
    expect(subKeyPolicy(subKey(parent, { fields: [{ name: 'f', type: 'flag' }] }))).toBe('siblings');
    expect(subKeyPolicy(subKey(parent, { fields: [{ name: 's', type: 'set' }], element: 'r' }))).toBe('siblings');
    expect(subKeyPolicy(subKey(parent, { element: 'x' }))).toBe('siblings');
    expect(subKeyPolicy(subKey(parent, { fields: [{ name: 'c', type: 'counter' }] }))).toBe('siblings');
    expect(subKeyPolicy(parent)).toBeUndefined();
    expect(subKeyPolicy(Buffer.from('plain'))).toBeUndefined();
  });
});
