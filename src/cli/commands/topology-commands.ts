/**
 * The commands that change who owns what: `decommission`, `removenode`, and the staged
 * changes `plan`, `commit` and `clear`; each started on one node and, unless --no-wait,
 * followed to its end (cli/follow.ts follows and lays out).
 *
 * Owns: their flags, what they print and when they count as done. Must not: decide a
 * change (the node does), or import at load what only the actions need.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { TransfersReply } from '../../client/admin.js';
import { withAdmin } from '../calls.js';
import { DEFAULT_NODE, nodeAddress } from '../arguments.js';

/** Whether a decommission followed through the leaver's transfers is over: true once it left, its failure's words once withdrawn. */
export function decommissionEnded(t: TransfersReply | undefined): boolean | string {
  return t === undefined || t.drive?.phase === 'left'
    ? true
    : t.drive?.phase.startsWith('withdrawn')
      ? `decommission ${t.drive.phase}`
      : false;
}

export function decommissionCommand(program: Command): void {
  program
    .command('decommission')
    .description(
      'take a node out of the cluster: it streams its ranges to the nodes that gain them, goes left and exits (like nodetool decommission)',
    )
    .option('--node <host:port>', 'the node to decommission (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
    .option('--cancel', 'withdraw a decommission that has not finished')
    .option('--no-wait', 'return once started instead of following it to the end')
    .action(async (o: { node: string; cancel?: boolean; wait: boolean }) => {
      const r = await withAdmin(o.node, (c) => c.decommission(o.cancel === true));
      console.log(r.message);
      if (o.cancel || !o.wait || r.move === '') return;
      const { follow } = await import('../follow.js');
      await follow(`decommission ${o.node}`, o.node, r.move, decommissionEnded);
      console.log(`${o.node} left the cluster; its process exits. Its data stays in its data dir until you delete it.`);
    });
}

export function removenodeCommand(program: Command): void {
  program
    .command('removenode')
    .description(
      'remove a member that is down for good: the surviving replicas stream its ranges to the nodes that gain them, then repair its ranges and the writes it held hints for (like nodetool removenode)',
    )
    .argument('<id>', 'host id of the dead member (see ringkv status)')
    .option('--node <host:port>', 'a live node that drives the removal (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
    .option('--no-wait', 'return once started instead of following it to the end')
    .action(async (id: string, o: { node: string; wait: boolean }) => {
      const r = await withAdmin(o.node, (c) => c.removeNode(id));
      console.log(r.message);
      if (!o.wait || r.move === '') return;
      const { follow } = await import('../follow.js');
      // The repair step's last report (`repairing: 40/128 units (2 skipped)`): whether units were left to background repair.
      let repairing = '';
      await follow(`removenode ${id}`, o.node, r.move, (t) => {
        if (t?.drive?.move === r.move && t.drive.phase.startsWith('repairing')) repairing = t.drive.phase;
        return t === undefined
          ? `${o.node} stopped answering; run ringkv removenode ${id} again on another node to resume`
          : t.drive?.move === r.move && t.drive.phase === 'removed'
            ? true
            : t.drive?.phase.startsWith('withdrawn')
              ? `removal ${t.drive.phase}`
              : false;
      });
      const skipped = /\((\d+) skipped\)/.exec(repairing)?.[1];
      console.log(
        skipped === undefined
          ? `${id} removed: every range it held is back on N replicas, and the writes it held hints for repaired.`
          : `${id} removed: its ranges are on their new replicas; at least ${skipped} units were skipped by its repair (a replica down) and are left to background repair (the driver's log names them).`,
      );
    });
}

function changes(kind: string, ids: string[]): { kind: 'join' | 'leave' | 'remove'; node: string }[] {
  if (kind === undefined && ids.length === 0) return [];
  if (kind !== 'join' && kind !== 'leave' && kind !== 'remove')
    throw new InvalidArgumentError(`expected join, leave or remove, got "${kind}"`);
  if (ids.length === 0) throw new InvalidArgumentError(`name the node(s): ringkv plan ${kind} ID [ID ...]`);
  return ids.map((node) => ({ kind, node }));
}

export function planCommand(program: Command): void {
  program
    .command('plan')
    .description(
      'stage joins (of --join manual standbys), leaves and removals, and print what they would move; nothing changes until ringkv commit (like riak admin cluster plan)',
    )
    .argument('[change]', 'join | leave | remove; omit to show what is staged')
    .argument('[ids...]', 'node ids')
    .option(
      '--node <host:port>',
      'the node that keeps the stage and will run the commit (RINGKV_NODE)',
      nodeAddress,
      DEFAULT_NODE,
    )
    .option('--json', 'print JSON')
    .action(async (kind: string, ids: string[], o: { node: string; json?: boolean }) => {
      const p = await withAdmin(o.node, (c) => c.plan(changes(kind, ids)));
      const { formatPlan } = await import('../follow.js');
      console.log(o.json ? JSON.stringify(p, null, 2) : formatPlan(p));
    });
}

export function commitCommand(program: Command): void {
  program
    .command('commit')
    .description(
      'run the staged changes one after another, following them to the end; refused if the ring changed since the plan',
    )
    .option('--node <host:port>', 'the node that keeps the stage (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
    .option('--no-wait', 'return once started')
    .action(async (o: { node: string; wait: boolean }) => {
      const started = await withAdmin(o.node, (c) => c.commit());
      console.log(`committing ${started.steps.filter((s) => s.state !== 'done').length} change(s) on ${o.node}`);
      if (!o.wait) return;
      const { followCommit } = await import('../follow.js');
      const end = await followCommit(o.node);
      const failed = end.steps.find((s) => s.state === 'failed');
      if (failed)
        throw new Error(
          `${failed.change.kind} ${failed.change.node} failed: ${failed.error}; the steps after it were not run`,
        );
      console.log('every staged change is done');
    });
}

export function clearCommand(program: Command): void {
  program
    .command('clear')
    .description('discard the staged changes')
    .option('--node <host:port>', 'the node that keeps the stage (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
    .action(async (o: { node: string }) => {
      await withAdmin(o.node, (c) => c.clear());
      console.log('staged changes discarded');
    });
}
