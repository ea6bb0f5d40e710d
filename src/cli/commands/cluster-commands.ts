/**
 * The commands that show the cluster as a node sees it: `status` (members and buckets),
 * `ring`, `getendpoints` and `transfers`.
 *
 * Owns: their flags and what they print (format.ts and follow.ts lay it out). Must
 * not: change anything on a node, or import at load what only the actions need.
 */
import type { Command } from 'commander';
import { withAdmin } from '../calls.js';
import { cliSecurity } from '../credential-flags.js';
import { formatBuckets, formatEndpoints, formatRing, formatStatus } from '../format.js';
import { ANY_NODE_HELP, DEFAULT_NODES, nodeAddresses, positiveInt } from '../arguments.js';

export function statusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'members as one node sees them: up/down, state, address, load, tokens, ownership (like nodetool status)',
    )
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option(
      '-n, --replicas <n>',
      "replicas per key for effective ownership (default: the cluster's N)",
      positiveInt(16),
    )
    .option('--json', 'print JSON instead of a table (the counters included)')
    .option(
      '-v, --verbose',
      "also print the answering node's counters since it started (requests, repairs, hints, refusals)",
    )
    .action(async (opts: { node: string; replicas?: number; json?: boolean; verbose?: boolean }) => {
      if (opts.json)
        return console.log(JSON.stringify(await withAdmin(opts.node, (c) => c.status(opts.replicas ?? 0)), null, 2));
      // A node of a release without buckets answers ListBuckets UNIMPLEMENTED: its status alone then.
      const [s, buckets] = await withAdmin(opts.node, (c) =>
        Promise.all([c.status(opts.replicas ?? 0), c.listBuckets().catch(() => undefined)]),
      );
      console.log(formatStatus(s, { verbose: opts.verbose }));
      if (buckets !== undefined) console.log(`\nBuckets:\n${formatBuckets(buckets)}`);
    });
}

export function ringCommand(program: Command): void {
  program
    .command('ring')
    .description('token ranges of the ring and their replicas, as one node derived them from gossip')
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('-n, --replicas <n>', "replicas per key (default: the cluster's N)", positiveInt(16))
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { node: string; replicas?: number; json?: boolean }) => {
      const r = await withAdmin(opts.node, (c) => c.ring(opts.replicas ?? 0));
      console.log(opts.json ? JSON.stringify(r, null, 2) : formatRing(r));
    });
}

export function endpointsCommand(program: Command): void {
  program
    .command('getendpoints')
    .description(
      "KEY's token, its replicas and where writes go now (fallbacks for replicas that are down), like nodetool getendpoints",
    )
    .argument('<key>')
    .option('--bucket <name>', "the key's bucket (default: the default bucket)", '')
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--json', 'print JSON')
    .action(async (key: string, o: { node: string; bucket: string; json?: boolean }) => {
      const e = await withAdmin(o.node, (c) => c.endpoints(key, o.bucket));
      console.log(o.json ? JSON.stringify(e, null, 2) : formatEndpoints(key, e));
    });
}

export function transfersCommand(program: Command): void {
  program
    .command('transfers')
    .description('ranges being streamed between nodes, and the topology change in progress (like riak-admin transfers)')
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--json', 'print JSON')
    .action(async (o: { node: string; json?: boolean }) => {
      const status = await withAdmin(o.node, (c) => c.status());
      const [{ clusterTransfers }, { formatTransfers }] = await Promise.all([
        import('../../client/admin.js'),
        import('../follow.js'),
      ]);
      const { replies, unreachable } = await clusterTransfers(status, cliSecurity()); // every member with the caller's credentials, as --node
      console.log(o.json ? JSON.stringify(replies, null, 2) : formatTransfers(replies, unreachable));
    });
}
