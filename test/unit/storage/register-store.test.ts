/**
 * The store's compare-and-set register: its acceptor steps (PAXOS_PREPARE,
 * PAXOS_PROPOSE, PAXOS_COMMIT, run by Store.step) persisted under the key's lock as record format 5
 * (acceptor.ts); its records merged by the acceptors' join on every path a record takes
 * between replicas (merge, mergeMany, ingest, hints); range hashes of equal states equal;
 * and each refusal: a register met by versions or a counter, or they by a register, and a
 * malformed ballot or proposal.
 */
import {
  PAXOS_COMMIT,
  PAXOS_PREPARE,
  PAXOS_PROPOSE,
  REGISTER,
  decodeRegister,
  encodeRegister,
  type Proposal,
} from '../../../src/kinds/index.js';
import { describe, expect, it } from 'vitest';
import { storedKey } from '../../../src/buckets/index.js';
import { KvError, MemoryEngine, Store } from '../../../src/storage/index.js';

const key = storedKey('locks', Buffer.from('leader'));
const b = (n: number, by = 'n1') => ({ n, by });
const p = (n: number, value: string | null, by = 'n1'): Proposal<Buffer> => ({
  ballot: b(n, by),
  value: value === null ? null : Buffer.from(value),
  id: `req-${n}-${by}`,
});

async function code(promise: Promise<unknown>): Promise<string> {
  const e = await promise.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof KvError)) throw new Error(`expected a KvError, got ${String(e)}`);
  return e.code;
}

describe('the register on one store', () => {
  it('promises, accepts and commits as the acceptor does, and keeps it across a restart', async () => {
    const engine = new MemoryEngine();
    let s = await Store.open({ engine });
    expect(await s.step(key, REGISTER, PAXOS_PREPARE, b(5))).toEqual({
      promised: true,
      accepted: undefined,
      committed: undefined,
      history: [],
    });
    expect(await s.step(key, REGISTER, PAXOS_PREPARE, b(4))).toEqual({ promised: false, higher: b(5) });
    expect(await s.step(key, REGISTER, PAXOS_PROPOSE, p(4, 'old'))).toEqual({ accepted: false, higher: b(5) });
    expect(await s.step(key, REGISTER, PAXOS_PROPOSE, p(5, 'v'))).toEqual({ accepted: true });
    await s.close();
    s = await Store.open({ engine });
    // The promise and the acceptance outlived the restart: a lower prepare is refused, a higher one sees the proposal.
    expect(await s.step(key, REGISTER, PAXOS_PREPARE, b(5))).toEqual({ promised: false, higher: b(5) });
    const r = await s.step(key, REGISTER, PAXOS_PREPARE, b(6, 'n2'));
    expect(r).toMatchObject({ promised: true, committed: undefined });
    expect(r.promised && String(r.accepted?.value)).toBe('v');
    await s.step(key, REGISTER, PAXOS_COMMIT, p(5, 'v'));
    expect(decodeRegister((await s.getRecord(key))!).register).toEqual({
      promised: b(6, 'n2'),
      accepted: undefined,
      committed: p(5, 'v'),
      history: [],
    });
    // The commit it replaces is remembered (its link: ballot, id, base), across a restart too.
    await s.step(key, REGISTER, PAXOS_COMMIT, { ...p(7, 'w'), base: p(5, 'v').id });
    await s.close();
    s = await Store.open({ engine });
    expect(await s.step(key, REGISTER, PAXOS_PREPARE, b(8))).toMatchObject({
      promised: true,
      committed: { id: 'req-7-n1', base: 'req-5-n1' },
      history: [{ ballot: b(5), id: 'req-5-n1' }],
    });
    await s.close();
  });

  it("merges replicas' records by the join, on merge, mergeMany, ingest and hints; a second merge changes nothing", async () => {
    const a = await Store.open({ engine: new MemoryEngine() }),
      c = await Store.open({ engine: new MemoryEngine() });
    await a.step(key, REGISTER, PAXOS_PREPARE, b(3));
    await a.step(key, REGISTER, PAXOS_PROPOSE, p(3, 'x'));
    await c.step(key, REGISTER, PAXOS_COMMIT, p(1, 'u'));
    await c.step(key, REGISTER, PAXOS_COMMIT, p(2, 'w'));
    const ra = (await a.getRecord(key))!,
      rc = (await c.getRecord(key))!;
    const want = {
      promised: b(3),
      accepted: p(3, 'x'),
      committed: p(2, 'w'),
      history: [{ ballot: b(1), id: 'req-1-n1' }],
    };
    for (const via of ['merge', 'mergeMany', 'ingest'] as const) {
      const s = await Store.open({ engine: new MemoryEngine() });
      if (via === 'merge') {
        expect((await s.merge(key, ra)).changed).toBe(true);
        expect((await s.merge(key, rc)).changed).toBe(true);
        expect((await s.merge(key, rc)).changed).toBe(false);
      } else if (via === 'mergeMany')
        await s.mergeMany([
          { key, record: ra },
          { key, record: rc },
        ]);
      else
        await s.ingest([
          { key, record: ra },
          { key, record: rc },
        ]);
      expect(decodeRegister((await s.getRecord(key))!).register, via).toEqual(want);
      await s.close();
    }
    const h = await Store.open({ engine: new MemoryEngine() });
    await h.hints.add('n9', key, ra);
    await h.hints.add('n9', key, rc);
    expect(decodeRegister((await h.hints.get('n9', key))!).register).toEqual(want);
    await Promise.all([a.close(), c.close(), h.close()]);
  });

  it('hashes equal states alike for anti-entropy, whatever path made them', async () => {
    const x = await Store.open({ engine: new MemoryEngine() }),
      y = await Store.open({ engine: new MemoryEngine() });
    await x.step(key, REGISTER, PAXOS_PREPARE, b(2));
    await x.step(key, REGISTER, PAXOS_COMMIT, p(2, 'v'));
    await y.merge(key, (await x.getRecord(key))!);
    const whole = { start: 0n, end: 0n };
    expect((await y.ranges.hash(whole)).hash).toBe((await x.ranges.hash(whole)).hash);
    await Promise.all([x.close(), y.close()]);
  });

  it('refuses a register met by versions or a counter, and they by a register, writing nothing', async () => {
    const s = await Store.open({ engine: new MemoryEngine() });
    const plain = storedKey('locks', Buffer.from('plain')),
      counted = storedKey('locks', Buffer.from('counted'));
    await s.put(plain, Buffer.from('v'));
    await s.counterUpdate(counted, 1);
    await s.step(key, REGISTER, PAXOS_COMMIT, p(1, 'v'));
    expect(await code(s.step(plain, REGISTER, PAXOS_PREPARE, b(1)))).toBe('KV_WRONG_TYPE');
    expect(await code(s.step(counted, REGISTER, PAXOS_COMMIT, p(1, 'v')))).toBe('KV_WRONG_TYPE');
    expect(await code(s.put(key, Buffer.from('x')))).toBe('KV_WRONG_TYPE');
    expect(await code(s.get(key))).toBe('KV_WRONG_TYPE');
    expect(await code(s.counterUpdate(key, 1))).toBe('KV_WRONG_TYPE');
    expect(
      await code(
        s.merge(plain, encodeRegister({ promised: b(1), accepted: undefined, committed: p(1, 'v'), history: [] })),
      ),
    ).toBe('KV_WRONG_TYPE');
    expect(await code(s.merge(key, (await s.getRecord(plain))!))).toBe('KV_WRONG_TYPE');
    const registerRecord = (await s.getRecord(key))!;
    await s.hints.add('n9', key, (await s.getRecord(plain))!);
    expect(await code(s.hints.add('n9', key, registerRecord))).toBe('KV_WRONG_TYPE');
    expect(decodeRegister((await s.getRecord(key))!).register.committed).toEqual(p(1, 'v'));
    await s.close();
  });

  it('refuses a malformed ballot or proposal', async () => {
    const s = await Store.open({ engine: new MemoryEngine(), limits: { maxValueBytes: 8 } });
    expect(await code(s.step(key, REGISTER, PAXOS_PREPARE, b(0)))).toBe('KV_BAD_OPTION');
    expect(await code(s.step(key, REGISTER, PAXOS_PREPARE, { n: 1.5, by: 'n1' }))).toBe('KV_BAD_OPTION');
    expect(await code(s.step(key, REGISTER, PAXOS_PREPARE, b(1, '')))).toBe('KV_BAD_OPTION');
    expect(await code(s.step(key, REGISTER, PAXOS_PROPOSE, { ...p(1, 'v'), id: '' }))).toBe('KV_BAD_OPTION');
    expect(await code(s.step(key, REGISTER, PAXOS_PROPOSE, p(1, 'much too long')))).toBe('KV_VALUE_TOO_LARGE');
    expect(await s.getRecord(key)).toBeUndefined();
    await s.close();
  });
});
