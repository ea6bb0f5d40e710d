/**
 * Request ids in the store: a write repeated with its request id is not applied twice;
 * a put of bytes already there is one value; the window of RETIRED_MAX; bad ids refused;
 * records of the earlier format still read as they were.
 */
import { describe, expect, it } from 'vitest';
import { MemoryEngine, Store } from '../../../src/storage/index.js';
import { decodeRecord, encodeRecord } from '../../../src/kinds/versions/codec.js';
import { RETIRED_MAX } from '../../../src/kinds/versions/versions.js';

const open = (now = () => 1_000_000) => Store.open({ engine: new MemoryEngine(), now });
const rid = (s: string): Buffer => Buffer.from(s);

describe('request ids', () => {
  it('a put repeated with its request id issues no second version, and answers as the first did', async () => {
    const s = await open();
    const first = await s.put('k', Buffer.from('v'), undefined, { requestId: rid('r1') });
    const again = await s.put('k', Buffer.from('v'), undefined, { requestId: rid('r1') });
    expect(again.duplicate).toBe(true);
    expect(again.record.equals(first.record)).toBe(true);
    expect(again.context.equals(first.context)).toBe(true);
    expect(decodeRecord(again.record).versions.siblings).toHaveLength(1);
    expect(s.writeStats.duplicates).toBe(1);
    await s.close();
  });

  it('a repeat of a write that was superseded since is recognised: the superseded value does not come back', async () => {
    const s = await open();
    await s.put('k', Buffer.from('old'), undefined, { requestId: rid('r1') });
    const read = await s.get('k');
    await s.put('k', Buffer.from('new'), read.context, { requestId: rid('r2') });
    const late = await s.put('k', Buffer.from('old'), undefined, { requestId: rid('r1') });
    expect(late.duplicate).toBe(true);
    expect((await s.get('k')).values.map(String)).toEqual(['new']);
    await s.close();
  });

  it('a repeated delete is one tombstone', async () => {
    const s = await open();
    await s.put('k', Buffer.from('v'));
    const { context } = await s.get('k');
    await s.delete('k', context, { requestId: rid('d1') });
    const again = await s.delete('k', context, { requestId: rid('d1') });
    expect(again.duplicate).toBe(true);
    expect(decodeRecord(again.record).versions.siblings).toHaveLength(1);
    await s.close();
  });

  it('the same request id with another value or context is another write, never taken for a repeat', async () => {
    const s = await open();
    await s.put('k', Buffer.from('a'), undefined, { requestId: rid('same') });
    const other = await s.put('k', Buffer.from('b'), undefined, { requestId: rid('same') });
    expect(other.duplicate).toBeUndefined();
    expect((await s.get('k')).values.map(String).sort()).toEqual(['a', 'b']);
    await s.close();
  });

  it('past its window (RETIRED_MAX later writes) a late repeat becomes a sibling again: never a lost write', async () => {
    let t = 1_000_000;
    const s = await open(() => t);
    await s.put('k', Buffer.from('first'), undefined, { requestId: rid('r0') });
    for (let i = 1; i <= RETIRED_MAX + 1; i++) {
      t += 1000;
      await s.put('k', Buffer.from(`v${i}`), (await s.get('k')).context, { requestId: rid(`r${i}`) });
    }
    const late = await s.put('k', Buffer.from('first'), undefined, { requestId: rid('r0') });
    expect(late.duplicate).toBeUndefined();
    expect((await s.get('k')).values.map(String).sort()).toEqual(['first', `v${RETIRED_MAX + 1}`]);
    // The retired list stays bounded.
    expect(decodeRecord(late.record).versions.retired!.length).toBeLessThanOrEqual(RETIRED_MAX);
    await s.close();
  });

  it('refuses an empty request id or one over 64 bytes with KV_BAD_REQUEST_ID, writing nothing', async () => {
    const s = await open();
    await expect(s.put('k', Buffer.from('v'), undefined, { requestId: Buffer.alloc(0) })).rejects.toMatchObject({
      code: 'KV_BAD_REQUEST_ID',
      message: expect.stringMatching(/1 to 64 bytes, got 0 bytes/),
    });
    await expect(s.delete('k', undefined, { requestId: Buffer.alloc(65) })).rejects.toMatchObject({
      code: 'KV_BAD_REQUEST_ID',
    });
    expect(await s.getRecord('k')).toBeUndefined();
    await s.close();
  });
});

describe('identical bytes are one value', () => {
  it('a blind put of bytes already there replaces them: running the same script twice leaves one sibling', async () => {
    const s = await open();
    await s.put('k', Buffer.from('value-0'), undefined, { requestId: rid('run1') });
    const second = await s.put('k', Buffer.from('value-0'), undefined, { requestId: rid('run2') });
    expect(decodeRecord(second.record).versions.siblings).toHaveLength(1);
    expect((await s.get('k')).values.map(String)).toEqual(['value-0']);
    await s.close();
  });

  it('two replicas that took the same bytes independently show them once after merging', async () => {
    const [a, b] = [await open(), await open()];
    await a.put('k', Buffer.from('same'));
    const rb = await b.put('k', Buffer.from('same'));
    await a.merge('k', rb.record);
    expect((await a.get('k')).values.map(String)).toEqual(['same']);
    // Both dots stay in the record (a context that saw one of them supersedes only that one).
    expect(decodeRecord((await a.getRecord('k'))!).versions.siblings).toHaveLength(2);
    await Promise.all([a.close(), b.close()]);
  });

  it('concurrent different values stay siblings', async () => {
    const s = await open();
    await s.put('k', Buffer.from('x'));
    await s.put('k', Buffer.from('y'));
    expect((await s.get('k')).values.map(String).sort()).toEqual(['x', 'y']);
    await s.close();
  });
});

describe('record formats', () => {
  it('writes version 1 records while no write id is involved, and reads both', async () => {
    const s = await open();
    const plain = await s.put('a', Buffer.from('v'));
    expect(plain.record[0]).toBe(1);
    const withId = await s.put('b', Buffer.from('v'), undefined, { requestId: rid('r') });
    expect(withId.record[0]).toBe(2);
    expect(decodeRecord(withId.record).versions.siblings[0]!.id).toHaveLength(8);
    // Version 1 bytes written by an earlier release decode to the same versions and encode back equal.
    expect(encodeRecord(decodeRecord(plain.record)).equals(plain.record)).toBe(true);
    await s.close();
  });
});
