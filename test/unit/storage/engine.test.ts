/**
 * One suite for every engine (as every abstract-level backend passes the same tests):
 * the store may rely on exactly what is checked here.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/storage/index.js';
import { ENGINE_KINDS } from './engines.js';

const b = (...bytes: number[]) => Buffer.from(bytes);
const s = (text: string) => Buffer.from(text, 'latin1');

async function drain(e: Engine, gte: Buffer, lt: Buffer, chunk = 2): Promise<string[]> {
  const it = e.iterator(gte, lt);
  const out: string[] = [];
  for (;;) {
    const entries = await it.nextv(chunk);
    if (entries.length === 0) break;
    expect(entries.length).toBeLessThanOrEqual(chunk);
    for (const [k, v] of entries) out.push(`${k.toString('latin1')}=${v.toString('latin1')}`);
  }
  await it.close();
  return out;
}

for (const makeKind of ENGINE_KINDS) {
  const kind = makeKind();
  describe(`engine: ${kind.name}`, () => {
    afterAll(() => kind.cleanup());

    async function open(): Promise<Engine> {
      const e = kind.make();
      await e.open();
      return e;
    }

    it('gets what was put, undefined for what was not, and deletes', async () => {
      const e = await open();
      await e.write([{ type: 'put', key: s('a'), value: s('1') }], false);
      expect((await e.get(s('a')))?.toString()).toBe('1');
      expect(await e.get(s('b'))).toBeUndefined();
      await e.write([{ type: 'del', key: s('a') }], false);
      expect(await e.get(s('a'))).toBeUndefined();
      await e.close();
    });

    it('applies a batch in order, atomically visible', async () => {
      const e = await open();
      await e.write(
        [
          { type: 'put', key: s('k'), value: s('1') },
          { type: 'del', key: s('k') },
          { type: 'put', key: s('k'), value: s('2') },
          { type: 'put', key: s('j'), value: s('3') },
        ],
        true,
      );
      expect((await e.getMany([s('k'), s('j'), s('x')])).map((v) => v?.toString())).toEqual(['2', '3', undefined]);
      await e.close();
    });

    it('iterates [gte, lt) in byte order, including bytes 0x00 and 0xff', async () => {
      const e = await open();
      const keys = [b(0x64, 0xff), b(0x64, 0x00), b(0x64), b(0x63, 0xff), b(0x65), b(0x64, 0x7f, 0x01)];
      await e.write(
        keys.map((k, i) => ({ type: 'put' as const, key: k, value: s(String(i)) })),
        false,
      );
      const got = await drain(e, b(0x64), b(0x65));
      expect(got).toEqual(
        [b(0x64), b(0x64, 0x00), b(0x64, 0x7f, 0x01), b(0x64, 0xff)].map(
          (k) => `${k.toString('latin1')}=${keys.findIndex((x) => x.equals(k))}`,
        ),
      );
      await e.close();
    });

    it('reads a snapshot: writes after an iterator opens are not seen by it', async () => {
      const e = await open();
      await e.write(
        [
          { type: 'put', key: s('a1'), value: s('x') },
          { type: 'put', key: s('a3'), value: s('x') },
        ],
        false,
      );
      const it = e.iterator(s('a'), s('b'));
      await e.write(
        [
          { type: 'put', key: s('a2'), value: s('new') },
          { type: 'del', key: s('a3') },
        ],
        false,
      );
      const seen = (await it.nextv(10)).map(([k]) => k.toString());
      await it.close();
      expect(seen).toEqual(['a1', 'a3']);
      await e.close();
    });

    it('hands out copies: mutating a returned or written buffer changes nothing stored', async () => {
      const e = await open();
      const value = s('abc');
      await e.write([{ type: 'put', key: s('k'), value }], false);
      value[0] = 0x7a;
      const got = (await e.get(s('k')))!;
      got[1] = 0x7a;
      expect((await e.get(s('k')))?.toString()).toBe('abc');
      await e.close();
    });

    it('keeps the order when a key is deleted and written again', async () => {
      const e = await open();
      await e.write(
        [
          { type: 'put', key: s('b'), value: s('1') },
          { type: 'put', key: s('a'), value: s('1') },
        ],
        false,
      );
      expect(await drain(e, s('a'), s('z'))).toEqual(['a=1', 'b=1']);
      await e.write(
        [
          { type: 'del', key: s('a') },
          { type: 'put', key: s('a'), value: s('2') },
          { type: 'put', key: s('c'), value: s('3') },
        ],
        false,
      );
      expect(await drain(e, s('a'), s('z'))).toEqual(['a=2', 'b=1', 'c=3']);
      await e.close();
    });

    it('keeps data across close and open, and estimates the size of a range', async () => {
      const e = await open();
      const value = () => randomBytes(1000); // incompressible, so the estimate is near the raw size
      await e.write(
        Array.from({ length: 200 }, (_, i) => ({
          type: 'put' as const,
          key: s(`r${String(i).padStart(4, '0')}`),
          value: value(),
        })),
        true,
      );
      await e.close();
      await e.open(); // LevelDB writes its log to a table on open: the estimate counts tables
      expect(await e.get(s('r0199'))).toHaveLength(1000);
      const all = await e.approximateSize(s('r'), s('s'));
      const half = await e.approximateSize(s('r'), s('r0100'));
      expect(all).toBeGreaterThan(150_000);
      expect(all).toBeLessThan(300_000);
      expect(half).toBeGreaterThan(all * 0.3);
      expect(half).toBeLessThan(all * 0.7);
      expect(await e.approximateSize(s('x'), s('y'))).toBe(0);
      await e.close();
    });
  });
}
