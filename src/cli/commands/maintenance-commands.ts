/**
 * The commands that look after a node's data: `cleanup` (drop what it no longer
 * replicates) and `repair` (anti-entropy with the other replicas).
 *
 * Owns: their flags, what they print and their exit codes. Must not: import at load
 * what only the actions need.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { RepairStatusReply } from '../../client/admin.js';
import { withAdmin } from '../calls.js';
import { DEFAULT_NODE, nodeAddress } from '../arguments.js';

export function cleanupCommand(program: Command): void {
  program
    .command('cleanup')
    .description(
      'delete the data a node keeps for ranges it no longer replicates, after nodes joined (like nodetool cleanup)',
    )
    .option('--node <host:port>', 'the node to clean up (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
    .action(async (o: { node: string }) => {
      const r = await withAdmin(o.node, (c) => c.cleanup());
      console.log(
        `${o.node}: ${r.deleted} keys deleted from ${r.ranges} ranges it no longer replicates${r.kept > 0 ? ` (${r.kept} written meanwhile, kept)` : ''}`,
      );
    });
}

export function repairCommand(program: Command): void {
  program
    .command('repair')
    .description(
      'anti-entropy: compare every range a node replicates with its other replicas by Merkle tree, and exchange only what differs (like nodetool repair)',
    )
    .option('--node <host:port>', 'the node to repair from (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
    .option(
      '--range <start-end>',
      'only the ranges overlapping START-END (tokens of 16 hex digits, as ringkv ring shows them)',
      (v: string) => {
        const m = /^([0-9a-f]{16})-([0-9a-f]{16})$/.exec(v);
        if (m === null)
          throw new InvalidArgumentError(
            `expected START-END, two tokens of 16 hex digits (as ringkv ring shows them), got "${v}"`,
          );
        return { start: m[1]!, end: m[2]! };
      },
    )
    .option(
      '--status',
      'show the repair running on the node, or its last one, and when each of its ranges was last repaired (with --json), and exit',
    )
    .option('--no-wait', 'start it and return')
    .option('--json', 'print JSON')
    .action(
      async (o: {
        node: string;
        range?: { start: string; end: string };
        status?: boolean;
        wait: boolean;
        json?: boolean;
      }) => {
        const { formatRepair } = await import('../follow.js');
        const show = (r: RepairStatusReply): void => console.log(o.json ? JSON.stringify(r, null, 2) : formatRepair(r));
        if (o.status) return show(await withAdmin(o.node, (c) => c.repairStatus()));
        const started = await withAdmin(o.node, (c) => c.repair(o.range));
        if (!o.json) console.log(`repair ${started.id} started on ${o.node}: ${started.ranges} ranges`);
        if (!o.wait) return o.json ? show(started) : undefined;
        const { followRepair } = await import('../follow.js');
        const done = await followRepair(o.node, o.json ? { out: process.stderr } : {});
        show(done);
        if (done.failed > 0 || done.skipped > 0) process.exitCode = 1;
      },
    );
}
