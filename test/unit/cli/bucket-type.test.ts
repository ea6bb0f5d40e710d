/**
 * `ringkv bucket create --type`, `show`, `list` and `set --type` against a real node (one
 * process, one node): the type travels the Admin service and its client, is printed, and
 * cannot change; map is refused with what the release takes. Then the new bucket's type
 * is what the node's KeyValue service checks: a put on it is refused, an increment taken.
 */
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bucketCommand } from '../../../src/cli/commands/bucket-commands.js';
import { Client } from '../../../src/client/index.js';
import { soloNode } from '../../../testkit/solo-node.js';

const solo = soloNode('bucket-type');

let out: string[];
beforeEach(() => {
  out = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => vi.restoreAllMocks());

/** Run `ringkv bucket ARGS... --node` the node; the error it failed with, if any. */
async function bucket(...args: string[]): Promise<Error | undefined> {
  const program = new Command().exitOverride();
  bucketCommand(program);
  try {
    await program.parseAsync(['node', 'ringkv', 'bucket', ...args, '--node', solo().address]);
    return undefined;
  } catch (e) {
    return e as Error;
  }
}

describe('ringkv bucket --type', () => {
  it('creates a counter bucket, shows and lists its type, and refuses to change it', async () => {
    expect(await bucket('create', 'hits', '--type', 'counter', '--json')).toBeUndefined();
    expect(JSON.parse(out.join('\n')).bucket.props).toMatchObject({ type: 'counter', n: 1 });
    out = [];
    expect(await bucket('show', 'hits')).toBeUndefined();
    expect(out.join('\n')).toMatch(/^Bucket\s+Type\s+N.*\nhits\s+counter\s+1\s/);
    out = [];
    expect(await bucket('list', '--json')).toBeUndefined();
    expect(
      (JSON.parse(out.join('\n')) as { name: string; props: { type: string } }[]).map(
        (b) => `${b.name}:${b.props.type}`,
      ),
    ).toEqual(['default:kv', 'hits:counter']);
    expect((await bucket('set', 'hits', '--type', 'set'))?.message).toMatch(
      /^the type of bucket hits is counter and cannot change .*\(gRPC FAILED_PRECONDITION\)$/,
    );
    expect((await bucket('set', 'default', '--type', 'counter'))?.message).toMatch(/FAILED_PRECONDITION/);
  });

  it('refuses an unknown type and a TTL on a set or map bucket, saying what it takes', async () => {
    expect((await bucket('create', 'm', '--type', 'hll'))?.message).toMatch(
      /^createBucket: option type must be one of "kv", "counter", "set", "map", "consistent", got "hll" \(gRPC INVALID_ARGUMENT\)$/,
    );
    expect((await bucket('create', 'm', '--type', 'map', '--ttl', '1h'))?.message).toMatch(
      /^a bucket of type map has no TTL/,
    );
    expect((await bucket('create', 'm', '--type', 'set', '--ttl', '1h'))?.message).toMatch(
      /^a bucket of type set has no TTL/,
    );
    // A bucket created without --type is kv.
    expect(await bucket('create', 'plain', '--json')).toBeUndefined();
    expect(JSON.parse(out.join('\n')).bucket.props.type).toBe('kv');
  });

  it('the node checks calls against the type it created', async () => {
    expect(await bucket('create', 'tally', '--type', 'counter')).toBeUndefined();
    const c = new Client({ nodes: [solo().address], tokenAware: false });
    try {
      await expect(c.put('k', 'v', { bucket: 'tally' })).rejects.toMatchObject({
        details: expect.stringMatching(/^bucket tally is of type counter/),
      });
      expect((await c.counterIncrement('k', 2, { bucket: 'tally' })).value).toBe(2n);
      expect(await c.counterGet('k', { bucket: 'tally' })).toEqual({ value: 2n, found: true });
    } finally {
      c.close();
    }
  });
});
