/**
 * The client's option checks (options.ts) on the cases a new user met: a TTL written
 * "7d" is seven days, not 7 ms; a negative, fractional or wordy quorum, a bare-number
 * TTL and a misspelt option name are refused before anything is sent, saying what is
 * taken; and a duration the fake node receives is the one meant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as grpc from '@grpc/grpc-js';
import { RULES, checkOptions } from '../../../src/client/options.js';
import { parseDuration } from '../../../src/buckets/index.js';
import { Client } from '../../../src/client/index.js';
import type { RequestOptions } from '../../../src/replication/coordinator.js';
import { fakeKvServer } from '../../../testkit/fake-kv-node.js';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    const s = e as grpc.ServiceError;
    expect(s.code).toBe(3);
    return s.details;
  }
  throw new Error('not refused');
};

describe('checkOptions', () => {
  it('takes durations with a unit for TTLs, and ms as numbers', () => {
    expect(checkOptions('put', { ttlMs: '7d' }, RULES.put)).toEqual({ ttlMs: 7 * 86_400_000 });
    expect(checkOptions('put', { ttlMs: '90s', w: 2 }, RULES.put)).toEqual({ ttlMs: 90_000, w: 2 });
    expect(checkOptions('createBucket', { ttlMs: '12h', n: 2 }, RULES.bucket)).toEqual({ ttlMs: 12 * 3_600_000, n: 2 });
    expect(checkOptions('put', { ttlMs: 1500 }, RULES.put)).toEqual({ ttlMs: 1500 });
    expect(checkOptions('put', { ttlMs: '0' }, RULES.put)).toEqual({ ttlMs: 0 });
    expect(checkOptions('get', { r: undefined, bucket: undefined }, RULES.get)).toEqual({});
    expect(parseDuration('250ms')).toBe(250);
  });

  it('refuses what a new user passed, naming the call, the option, the value and what is taken', () => {
    expect(refusal(() => checkOptions('get', { r: -1 }, RULES.get))).toBe(
      "get: option r must be a whole number from 0 to 9 (0 or unset: the default; at most the bucket's n), got -1",
    );
    expect(refusal(() => checkOptions('delete', { w: -1 }, RULES.delete))).toMatch(
      /^delete: option w must be a whole number from 0 to 9 .*, got -1$/,
    );
    expect(refusal(() => checkOptions('put', { w: 'two' }, RULES.put))).toMatch(/^put: option w .*, got "two"$/);
    expect(refusal(() => checkOptions('put', { w: 1.5 }, RULES.put))).toMatch(/, got 1\.5$/);
    expect(refusal(() => checkOptions('put', { ttlMs: -5 }, RULES.put))).toMatch(
      /^put: option ttlMs must be a time to live: whole ms from 0 \(none\) to 315360000000 \(10 years\), or a duration like "30s", "12h" or "7d"; got -5$/,
    );
    expect(refusal(() => checkOptions('put', { ttlMs: 1.5 }, RULES.put))).toMatch(/got 1\.5$/);
    expect(refusal(() => checkOptions('put', { ttlMs: '7' }, RULES.put))).toBe(
      'put: option ttlMs must say its unit: 7s, 7m, 7h, 7d, or 7ms if milliseconds are meant; got "7"',
    );
    expect(refusal(() => checkOptions('put', { bukket: 'carts' }, RULES.put))).toBe(
      'put: unknown option "bukket" (did you mean bucket?); put takes deadlineMs, bucket, w, requestId, nodeConfirms, zoneConfirms, pw, context, ttlMs',
    );
    expect(refusal(() => checkOptions('get', { timeout: 5 }, RULES.get))).toMatch(
      /^get: unknown option "timeout"; get takes deadlineMs, bucket, r$/,
    );
    expect(refusal(() => checkOptions('get', 'fast' as unknown as object, RULES.get))).toMatch(
      /^get: options must be an object/,
    );
    expect(refusal(() => checkOptions('createBucket', { n: 10 }, RULES.bucket))).toMatch(
      /^createBucket: option n must be a whole number from 1 to 9, got 10$/,
    );
    expect(refusal(() => checkOptions('createBucket', { siblings: 'LWW' }, RULES.bucket))).toBe(
      'createBucket: option siblings must be one of "siblings", "lww", got "LWW"',
    );
  });
});

describe('Client', () => {
  let server: grpc.Server;
  let client: Client;
  const seen: RequestOptions[] = [];

  beforeAll(async () => {
    const node = await fakeKvServer(async (value, o) => {
      if (o) seen.push(o);
      return value;
    });
    server = node.server;
    client = new Client({ nodes: [node.address], tokenAware: false });
  });
  afterAll(() => {
    client.close();
    server.forceShutdown();
  });

  it('sends a TTL of "7d" as seven days in ms', async () => {
    await client.put('k', 'v', { ttlMs: '7d' });
    expect(seen.at(-1)?.ttlMs).toBe(7 * 86_400_000);
  });

  it('refuses bad options with INVALID_ARGUMENT, not as a node failure to fail over from', async () => {
    const before = seen.length;
    await expect(client.get('k', { r: -1 })).rejects.toMatchObject({
      code: 3,
      details: expect.stringMatching(/^get: option r /),
    });
    await expect(client.put('k', 'v', { ttlMs: -5 })).rejects.toMatchObject({ code: 3 });
    await expect(client.put('k', 'v', { bukket: 'carts' } as object)).rejects.toMatchObject({
      code: 3,
      details: expect.stringContaining('did you mean bucket?'),
    });
    expect(seen.length).toBe(before);
    expect(() => new Client({ nodes: ['127.0.0.1:1'], deadlinMs: 5 } as never)).toThrow(
      /^3 INVALID_ARGUMENT: Client: unknown option "deadlinMs" \(did you mean deadlineMs\?\)/,
    );
  });
});
