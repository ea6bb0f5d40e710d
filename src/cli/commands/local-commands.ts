/**
 * `ringkv local` and its subcommands (add, remove, stop, start): a cluster of node
 * processes on 127.0.0.1 (local-cluster.ts runs it and answers the subcommands).
 *
 * Owns: the commands' flags and what they print. Must not: import at load what only the actions need.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { askLauncher } from '../local-cluster.js';
import { withAdmin } from '../calls.js';
import { CliError } from '../exit.js';
import { checkHealth } from '../health-check.js';
import { positiveInt } from '../arguments.js';
import { cliSecurity, setCredentials } from '../credential-flags.js';
import { decommissionEnded } from './topology-commands.js';

/** A port, or 0 for none (--http-base-port). */
function portOrZero(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new InvalidArgumentError(`expected a port from 1 to 65535, or 0 for none, got "${value}"`);
  return n;
}

/** Ask the launcher; a TLS local cluster's reply names the CA and admin certificate the command then calls the nodes with. */
async function askLocal(dataDir: string, req: Parameters<typeof askLauncher>[1]): ReturnType<typeof askLauncher> {
  const { askLauncher } = await import('../local-cluster.js');
  const n = await askLauncher(dataDir, req);
  if (n.tls !== undefined) setCredentials({ tlsCa: n.tls.ca, tlsCert: n.tls.cert, tlsKey: n.tls.key });
  return n;
}

/** Wait until the node at `address` answers SERVING (a normal member), a minute at most. */
async function waitServing(address: string, id: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!(await checkHealth({ node: address, deadlineMs: 1000, security: cliSecurity() })).ok) {
    if (Date.now() > end) throw new CliError(`${id} has not become ready within 60 s; see its node.log`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `ringkv local` (run the cluster) and its subcommands, each built by its own function below. */
export function localCommand(program: Command): void {
  const local = program
    .command('local')
    .description('run a cluster of nodes on 127.0.0.1, each its own process (what npm start runs); Ctrl-C stops them')
    .option('--nodes <count>', 'number of nodes', positiveInt(16), 3)
    .option('--base-port <port>', 'port of the first node; the others follow', positiveInt(65_000), 7001)
    .option(
      '--http-base-port <port>',
      'HTTP port (status page, /metrics) of the first node, the others follow; 0 = none (default: base port + 1000)',
      portOrZero,
    )
    .option('--data-dir <dir>', "directory for the nodes' data dirs and logs", './data')
    .option('--timeout-ms <ms>', 'how long to wait for the cluster to form', positiveInt(600_000), 120_000)
    .option(
      '--tls',
      'TLS everywhere: make a development CA and certificates in <data-dir>/certs (kept for the next start) and run the nodes with them',
    )
    .action(
      async (opts: {
        nodes: number;
        basePort: number;
        httpBasePort?: number;
        dataDir: string;
        timeoutMs: number;
        tls?: boolean;
      }) => {
        const { runLocal } = await import('../local-cluster.js');
        await runLocal({ ...opts, httpBasePort: opts.httpBasePort ?? opts.basePort + 1000 });
      },
    )
    // `local add --data-dir D`: the option after the subcommand is the subcommand's.
    .enablePositionalOptions();

  localAddCommand(local);
  localRemoveCommand(local);
  localStopCommand(local);
  localStartCommand(local);
}

/** A subcommand of `local`: it asks the launcher of the cluster that runs with --data-dir. */
function localSubcommand(local: Command, name: string, description: string): Command {
  return local
    .command(name)
    .description(description)
    .option('--data-dir <dir>', 'the data dir the local cluster runs with', './data');
}

/** `local add`: start one more node, then follow its join to normal (unless --no-wait). */
function localAddCommand(local: Command): void {
  localSubcommand(local, 'add', 'start one more node in the running local cluster: it joins and streams its ranges')
    .option(
      '--no-wait',
      'return once the node has started, without following its join (then watch it with `ringkv transfers`)',
    )
    .action(async (o: { dataDir: string; wait: boolean }) => {
      const n = await askLocal(o.dataDir, { op: 'add' });
      console.log(`${n.id} started at ${n.address} (pid ${n.pid}); it joins the cluster`);
      if (!o.wait) return console.log(`follow it: npx ringkv transfers --node ${n.address}`);
      const { followJoin } = await import('../follow.js');
      await followJoin(n.address, n.id);
      console.log(`${n.id} is normal: it owns its ranges`);
    });
}

/** `local remove ID`: decommission a node and follow it until it has left. */
function localRemoveCommand(local: Command): void {
  localSubcommand(
    local,
    'remove',
    'decommission a node of the running local cluster: it streams its ranges away, leaves and exits',
  )
    .argument('<id>', 'node id, like n4')
    .action(async (id: string, o: { dataDir: string }) => {
      const n = await askLocal(o.dataDir, { op: 'remove', id });
      const r = await withAdmin(n.address, (c) => c.decommission(false));
      console.log(r.message);
      const { follow } = await import('../follow.js');
      await follow(`decommission ${id}`, n.address, r.move, decommissionEnded);
      console.log(`${id} left the cluster and exited`);
    });
}

/** `local stop ID`: stop one node cleanly. */
function localStopCommand(local: Command): void {
  localSubcommand(
    local,
    'stop',
    'stop one node of the running local cluster cleanly (SIGTERM); the others keep serving and hold hints for it',
  )
    .argument('<id>', 'node id, like n2')
    .action(async (id: string, o: { dataDir: string }) => {
      const n = await askLocal(o.dataDir, { op: 'stop', id });
      console.log(`${n.id} (pid ${n.pid}) stopped; ringkv local start ${n.id} starts it again with its data`);
    });
}

/** `local start ID`: start a stopped node again, and wait until it serves. */
function localStartCommand(local: Command): void {
  localSubcommand(
    local,
    'start',
    'start a node of the running local cluster again after ringkv local stop (or a crash), with its data',
  )
    .argument('<id>', 'node id, like n2')
    .action(async (id: string, o: { dataDir: string }) => {
      const n = await askLocal(o.dataDir, { op: 'start', id });
      console.log(`${n.id} started at ${n.address} (pid ${n.pid})`);
      await waitServing(n.address, n.id);
      console.log(`${n.id} is up and serving`);
    });
}
