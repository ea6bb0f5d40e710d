/**
 * No malformed option ever reaches the wire: every call of the client and the admin
 * client, given options of which one is wrong (a name it does not take, or a value of the
 * wrong type, a fraction, a negative number, a quorum above the largest N, a TTL that is
 * no duration), is refused with INVALID_ARGUMENT naming the call and the option, and not
 * one byte is sent. The node here is a bare TCP server that counts the bytes it receives,
 * so anything sent at all would show. What is malformed is said here again, from the
 * docs (docs/client.md#options), not taken from the client's own rules.
 */
import { createServer, type Server } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient, Client } from '../../src/client/index.js';

type Kind = 'quorum' | 'ttl' | 'text' | 'bytes' | 'requestId' | 'limit' | 'deadline' | 'n' | 'siblings' | 'type';

const CALL = { deadlineMs: 'deadline', bucket: 'text' } as const;
const WRITE = {
  ...CALL,
  w: 'quorum',
  requestId: 'requestId',
  nodeConfirms: 'quorum',
  zoneConfirms: 'quorum',
  pw: 'quorum',
} as const;
const PAGE = { ...CALL, r: 'quorum', limit: 'limit' } as const;

/** Each call, the options it takes and their kinds, and how to make it with options `o`. */
const CALLS: readonly {
  name: string;
  takes: Readonly<Record<string, Kind>>;
  run: (c: Client, a: AdminClient, o: object) => Promise<unknown>;
}[] = [
  { name: 'get', takes: { ...CALL, r: 'quorum' }, run: (c, _, o) => c.get('k', o) },
  { name: 'put', takes: { ...WRITE, context: 'bytes', ttlMs: 'ttl' }, run: (c, _, o) => c.put('k', 'v', o) },
  { name: 'delete', takes: { ...WRITE, context: 'bytes' }, run: (c, _, o) => c.delete('k', o) },
  {
    name: 'putIf',
    takes: { ...CALL, context: 'bytes', requestId: 'requestId' },
    run: (c, _, o) => Promise.resolve().then(() => c.putIf('k', 'v', o)),
  },
  {
    name: 'deleteIf',
    takes: { ...CALL, requestId: 'requestId' },
    run: (c, _, o) => Promise.resolve().then(() => c.deleteIf('k', Buffer.from('x'), o)),
  },
  { name: 'counterUpdate', takes: WRITE, run: (c, _, o) => c.counterUpdate('k', 1, o) },
  { name: 'counterGet', takes: { ...CALL, r: 'quorum' }, run: (c, _, o) => c.counterGet('k', o) },
  { name: 'setUpdate', takes: WRITE, run: (c, _, o) => c.setAdd('k', ['e'], o) },
  { name: 'setRead', takes: { ...PAGE, after: 'bytes' }, run: (c, _, o) => c.setRead('k', o) },
  { name: 'setElements', takes: PAGE, run: (c, _, o) => c.setElements('k', o).next() },
  { name: 'setContains', takes: { ...CALL, r: 'quorum' }, run: (c, _, o) => c.setContains('k', 'e', o) },
  {
    name: 'mapUpdate',
    takes: WRITE,
    run: (c, _, o) => c.mapUpdate('k', [{ op: 'increment', path: [{ name: 'n', type: 'counter' }], amount: 1 }], o),
  },
  { name: 'mapRead', takes: { ...PAGE, after: 'bytes' }, run: (c, _, o) => c.mapRead('k', o) },
  { name: 'mapGet', takes: PAGE, run: (c, _, o) => c.mapGet('k', o) },
  { name: 'getMany', takes: { ...CALL, r: 'quorum' }, run: (c, _, o) => c.getMany(['k'], o) },
  {
    name: 'putMany',
    takes: { ...CALL, w: 'quorum', nodeConfirms: 'quorum', zoneConfirms: 'quorum', pw: 'quorum' },
    run: (c, _, o) => c.putMany([{ key: 'k', value: 'v' }], o),
  },
  {
    name: 'putMany item',
    takes: { context: 'bytes', requestId: 'requestId', ttlMs: 'ttl' },
    run: (c, _, o) => c.putMany([{ key: 'k', value: 'v', ...o }]),
  },
  {
    name: 'createBucket',
    takes: { n: 'n', r: 'quorum', w: 'quorum', ttlMs: 'ttl', siblings: 'siblings', type: 'type' },
    run: (_, a, o) => a.createBucket('b', o),
  },
  {
    name: 'setBucket',
    takes: { r: 'quorum', w: 'quorum', ttlMs: 'ttl', siblings: 'siblings' },
    run: (_, a, o) => a.setBucket('b', o),
  },
];

/** Values of no option's type at all. */
const alien = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.object({ maxDepth: 1 }),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.bigInt(),
);
const notWhole = fc.oneof(
  fc.double({ noInteger: true }),
  fc.constant(Number.NaN),
  fc.constant(Infinity),
  fc.constant(-Infinity),
);
const numberText = fc.integer({ min: 0, max: 99 }).map(String);

/** Malformed values of each kind. */
const BAD: Record<Kind, fc.Arbitrary<unknown>> = {
  quorum: fc.oneof(fc.integer({ max: -1 }), fc.integer({ min: 10 }), notWhole, numberText, fc.constant('two'), alien),
  n: fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 10 }), notWhole, numberText, alien),
  deadline: fc.oneof(
    fc.integer({ max: 0 }),
    fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
    notWhole,
    numberText,
    alien,
  ),
  limit: fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 1001 }), notWhole, numberText, alien),
  ttl: fc.oneof(
    fc.integer({ max: -1 }),
    fc.integer({ min: 10 * 365 * 24 * 3600 * 1000 + 1, max: Number.MAX_SAFE_INTEGER }),
    notWhole,
    fc.integer({ min: 1, max: 10_000 }).map(String), // a bare number: which unit?
    fc.constantFrom('7 days', '-1s', '1.5h', '7w', 'soon', ''),
    alien,
  ),
  text: fc.oneof(fc.integer(), alien),
  bytes: fc.oneof(fc.string(), fc.integer(), alien),
  requestId: fc.oneof(
    fc.constant(Buffer.alloc(0)),
    fc.integer({ min: 65, max: 200 }).map((n) => Buffer.alloc(n)),
    fc.string(),
    fc.integer(),
    alien,
  ),
  siblings: fc.oneof(fc.constantFrom('sibling', 'LWW', 'last-write-wins', ''), fc.integer(), alien),
  type: fc.oneof(fc.constantFrom('hll', 'KV', 'counters', ''), fc.integer(), alien),
};

/** Well-formed values of each kind, for the options beside the wrong one. */
const GOOD: Record<Kind, fc.Arbitrary<unknown>> = {
  quorum: fc.integer({ min: 0, max: 3 }),
  n: fc.integer({ min: 1, max: 3 }),
  deadline: fc.integer({ min: 1, max: 10_000 }),
  limit: fc.integer({ min: 1, max: 1000 }),
  ttl: fc.oneof(fc.integer({ min: 0, max: 1e9 }), fc.constantFrom('90s', '7d', '0', '250ms')),
  text: fc.constantFrom('', 'carts'),
  bytes: fc.constant(Buffer.from('ctx')),
  requestId: fc.constant(Buffer.alloc(16, 7)),
  siblings: fc.constantFrom('siblings', 'lww'),
  type: fc.constantFrom('kv', 'counter'),
};

let server: Server;
let received = 0;
let client: Client;
let admin: AdminClient;

beforeAll(async () => {
  server = createServer((s) => s.on('data', (d: Buffer) => (received += d.length)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = `127.0.0.1:${(server.address() as { port: number }).port}`;
  client = new Client({ nodes: [address], tokenAware: false, deadlineMs: 500 });
  admin = new AdminClient(address, 500);
});

afterAll(() => {
  client.close();
  admin.close();
  server.close();
});

/** One call with one option wrong: its index in CALLS, the options, and the name of the wrong one. */
const malformed = fc.integer({ min: 0, max: CALLS.length - 1 }).chain((i) => {
  const { takes } = CALLS[i]!;
  const names = Object.keys(takes);
  const others = fc
    .subarray(names)
    .chain((chosen) => fc.record(Object.fromEntries(chosen.map((n) => [n, GOOD[takes[n]!]]))));
  const wrongValue = fc.constantFrom(...names).chain((name) => fc.tuple(fc.constant(name), BAD[takes[name]!]));
  const unknownName = fc.tuple(
    fc.string({ minLength: 1, maxLength: 12 }).filter((n) => !Object.hasOwn(takes, n) && n !== '__proto__'),
    fc.oneof(GOOD.quorum, GOOD.text),
  );
  return fc.tuple(fc.constant(i), others, fc.oneof(wrongValue, unknownName)).map(([j, rest, [name, value]]) => ({
    call: j,
    options: { ...rest, [name]: value } as object,
    wrong: name,
    unknown: !Object.hasOwn(takes, name),
  }));
});

describe('client and admin options', () => {
  it('a call with one malformed option is refused with INVALID_ARGUMENT naming it, and sends nothing', async () => {
    await fc.assert(
      fc.asyncProperty(malformed, async ({ call, options, wrong, unknown }) => {
        const c = CALLS[call]!;
        const error = await c.run(client, admin, options).then(
          () => undefined,
          (e: unknown) => e as { code?: number; details?: string },
        );
        expect(error?.code, `${c.name}(${String(wrong)})`).toBe(3); // INVALID_ARGUMENT
        expect(error?.details).toContain(
          unknown ? `${c.name}: unknown option ${JSON.stringify(wrong)}` : `${c.name}: option ${wrong} `,
        );
        expect(received).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it('the same options, well formed, do reach the wire', async () => {
    // The oracle's other half: a good call is sent (and, to a server that speaks no gRPC, fails).
    await client.get('k', { r: 2, bucket: 'carts' }).catch(() => undefined);
    expect(received).toBeGreaterThan(0);
  });
});
