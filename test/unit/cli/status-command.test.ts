/**
 * `ringkv status` against a real node (one process, one node): the member table and the
 * buckets by default, the node's counters after them only with --verbose, and --json with
 * the counters whatever the flags.
 */
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { statusCommand } from '../../../src/cli/commands/cluster-commands.js';
import { soloNode } from '../../../testkit/solo-node.js';

const solo = soloNode('status-command');

let out: string[];
beforeEach(() => {
  out = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
});
afterEach(() => vi.restoreAllMocks());

/** What `ringkv status ARGS... --node` the node prints. */
async function status(...args: string[]): Promise<string> {
  const program = new Command().exitOverride();
  statusCommand(program);
  await program.parseAsync(['node', 'ringkv', 'status', ...args, '--node', solo().address]);
  return out.join('\n');
}

describe('ringkv status', () => {
  it("prints the members and the buckets, and the node's counters only with --verbose", async () => {
    const plain = await status();
    expect(plain).toMatch(/^UN {2}127\.0\.0\.1:\d+ .* solo /m);
    expect(plain).toMatch(/\nBuckets:\nBucket +Type +N[^\n]*\ndefault +kv /);
    expect(plain).not.toMatch(/Counters|puts=/);

    out = [];
    const verbose = await status('--verbose');
    expect(verbose).toMatch(/\n\nCounters of solo since it started:\n {2}\S+=\d+/);
    expect(verbose).toMatch(/ puts=\d+/);
    // The same table before them, and the buckets after.
    expect(verbose.slice(0, verbose.indexOf('\n\nCounters'))).toBe(plain.slice(0, plain.indexOf('\n\nBuckets:')));
    expect(verbose).toMatch(/\nBuckets:\nBucket +Type/);

    out = [];
    expect(await status('-v')).toContain('Counters of solo since it started:');
  });

  it('--json prints the reply with its counters, --verbose or not', async () => {
    const json = JSON.parse(await status('--json')) as { nodeId: string; counters: Record<string, number> };
    expect(json.nodeId).toBe('solo');
    expect(Object.keys(json.counters).length).toBeGreaterThan(20);
    out = [];
    expect(Object.keys((JSON.parse(await status('--json', '--verbose')) as typeof json).counters).sort()).toEqual(
      Object.keys(json.counters).sort(),
    );
  });
});
