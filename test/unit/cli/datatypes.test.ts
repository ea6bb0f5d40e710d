/**
 * `ringkv counter`, `ringkv set`, `ringkv map` and `ringkv cas`, parsed by commander as the CLI parses them and run
 * against a node's KeyValue service over a fake cluster (in one process): what each
 * prints, its exit codes, and the refusals of bad arguments and of a bucket of another type.
 */
import * as grpc from '@grpc/grpc-js';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BucketTable } from '../../../src/buckets/index.js';
import { amount, counterCommand, setCommand } from '../../../src/cli/commands/datatype-commands.js';
import { EXIT } from '../../../src/cli/exit.js';
import { mapCommands } from '../../../src/cli/commands/map-commands.js';
import { casCommands } from '../../../src/cli/commands/cas-commands.js';
import { KeyValueService } from '../../../src/transport/kv-service.js';
import { FakeCluster } from '../replication/fake-cluster.js';

const cleanup: (() => unknown)[] = [];
/** The fake cluster of the last node(). */
let last: FakeCluster;
let out: string[];
let err: string[];
beforeEach(() => {
  out = [];
  err = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
});
afterEach(async () => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A node serving KeyValue over a 3-node fake cluster (`timeoutMs`) with buckets hits (counter), tags (set), carts (kv), profiles (map) and locks (consistent). */
async function node(timeoutMs?: number): Promise<string> {
  const cluster = await FakeCluster.create(3, timeoutMs === undefined ? {} : { timeoutMs });
  last = cluster;
  cleanup.push(() => cluster.close());
  const buckets = new BucketTable(3);
  const base = { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings' } as const;
  buckets.create('hits', { ...base, type: 'counter' }, 1000, 'n1');
  buckets.create('tags', { ...base, type: 'set' }, 1000, 'n1');
  buckets.create('carts', { ...base, type: 'kv' }, 1000, 'n1');
  buckets.create('profiles', { ...base, type: 'map' }, 1000, 'n1');
  buckets.create('locks', { ...base, type: 'consistent' }, 1000, 'n1');
  const service = new KeyValueService(cluster.coordinator('n1'), buckets);
  const server = new grpc.Server();
  server.addService(
    service.definition(),
    service.implementation((impl) => impl),
  );
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  cleanup.push(() => server.forceShutdown());
  return `127.0.0.1:${port}`;
}

/** Run `ringkv ARGS...` (the counter and set commands), printing into `out` and `err`; the error it failed with, if any. */
async function ringkv(...args: string[]): Promise<Error | undefined> {
  const program = new Command()
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeErr: (s) => void err.push(s), writeOut: (s) => void out.push(s) });
  counterCommand(program);
  setCommand(program);
  mapCommands(program);
  casCommands(program);
  for (const c of program.commands) {
    c.exitOverride();
    for (const s of c.commands) s.exitOverride();
  }
  try {
    await program.parseAsync(['node', 'ringkv', ...args]);
    return undefined;
  } catch (e) {
    return e as Error;
  }
}

describe('ringkv counter', () => {
  it('incr, decr (negative amounts too) and get print the value; --json; get --exit-code of a counter never updated', async () => {
    const at = await node();
    const flags = ['--bucket', 'hits', '--node', at];
    expect(await ringkv('counter', 'incr', 'visits', ...flags)).toBeUndefined();
    expect(await ringkv('counter', 'incr', 'visits', '10', ...flags)).toBeUndefined();
    expect(await ringkv('counter', 'incr', 'visits', '-3', ...flags)).toBeUndefined();
    expect(await ringkv('counter', 'decr', 'visits', '2', ...flags, '--json')).toBeUndefined();
    expect(await ringkv('counter', 'get', 'visits', ...flags)).toBeUndefined();
    expect(out).toEqual(['1', '11', '8', '{"value":"6"}', '6']);
    out = [];
    expect(await ringkv('counter', 'get', 'never', ...flags, '--json', '--exit-code')).toBeUndefined();
    expect(out).toEqual(['{"value":"0","found":false}']);
    expect(process.exitCode).toBe(EXIT.notFound);
  });

  it('reset takes out what it read and counts from 0 again; --json; --exit-code of a counter never updated', async () => {
    const at = await node();
    const flags = ['--bucket', 'hits', '--node', at];
    expect(await ringkv('counter', 'incr', 'runs', '7', ...flags)).toBeUndefined();
    expect(await ringkv('counter', 'reset', 'runs', ...flags)).toBeUndefined();
    expect(await ringkv('counter', 'get', 'runs', ...flags)).toBeUndefined();
    expect(await ringkv('counter', 'incr', 'runs', '2', ...flags)).toBeUndefined();
    expect(await ringkv('counter', 'reset', 'runs', ...flags, '--json')).toBeUndefined();
    expect(out).toEqual(['7', 'reset runs (took out 7)', '0', '2', '{"value":"2","found":true}']);
    out = [];
    expect(await ringkv('counter', 'reset', 'never', ...flags, '--exit-code')).toBeUndefined();
    expect(out).toEqual(['reset never (took out 0)']);
    expect(process.exitCode).toBe(EXIT.notFound);
  });

  it('refuses a bad amount before calling, a missing --bucket, and a bucket of another type with what to use', async () => {
    const at = await node();
    expect(() => amount('0')).toThrow(/0 changes nothing/);
    expect(() => amount('1.5')).toThrow(/whole number/);
    expect(() => amount('9007199254740992')).toThrow(/at most 9007199254740991/);
    expect(amount('-9007199254740991')).toBe(-9007199254740991n);
    expect((await ringkv('counter', 'incr', 'k', 'x', '--bucket', 'hits', '--node', at))?.message).toMatch(
      /expected a whole number/,
    );
    expect((await ringkv('counter', 'get', 'k', '--node', at))?.message).toMatch(
      /required option '--bucket <name>' not specified/,
    );
    const wrong = await ringkv('counter', 'incr', 'k', '--bucket', 'tags', '--node', at);
    expect(wrong?.message).toMatch(
      /^bucket tags is of type set, which CounterUpdate does not take: use SetUpdate, SetRead and SetContains \(ringkv set add, rm, drop, list, has\).*FAILED_PRECONDITION/,
    );
  });
});

describe('ringkv set', () => {
  it('add, has, list (every page), rm (reading each context first) and their --json and --exit-code', async () => {
    const at = await node();
    const flags = ['--bucket', 'tags', '--node', at];
    expect(await ringkv('set', 'add', 'fruit', 'pear', 'apple', 'fig', 'apple', ...flags)).toBeUndefined();
    expect(out).toEqual(['added 3 to fruit']);
    out = [];
    expect(await ringkv('set', 'list', 'fruit', ...flags, '--page', '2')).toBeUndefined();
    expect(out).toEqual(['apple', 'fig', 'pear']);
    out = [];
    expect(await ringkv('set', 'has', 'fruit', 'fig', ...flags)).toBeUndefined();
    expect(out[0]).toMatch(/^yes\ncontext: \S+$/);
    out = [];
    expect(await ringkv('set', 'rm', 'fruit', 'fig', 'kiwi', ...flags, '--exit-code')).toBeUndefined();
    expect(out).toEqual(['removed 1 from fruit']);
    expect(err).toEqual(['not in the set: kiwi']);
    expect(process.exitCode).toBe(EXIT.notFound);
    process.exitCode = undefined;
    out = [];
    expect(await ringkv('set', 'has', 'fruit', 'fig', ...flags, '--json', '--exit-code')).toBeUndefined();
    expect(JSON.parse(out[0]!)).toMatchObject({ present: false });
    expect(process.exitCode).toBe(EXIT.notFound);
    out = [];
    expect(await ringkv('set', 'list', 'fruit', ...flags, '--json')).toBeUndefined();
    expect(JSON.parse(out[0]!)).toEqual({
      elements: [
        { element: 'apple', elementBase64: 'YXBwbGU=' },
        { element: 'pear', elementBase64: 'cGVhcg==' },
      ],
    });
  });

  it('drop removes every element, page by page; --exit-code when it found none', async () => {
    const at = await node();
    const flags = ['--bucket', 'tags', '--node', at];
    const many = Array.from({ length: 1200 }, (_, i) => `e${i}`);
    expect(await ringkv('set', 'add', 'big', ...many.slice(0, 1000), ...flags)).toBeUndefined();
    expect(await ringkv('set', 'add', 'big', ...many.slice(1000), ...flags)).toBeUndefined();
    out = [];
    expect(await ringkv('set', 'drop', 'big', ...flags)).toBeUndefined();
    expect(await ringkv('set', 'list', 'big', ...flags)).toBeUndefined();
    expect(await ringkv('set', 'drop', 'big', ...flags, '--json', '--exit-code')).toBeUndefined();
    expect(out).toEqual(['removed 1200 from big', '{"removed":0}']);
    expect(process.exitCode).toBe(EXIT.notFound);
  });

  it('refuses a set command on a kv bucket, saying how to make a set bucket, and an element over the limit', async () => {
    const at = await node();
    const wrong = await ringkv('set', 'add', 'k', 'a', '--bucket', 'carts', '--node', at);
    expect(wrong?.message).toMatch(
      /^bucket carts is of type kv, which SetUpdate does not take: .*sets live in a bucket of type set \(ringkv bucket create NAME --type set\)/,
    );
    const big = await ringkv('set', 'add', 'k', 'x'.repeat(1025), '--bucket', 'tags', '--node', at);
    expect(big?.message).toMatch(/INVALID_ARGUMENT/);
  });
});

describe('ringkv map', () => {
  it('set, enable, incr and add fields by dotted paths; get prints one entry a line (and --json the nested value); disable and rm take out what a read saw', async () => {
    const at = await node();
    const flags = ['--bucket', 'profiles', '--node', at];
    expect(await ringkv('map', 'set', 'u1', 'name=Ada', 'address.city=London', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'enable', 'u1', 'admin', 'beta', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'incr', 'u1', 'logins', '3', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'incr', 'u1', 'logins', '-1', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'add', 'u1', 'tags', 'math', 'poetry', ...flags)).toBeUndefined();
    expect(out).toEqual([
      'assigned 2 in u1',
      'enabled 2 in u1',
      'incremented 1 in u1',
      'incremented 1 in u1',
      'added 2 in u1',
    ]);
    out = [];
    expect(await ringkv('map', 'get', 'u1', ...flags)).toBeUndefined();
    expect([...out].sort()).toEqual([
      'address.city\tregister\tLondon',
      'admin\tflag\ton',
      'beta\tflag\ton',
      'logins\tcounter\t2',
      'name\tregister\tAda',
      'tags\tset\tmath',
      'tags\tset\tpoetry',
    ]);
    out = [];
    expect(await ringkv('map', 'get', 'u1', ...flags, '--json')).toBeUndefined();
    expect(JSON.parse(out[0]!)).toEqual({
      registers: { name: 'Ada' },
      flags: { admin: true, beta: true },
      counters: { logins: '2' },
      sets: { tags: ['math', 'poetry'] },
      maps: { address: { registers: { city: 'London' }, flags: {}, counters: {}, sets: {}, maps: {} } },
    });
    out = [];
    expect(await ringkv('map', 'disable', 'u1', 'beta', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'rm', 'u1', 'tags', 'math', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'rm', 'u1', 'address', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'rm', 'u1', 'logins', ...flags, '--exit-code')).toBeUndefined();
    expect(out).toEqual(['disabled 1 in u1', 'removed 1 in u1', 'removed 1 in u1', 'removed 1 in u1']);
    expect(process.exitCode).toBeUndefined();
    out = [];
    expect(await ringkv('map', 'get', 'u1', ...flags)).toBeUndefined();
    expect([...out].sort()).toEqual(['admin\tflag\ton', 'name\tregister\tAda', 'tags\tset\tpoetry']);
    out = [];
    // A counter reset counts from 0 again; a drop removes every entry.
    expect(await ringkv('map', 'incr', 'u1', 'logins', '5', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'drop', 'u1', ...flags)).toBeUndefined();
    expect(await ringkv('map', 'drop', 'u1', ...flags, '--exit-code')).toBeUndefined();
    expect(out).toEqual(['incremented 1 in u1', 'removed 4 in u1', 'removed 0 in u1']);
    expect(process.exitCode).toBe(EXIT.notFound);
    process.exitCode = undefined;
    out = [];
    expect(await ringkv('map', 'get', 'u1', ...flags)).toBeUndefined();
    expect(out).toEqual([]);
  });

  it('refuses a bad path or assignment before calling, and a bucket of another type with what to use', async () => {
    const at = await node();
    const flags = ['--bucket', 'profiles', '--node', at];
    expect((await ringkv('map', 'set', 'u1', 'name', ...flags))?.message).toMatch(/expected PATH=VALUE/);
    expect((await ringkv('map', 'enable', 'u1', 'a..b', ...flags))?.message).toMatch(/names joined by dots/);
    expect((await ringkv('map', 'incr', 'u1', 'n', '0', ...flags))?.message).toMatch(/an amount of 0 changes nothing/);
    expect((await ringkv('map', 'enable', 'u1', 'a.b.c.d.e', ...flags))?.message).toMatch(
      /5 nested fields is over the limit of 4.*INVALID_ARGUMENT/,
    );
    expect((await ringkv('map', 'get', 'u1', '--bucket', 'tags', '--node', at))?.message).toMatch(
      /bucket tags is of type set, which MapRead does not take: use SetUpdate/,
    );
  });
});

describe('ringkv cas', () => {
  it('put if absent, put and del on the version read, get; exit codes say applied, not applied (printing the value) or not found', async () => {
    const at = await node();
    const flags = ['--bucket', 'locks', '--node', at];
    expect(await ringkv('cas', 'put', 'leader', 'ann', ...flags)).toBeUndefined();
    expect(out[0]).toMatch(/^applied\ncontext: \S+$/);
    const first = out[0]!.split('context: ')[1]!;
    out = [];
    expect(await ringkv('cas', 'put', 'leader', 'bob', ...flags)).toBeUndefined();
    expect(out).toEqual([`not applied: the key holds ann\ncontext: ${first}`]);
    expect(process.exitCode).toBe(EXIT.notApplied);
    process.exitCode = undefined;
    out = [];
    expect(await ringkv('cas', 'put', 'leader', 'bob', '--context', first, ...flags, '--json')).toBeUndefined();
    const second = JSON.parse(out[0]!) as { applied: boolean; context: string };
    expect(second.applied).toBe(true);
    expect(process.exitCode).toBeUndefined();
    out = [];
    expect(await ringkv('cas', 'get', 'leader', ...flags)).toBeUndefined();
    expect(out).toEqual([`bob\ncontext: ${second.context}`]);
    out = [];
    expect(await ringkv('cas', 'del', 'leader', '--context', first, ...flags, '--json')).toBeUndefined();
    expect(JSON.parse(out[0]!)).toEqual({
      applied: false,
      context: second.context,
      found: true,
      value: 'bob',
      valueBase64: 'Ym9i',
    });
    expect(process.exitCode).toBe(EXIT.notApplied);
    process.exitCode = undefined;
    out = [];
    expect(await ringkv('cas', 'del', 'leader', '--context', second.context, ...flags)).toBeUndefined();
    expect(out[0]).toMatch(/^applied\n/);
    out = [];
    expect(await ringkv('cas', 'get', 'leader', ...flags, '--json', '--exit-code')).toBeUndefined();
    expect(JSON.parse(out[0]!)).toMatchObject({ found: false });
    expect(process.exitCode).toBe(EXIT.notFound);
  });

  it('a write whose outcome is unknown exits EXIT.casUnknown, saying how to learn it; one refused before it ran exits with an error', async () => {
    const at = await node(300);
    const flags = ['--bucket', 'locks', '--node', at];
    expect(await ringkv('cas', 'put', 'k', 'v1', ...flags, '--json')).toBeUndefined();
    const v1 = (JSON.parse(out[0]!) as { context: string }).context;
    // Proposals to the other replicas too slow: n1 accepted its own, so it may have applied.
    for (const id of ['n2', 'n3']) last.net.faults.set(`*>${id}`, { delayMs: 1000, delayOnly: ['paxosPropose'] });
    const unknown = await ringkv('cas', 'put', 'k', 'v2', '--context', v1, ...flags);
    expect(unknown?.message).toMatch(
      /unknown outcome[\s\S]*may or may not have applied: `ringkv cas get k --bucket locks`/,
    );
    expect((unknown as { exitCode?: number }).exitCode).toBe(EXIT.casUnknown);
    last.net.faults.clear();
    // It names the request id it generated; sent again with it, the write answers applied (n1 had accepted it).
    const id = /--request-id (\S+), it answers applied/.exec(unknown!.message)?.[1];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    out = [];
    expect(await ringkv('cas', 'put', 'k', 'v2', '--context', v1, '--request-id', id!, ...flags)).toBeUndefined();
    expect(out[0]).toMatch(/^applied\n/);
    // Refused before it ran: a plain error, nothing written.
    const wrong = await ringkv('cas', 'put', 'k', 'v', '--bucket', 'carts', '--node', at);
    expect(wrong?.message).toMatch(/bucket carts is of type kv, which PutIf does not take.*--type consistent/);
    expect((wrong as { exitCode?: number }).exitCode).toBe(EXIT.error);
    expect((await ringkv('cas', 'put', 'k', 'v', '--context', '!!', ...flags))?.message).toMatch(
      /expected the base64 context/,
    );
    expect((await ringkv('cas', 'del', 'k', ...flags))?.message).toMatch(/required option '--context <base64>'/);
  });
});
