import { describe, expect, it } from 'vitest';
import {
  BucketError,
  DEFAULT_BUCKET,
  MARK,
  bucketName,
  checkProps,
  defaultProps,
  splitKey,
  storedKey,
  typeOf,
  withProperty,
} from '../../../src/buckets/index.js';

const err = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return (e as BucketError).code;
  }
  return 'none';
};

describe('bucket names', () => {
  it('takes the empty name as the default bucket', () => {
    expect(bucketName('')).toBe(DEFAULT_BUCKET);
    expect(bucketName('users.v2')).toBe('users.v2');
  });
  it('refuses names that are too long or have other characters', () => {
    expect(err(() => bucketName('a'.repeat(65)))).toBe('BK_BAD_NAME');
    expect(err(() => bucketName('Users'))).toBe('BK_BAD_NAME');
    expect(err(() => bucketName('-x'))).toBe('BK_BAD_NAME');
    expect(err(() => bucketName('a b'))).toBe('BK_BAD_NAME');
    expect(bucketName('a'.repeat(64))).toHaveLength(64);
  });
});

describe('bucket properties', () => {
  it('checks each against its range and n', () => {
    expect(err(() => checkProps({ ...defaultProps(3), n: 0 }))).toBe('BK_BAD_PROPERTY');
    expect(err(() => checkProps({ ...defaultProps(3), n: 10 }))).toBe('BK_BAD_PROPERTY');
    expect(err(() => checkProps({ ...defaultProps(3), r: 4 }))).toBe('BK_BAD_PROPERTY');
    expect(err(() => checkProps({ ...defaultProps(3), w: -1 }))).toBe('BK_BAD_PROPERTY');
    expect(err(() => checkProps({ ...defaultProps(3), ttlMs: 1.5 }))).toBe('BK_BAD_PROPERTY');
    expect(err(() => checkProps({ ...defaultProps(3), siblings: 'x' as 'lww' }))).toBe('BK_BAD_PROPERTY');
    expect(checkProps({ n: 5, r: 5, w: 1, ttlMs: 60_000, siblings: 'lww' }).n).toBe(5);
  });
  it('takes a type of kv, counter or set; refuses map (not in this release) and others, naming the three', () => {
    expect(defaultProps(3).type).toBe('kv');
    expect(typeOf({ n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings' })).toBe('kv');
    for (const t of ['kv', 'counter', 'set', 'map'] as const)
      expect(checkProps(withProperty(defaultProps(3), 'type', t)).type).toBe(t);
    const message = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        return `${(e as BucketError).code}: ${(e as Error).message}`;
      }
      return 'none';
    };
    expect(message(() => withProperty(defaultProps(3), 'type', 'Counter'))).toMatch(
      /^BK_BAD_PROPERTY: type must be kv, counter, set, map, consistent, got "Counter"/,
    );
    expect(err(() => checkProps({ ...defaultProps(3), type: 'hll' as 'kv' }))).toBe('BK_BAD_PROPERTY');
    expect(message(() => checkProps({ ...defaultProps(3), type: 'counter', ttlMs: 1000 }))).toMatch(
      /^BK_BAD_PROPERTY: a bucket of type counter has no TTL/,
    );
    expect(message(() => checkProps({ ...defaultProps(3), type: 'map', ttlMs: 1000 }))).toMatch(
      /^BK_BAD_PROPERTY: a bucket of type map has no TTL/,
    );
    // A consistent bucket: no TTL, and always a majority (Paxos quorums must meet).
    expect(message(() => checkProps({ ...defaultProps(3), type: 'consistent', ttlMs: 1000 }))).toMatch(
      /^BK_BAD_PROPERTY: a bucket of type consistent has no TTL/,
    );
    expect(message(() => checkProps({ ...defaultProps(3), type: 'consistent', w: 1 }))).toMatch(
      /^BK_BAD_PROPERTY: a consistent bucket reads and writes a majority .*leave r and w at 0/,
    );
    expect(message(() => checkProps({ ...defaultProps(3), type: 'consistent', r: 3 }))).toMatch(
      /Paxos quorums must meet/,
    );
    expect(checkProps({ ...defaultProps(5), type: 'consistent' }).type).toBe('consistent');
    expect(checkProps({ ...defaultProps(3), type: 'kv', ttlMs: 1000 }).ttlMs).toBe(1000);
  });
  it('reads text and refuses unknown names and non-numbers', () => {
    expect(withProperty(defaultProps(3), 'ttl_ms', '1000').ttlMs).toBe(1000);
    expect(err(() => withProperty(defaultProps(3), 'nval', '3'))).toBe('BK_BAD_PROPERTY');
    expect(err(() => checkProps(withProperty(defaultProps(3), 'r', '2x')))).toBe('BK_BAD_PROPERTY');
  });
});

describe('stored keys', () => {
  it('keeps default-bucket keys as they are', () => {
    const k = Buffer.from('user:1');
    expect(storedKey(DEFAULT_BUCKET, k)).toBe(k);
    expect(splitKey(k)).toEqual({ bucket: DEFAULT_BUCKET, key: k });
  });
  it('round-trips a named bucket key, and the bucket changes the bytes', () => {
    const s = storedKey('carts', Buffer.from('user:1'));
    expect(s.subarray(0, 4)).toEqual(MARK);
    const { bucket, key } = splitKey(s);
    expect(bucket).toBe('carts');
    expect(Buffer.from(key).toString()).toBe('user:1');
    expect(storedKey('cart', Buffer.from('suser:1')).equals(s)).toBe(false);
  });
  it('refuses default-bucket keys that begin with the mark', () => {
    expect(err(() => storedKey(DEFAULT_BUCKET, Buffer.concat([MARK, Buffer.from('x')])))).toBe('BK_RESERVED_KEY');
    expect(storedKey(DEFAULT_BUCKET, MARK.subarray(0, 3)).length).toBe(3);
  });
  it('reads a marked key that does not parse as the default bucket (written before buckets)', () => {
    const odd = Buffer.concat([MARK, Buffer.from([3]), Buffer.from('AB!x')]);
    expect(splitKey(odd).bucket).toBe(DEFAULT_BUCKET);
  });
});
