#!/usr/bin/env node
/**
 * The `ringkv` command. Each subcommand parses its flags and calls into the library;
 * the logic lives in src/ (docs/architecture.md: the CLI holds nothing a library user would need).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
// Loaded with every command, so kept to what defining the commands needs: no gRPC, no
// LevelDB, no logger. Each action imports what it runs (a get loads the client, not the node).
import type { AdminClient, RepairStatusReply } from '../client/admin.js';
import type { Client } from '../client/kv.js';
import type { askLauncher } from './local-cluster.js';
import { checkHealth, registerHealth } from './health.js';
import { formatEndpoints, formatGet, formatRing, formatStatus, showValue } from './format.js';
import { CliError, EXIT } from './exit.js';
import { nodeAddress } from './options.js';
import { DEFAULT_CONFIG, ENV_NAMES } from '../node/config.js';
import { cliSecurity, setCredentials, withCredentials } from './credential-flags.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

function positiveInt(max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max) {
      throw new InvalidArgumentError(`expected a whole number from 1 to ${max}, got "${value}"`);
    }
    return n;
  };
}

function portOrZero(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError(`expected a port from 1 to 65535, or 0 for none, got "${value}"`);
  return n;
}

const program = new Command()
  .enablePositionalOptions()
  .name('ringkv')
  .description('ringkv: a Dynamo-style replicated key-value store')
  .version(pkg.version);

program
  .command('demo')
  .description('build a ring in memory and print ownership, preference lists and what a join moves')
  .option('--nodes <count>', 'number of nodes', positiveInt(1000), 5)
  .option('--zones <count>', 'number of zones the nodes are spread over', positiveInt(26), 3)
  .option('-n, --replicas <n>', 'replicas per key (N)', positiveInt(1000), 3)
  .argument('[keys...]', 'keys to look up', ['user:1', 'user:42', 'user:123456', 'cart:9', 'session:abc'])
  .action(async (keys: string[], opts: { nodes: number; zones: number; replicas: number }) => {
    const { demo } = await import('./demo.js');
    console.log(demo({ nodes: opts.nodes, zones: opts.zones, n: opts.replicas, keys }));
  });

const d = DEFAULT_CONFIG;
program
  .command('node')
  .description('run one ringkv node (every flag can also come from --config FILE or an environment variable)')
  .option('--config <file>', 'JSON file of settings (camelCase names, e.g. {"listen": "127.0.0.1:7001"})')
  .option('--id <id>', `node id (${ENV_NAMES.id}); default: the one kept in the data dir, or a new random one`)
  .option('--listen <host:port>', `address the gRPC server binds (${ENV_NAMES.listen}; default ${d.listen})`)
  .option('--advertise <host:port>', `address peers and clients reach this node at (${ENV_NAMES.advertise}; default: the listen address; needed when listen is 0.0.0.0 or [::])`)
  .option('--data-dir <dir>', `data directory (${ENV_NAMES.dataDir}; default ${d.dataDir})`)
  .option('--seeds <list>', `comma-separated host:port of seed nodes (${ENV_NAMES.seeds})`)
  .option('--zone <zone>', `availability zone (${ENV_NAMES.zone})`)
  .option('--rack <rack>', `rack within the zone (${ENV_NAMES.rack})`)
  .option('--weight <w>', `relative capacity (${ENV_NAMES.weight}; default ${d.weight})`)
  .option('--cluster-name <name>', `cluster name; gossip from other clusters is refused (${ENV_NAMES.clusterName}; default ${d.clusterName})`)
  .option('--tokens <n>', `tokens (virtual nodes) at weight 1 (${ENV_NAMES.tokens}; default ${d.tokens})`)
  .option('--log-level <level>', `fatal|error|warn|info|debug|trace|silent (${ENV_NAMES.logLevel}; default ${d.logLevel})`)
  .option('--gossip-interval-ms <ms>', `ms between gossip rounds (${ENV_NAMES.gossipIntervalMs}; default ${d.gossipIntervalMs})`)
  .option('--phi-threshold <phi>', `phi above which a peer is marked down (${ENV_NAMES.phiThreshold}; default ${d.phiThreshold})`)
  .option('--durability <mode>', `default|sync (${ENV_NAMES.durability}; default ${d.durability})`)
  .option('--shutdown-grace-ms <ms>', `ms in-flight requests get at shutdown (${ENV_NAMES.shutdownGraceMs}; default ${d.shutdownGraceMs})`)
  .option('--drain-ms <ms>', `ms a stopping node keeps serving after telling its peers it stops (${ENV_NAMES.drainMs}; default ${d.drainMs})`)
  .option('--catch-up-ms <ms>', `at most this long a restarted node reports NOT_SERVING while peers hold hints for it (${ENV_NAMES.catchUpMs}; default ${d.catchUpMs})`)
  .option('--replicas <n>', `replicas per key, N; the same on every node (${ENV_NAMES.replicas}; default ${d.replicas})`)
  .option('--request-timeout-ms <ms>', `longest a client request may take (${ENV_NAMES.requestTimeoutMs}; default ${d.requestTimeoutMs})`)
  .option('--max-in-flight <n>', `client requests coordinated at once; more get RESOURCE_EXHAUSTED (${ENV_NAMES.maxInFlight}; default ${d.maxInFlight})`)
  .option('--max-connections <n>', `TCP connections served at once; more are answered RESOURCE_EXHAUSTED and closed (${ENV_NAMES.maxConnections}; default ${d.maxConnections})`)
  .option('--max-calls-per-connection <n>', `calls open at once on one connection; more get RESOURCE_EXHAUSTED (${ENV_NAMES.maxCallsPerConnection}; default ${d.maxCallsPerConnection})`)
  .option('--hint-bytes-per-second <n>', `hinted handoff throttle (${ENV_NAMES.hintBytesPerSecond}; default ${d.hintBytesPerSecond})`)
  .option('--replace <id>', `a dead member this new node replaces: it takes its tokens and streams its ranges from the survivors (${ENV_NAMES.replace})`)
  .option('--join <mode>', `auto: join by itself; manual: wait as a standby until admitted by ringkv plan/commit (${ENV_NAMES.join}; default ${d.join})`)
  .option('--background-latency-factor <f>', `slow streaming and hint replay while the foreground p99 is over f × its idle value; 0 = off (${ENV_NAMES.backgroundLatencyFactor}; default ${d.backgroundLatencyFactor})`)
  .option('--stream-bytes-per-second <n>', `range streaming throttle, all streams a node sends; 0 = unthrottled (${ENV_NAMES.streamBytesPerSecond}; default ${d.streamBytesPerSecond})`)
  .option('--tombstone-grace-ms <ms>', `a deleted key keeps its tombstone at least this long, and until a repair confirmed it on every replica (${ENV_NAMES.tombstoneGraceMs}; default ${d.tombstoneGraceMs})`)
  .option('--repair-interval-ms <ms>', `background repair: each range once per this many ms; 0 = off, ringkv repair only (${ENV_NAMES.repairIntervalMs}; default ${d.repairIntervalMs})`)
  .option('--repair-bytes-per-second <n>', `background repair's pace, bytes of data read per second (${ENV_NAMES.repairBytesPerSecond}; default ${d.repairBytesPerSecond})`)
  .option('--max-hint-window-ms <ms>', `a replica down longer than this gets no more hints; its misses are left to anti-entropy (${ENV_NAMES.maxHintWindowMs}; default ${d.maxHintWindowMs})`)
  .option('--read-mode <mode>', `digest: a get reads R replicas' records and the others' digests; full: every replica's record (${ENV_NAMES.readMode}; default ${d.readMode})`)
  .option('--tls-cert <file>', `PEM certificate of this node, role node (${ENV_NAMES.tlsCert}); with --tls-key and --tls-ca the port speaks TLS and peers must present node certificates`)
  .option('--tls-key <file>', `PEM private key of --tls-cert (${ENV_NAMES.tlsKey})`)
  .option('--tls-ca <file>', `PEM CA bundle every cluster certificate chains to (${ENV_NAMES.tlsCa}); the three files reload on SIGHUP or when they change`)
  .option('--client-auth <mode>', `none|cert: cert makes key/value calls present a certificate from the CA (${ENV_NAMES.clientAuth}; default ${d.clientAuth})`)
  .option('--read-auth <mode>', `none|credential: credential makes the calls that read the cluster's state (status, ring, transfers; HTTP /metrics and /api) present a certificate from the CA or the admin token (${ENV_NAMES.readAuth}; default ${d.readAuth})`)
  .option('--admin-token-file <file>', `file holding a bearer token that calls changing the cluster accept instead of an admin certificate (${ENV_NAMES.adminTokenFile})`)
  .option('--leaver-wait-ms <ms>', `how long a range waits for its leaving replica while it is down before pulling from the other replicas (${ENV_NAMES.leaverWaitMs}; default ${d.leaverWaitMs})`)
  .option('--clock-offset-ms <ms>', `fault injection: add this to the node's wall clock (${ENV_NAMES.clockOffsetMs}; default ${d.clockOffsetMs})`)
  .option('--http <host:port>', `serve Prometheus /metrics and the status page here; off = none (${ENV_NAMES.http}; default off)`)
  .option('--fault-injection <on|off>', `on: the admin SetClockOffset call may skew the clock while the node runs; for test/jepsen only (${ENV_NAMES.faultInjection}; default ${d.faultInjection})`)
  .option('--cleanup-after-ms <ms>', `delete data of ranges this node no longer replicates once ownership stood still this long; 0 = only ringkv cleanup (${ENV_NAMES.cleanupAfterMs}; default ${d.cleanupAfterMs})`)
  .action(async (opts: Record<string, unknown>) => {
    const { config, ...flags } = opts;
    const { runNode } = await import('./node-command.js');
    await runNode(flags, config as string | undefined);
  });

const list = (v: string): string[] => v.split(',').map((s) => s.trim()).filter((s) => s.length > 0);

program
  .command('certs')
  .description('make a development CA and certificates for nodes, an operator and a client (PEM files; see docs/security.md)')
  .option('--dir <dir>', 'directory to write them into (an existing ca.pem and ca-key.pem there are reused)', './certs')
  .option('--nodes <ids>', 'comma-separated node ids: a certificate each, role node', 'n1,n2,n3')
  .option('--hosts <list>', 'host names and IP addresses every node certificate names (clients and peers check the one they dial)', '127.0.0.1,localhost,::1')
  .option('--admins <names>', 'comma-separated operator certificates, role admin', 'admin')
  .option('--clients <names>', 'comma-separated application certificates, role client', 'client')
  .option('--days <n>', 'days the new certificates are valid', positiveInt(36_500), 365)
  .option('--force', 'make certificates again even where the files exist (the CA is kept)')
  .action(async (o: { dir: string; nodes: string; hosts: string; admins: string; clients: string; days: number; force?: boolean }) => {
    const { makeCerts } = await import('./certs-command.js');
    let written;
    try {
      written = await makeCerts({ dir: o.dir, nodes: list(o.nodes), hosts: list(o.hosts), admins: list(o.admins), clients: list(o.clients), days: o.days, force: o.force === true });
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    for (const w of written) console.log(`${w.made ? 'made' : 'kept'}  ${w.role.padEnd(6)} ${w.cert}  ${w.key}`);
    const n1 = written.find((w) => w.role === 'node');
    if (n1 !== undefined) console.log(`\nA node: ringkv node --tls-cert ${n1.cert} --tls-key ${n1.key} --tls-ca ${join(o.dir, 'ca.pem')} ...`);
  });

const local = program
  .command('local')
  .description('run a cluster of nodes on 127.0.0.1, each its own process (what npm start runs); Ctrl-C stops them')
  .option('--nodes <count>', 'number of nodes', positiveInt(16), 3)
  .option('--base-port <port>', 'port of the first node; the others follow', positiveInt(65_000), 7001)
  .option('--http-base-port <port>', 'HTTP port (status page, /metrics) of the first node, the others follow; 0 = none (default: base port + 1000)', portOrZero)
  .option('--data-dir <dir>', 'directory for the nodes\' data dirs and logs', './data')
  .option('--timeout-ms <ms>', 'how long to wait for the cluster to form', positiveInt(600_000), 120_000)
  .option('--tls', 'TLS everywhere: make a development CA and certificates in <data-dir>/certs (kept for the next start) and run the nodes with them')
  .action(async (opts: { nodes: number; basePort: number; httpBasePort?: number; dataDir: string; timeoutMs: number; tls?: boolean }) => {
    const { runLocal } = await import('./local-cluster.js');
    await runLocal({ ...opts, httpBasePort: opts.httpBasePort ?? opts.basePort + 1000 });
  })
  // `local add --data-dir D`: the option after the subcommand is the subcommand's.
  .enablePositionalOptions();

/** Ask the launcher; a TLS local cluster's reply names the CA and admin certificate the command then calls the nodes with. */
async function askLocal(dataDir: string, req: Parameters<typeof askLauncher>[1]): ReturnType<typeof askLauncher> {
  const { askLauncher } = await import('./local-cluster.js');
  const n = await askLauncher(dataDir, req);
  if (n.tls !== undefined) setCredentials({ tlsCa: n.tls.ca, tlsCert: n.tls.cert, tlsKey: n.tls.key });
  return n;
}

local
  .command('add')
  .description('start one more node in the running local cluster: it joins and streams its ranges')
  .option('--data-dir <dir>', 'the data dir the local cluster runs with', './data')
  .option('--no-wait', 'return once the node has started, without following its join (then watch it with `ringkv transfers`)')
  .action(async (o: { dataDir: string; wait: boolean }) => {
    const n = await askLocal(o.dataDir, { op: 'add' });
    console.log(`${n.id} started at ${n.address} (pid ${n.pid}); it joins the cluster`);
    if (!o.wait) return console.log(`follow it: npx ringkv transfers --node ${n.address}`);
    const { followJoin } = await import('./topology.js');
    await followJoin(n.address, n.id);
    console.log(`${n.id} is normal: it owns its ranges`);
  });

local
  .command('remove')
  .description('decommission a node of the running local cluster: it streams its ranges away, leaves and exits')
  .argument('<id>', 'node id, like n4')
  .option('--data-dir <dir>', 'the data dir the local cluster runs with', './data')
  .action(async (id: string, o: { dataDir: string }) => {
    const n = await askLocal(o.dataDir, { op: 'remove', id });
    const r = await withAdmin(n.address, (c) => c.decommission(false));
    console.log(r.message);
    const { follow } = await import('./topology.js');
    await follow(`decommission ${id}`, n.address, r.move, (t) => (t === undefined || t.drive?.phase === 'left' ? true : t.drive?.phase.startsWith('withdrawn') ? `decommission ${t.drive.phase}` : false));
    console.log(`${id} left the cluster and exited`);
  });

local
  .command('stop')
  .description('stop one node of the running local cluster cleanly (SIGTERM); the others keep serving and hold hints for it')
  .argument('<id>', 'node id, like n2')
  .option('--data-dir <dir>', 'the data dir the local cluster runs with', './data')
  .action(async (id: string, o: { dataDir: string }) => {
    const n = await askLocal(o.dataDir, { op: 'stop', id });
    console.log(`${n.id} (pid ${n.pid}) stopped; ringkv local start ${n.id} starts it again with its data`);
  });

local
  .command('start')
  .description('start a node of the running local cluster again after ringkv local stop (or a crash), with its data')
  .argument('<id>', 'node id, like n2')
  .option('--data-dir <dir>', 'the data dir the local cluster runs with', './data')
  .action(async (id: string, o: { dataDir: string }) => {
    const n = await askLocal(o.dataDir, { op: 'start', id });
    console.log(`${n.id} started at ${n.address} (pid ${n.pid})`);
    await waitServing(n.address, n.id);
    console.log(`${n.id} is up and serving`);
  });

/** Wait until the node at `address` answers SERVING (a normal member), a minute at most. */
async function waitServing(address: string, id: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!(await checkHealth({ node: address, deadlineMs: 1000, security: cliSecurity() })).ok) {
    if (Date.now() > end) throw new CliError(`${id} has not become ready within 60 s; see its node.log`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The node the client commands talk to unless --node says otherwise. */
const DEFAULT_NODE = process.env.RINGKV_NODE || '127.0.0.1:7001';

async function withAdmin<T>(address: string, fn: (c: AdminClient) => Promise<T>): Promise<T> {
  const [{ AdminClient }, { failure }] = await Promise.all([import('../client/admin.js'), import('./errors.js')]);
  const c = new AdminClient(address, undefined, cliSecurity());
  try {
    return await fn(c);
  } catch (e) {
    throw failure(e, { address });
  } finally {
    c.close();
  }
}

program
  .command('status')
  .description('members as one node sees them: up/down, state, address, load, tokens, ownership (like nodetool status)')
  .option('--node <host:port>', 'any node of the cluster (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('-n, --replicas <n>', "replicas per key for effective ownership (default: the cluster's N)", positiveInt(16))
  .option('--json', 'print JSON instead of a table')
  .action(async (opts: { node: string; replicas?: number; json?: boolean }) => {
    const s = await withAdmin(opts.node, (c) => c.status(opts.replicas ?? 0));
    console.log(opts.json ? JSON.stringify(s, null, 2) : formatStatus(s));
  });

program
  .command('ring')
  .description('token ranges of the ring and their replicas, as one node derived them from gossip')
  .option('--node <host:port>', 'any node of the cluster (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('-n, --replicas <n>', "replicas per key (default: the cluster's N)", positiveInt(16))
  .option('--json', 'print JSON instead of a table')
  .action(async (opts: { node: string; replicas?: number; json?: boolean }) => {
    const r = await withAdmin(opts.node, (c) => c.ring(opts.replicas ?? 0));
    console.log(opts.json ? JSON.stringify(r, null, 2) : formatRing(r));
  });

/** R or W: 0 is a majority of N, as the node takes it; the node checks the upper bound against its N. */
function quorum(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 16) throw new InvalidArgumentError(`expected 0 (a majority) or a whole number from 1 to N, got "${value}"`);
  return n;
}

function context(value: string): Buffer {
  const b = Buffer.from(value, 'base64');
  if (b.length === 0 || b.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) {
    throw new InvalidArgumentError('expected the base64 context that `ringkv get` printed');
  }
  return b;
}

interface KvOpts {
  node: string;
  json?: boolean;
  context?: Buffer;
  r?: number;
  w?: number;
  deadlineMs: number;
  exitCode?: boolean;
  requestId?: Buffer;
}

/** Run `fn` with a client of `--node`; a failure comes back in ringkv's words (errors.ts). */
async function withClient<T>(o: KvOpts, fn: (c: Client) => Promise<T>): Promise<T> {
  // One request: the node given coordinates it (fetching the ring first would cost more than the hop it saves).
  const [{ Client }, { failure }] = await Promise.all([import('../client/kv.js'), import('./errors.js')]);
  const c = new Client({ nodes: [o.node], deadlineMs: o.deadlineMs, tokenAware: false, ...cliSecurity() });
  try {
    return await fn(c);
  } catch (e) {
    throw failure(e, { address: o.node, deadlineMs: o.deadlineMs, deadlineFlag: '--deadline-ms' });
  } finally {
    c.close();
  }
}

function kvCommand(name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .option('--node <host:port>', 'any node of the cluster (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
    .option('--deadline-ms <ms>', 'deadline of the request', positiveInt(600_000), 5000)
    .option('--json', 'print JSON');
}

const QUORUM_HELP = '0 or unset: a majority of N';
const REQUEST_ID_HELP = 'the write\'s request id (text, 1 to 64 bytes): the same write sent again with it, from any script or node, is applied once; for retrying a write whose outcome is unknown';

function requestId(text: string): Buffer {
  const b = Buffer.from(text, 'utf8');
  if (b.length < 1 || b.length > 64) throw new InvalidArgumentError(`a request id must be 1 to 64 bytes, got ${b.length}; use a UUID`);
  return b;
}

kvCommand('put', 'write KEY = VALUE; with --context (from get) it replaces what that get saw, without it is a sibling of any value there')
  .argument('<key>')
  .argument('[value]', 'the value as text (UTF-8); without it, --file PATH or stdin gives the bytes')
  .option('--file <path>', 'read the value\'s bytes from PATH ("-": stdin), up to 1 MiB')
  .option('--context <base64>', 'context printed by `ringkv get`', context)
  .option('--w <w>', `replicas that must acknowledge (1..N; ${QUORUM_HELP})`, quorum)
  .option('--request-id <id>', REQUEST_ID_HELP, requestId)
  .addHelpText('after', '\nThe value is VALUE as UTF-8 text, or the bytes of --file PATH, or, with neither, of stdin when it is not a terminal:\n  ringkv put photo --file photo.jpg\n  ringkv put config < config.json\nA VALUE that starts with @ is stored as that text (use --file for a file).')
  .action(async (key: string, arg: string | undefined, o: KvOpts & { file?: string }) => {
    const { readValue } = await import('./values.js');
    const { value, note } = await readValue({ arg, file: o.file, stdin: process.stdin });
    if (note !== undefined) console.error(note);
    const r = await withClient(o, (c) => c.put(key, value, { context: o.context, w: o.w, ...(o.requestId ? { requestId: o.requestId } : {}) }));
    const ctx = r.context.toString('base64');
    console.log(o.json ? JSON.stringify({ context: ctx }) : `ok\ncontext: ${ctx}`);
  });

kvCommand('get', 'read KEY: every sibling value, and the context to pass to the next put or del')
  .argument('<key>')
  .option('--r <r>', `replicas whose replies are merged (1..N; ${QUORUM_HELP})`, quorum)
  .option('--out <file>', 'write the value\'s raw bytes to FILE ("-": stdout) instead of printing it; with siblings, needs --sibling')
  .option('--sibling <i>', 'the sibling to take, numbered as ringkv get lists them (1..)', positiveInt(1_000_000))
  .option('--exit-code', `exit with ${EXIT.notFound} when the key is not found`)
  .addHelpText(
    'after',
    `\nExit codes: 0 found (or not found, without --exit-code); ${EXIT.error} an error; ${EXIT.notFound} not found, with --exit-code; ${EXIT.siblings} --out of a key with siblings and no --sibling (nothing written).\n  ringkv get photo --out photo.jpg\n  ringkv get photo --out - > photo.jpg     # the context goes to stderr`,
  )
  .action(async (key: string, o: KvOpts & { out?: string; sibling?: number }) => {
    const r = await withClient(o, (c) => c.get(key, { r: o.r }));
    const { chooseValue, writeValue } = await import('./values.js');
    if (!r.found && o.exitCode) process.exitCode = EXIT.notFound;
    const ctx = r.context.toString('base64');
    if (o.out !== undefined) {
      if (!r.found) return o.json ? console.log(JSON.stringify({ found: false, context: ctx })) : console.error(`${key}: not found; nothing written to ${o.out === '-' ? 'stdout' : o.out}`);
      const value = chooseValue(key, r, o.sibling);
      writeValue(o.out, value);
      if (o.out === '-') return console.error(o.json ? JSON.stringify({ found: true, bytes: value.length, context: ctx }) : `context: ${ctx}`);
      return console.log(o.json ? JSON.stringify({ found: true, out: o.out, bytes: value.length, context: ctx }) : `wrote ${value.length} bytes to ${o.out}\ncontext: ${ctx}`);
    }
    const shown = o.sibling === undefined || !r.found ? r : { ...r, values: [chooseValue(key, r, o.sibling)] };
    if (!o.json) return console.log(formatGet(key, shown));
    console.log(JSON.stringify({ found: r.found, values: shown.values.map(showValue), valuesBase64: shown.values.map((v) => v.toString('base64')), context: ctx }));
  });

kvCommand('del', 'delete KEY: a tombstone that supersedes what its context saw; a concurrent put survives it')
  .alias('delete')
  .argument('<key>')
  .option('--context <base64>', 'context printed by `ringkv get`; default: read the key first and delete what that read saw', context)
  .option('--w <w>', `replicas that must acknowledge (1..N; ${QUORUM_HELP})`, quorum)
  .option('--request-id <id>', REQUEST_ID_HELP, requestId)
  .option('--exit-code', `exit with ${EXIT.notFound} when there was nothing to delete (the key was not found; only known without --context)`)
  .addHelpText('after', `\nExit codes: 0 deleted (or nothing to delete, without --exit-code); ${EXIT.error} an error; ${EXIT.notFound} nothing to delete, with --exit-code.`)
  .action(async (key: string, o: KvOpts) => {
    const found = await withClient(o, async (c) => {
      const read = o.context === undefined ? await c.get(key) : undefined;
      await c.delete(key, { context: o.context ?? read!.context, w: o.w, ...(o.requestId ? { requestId: o.requestId } : {}) });
      return read?.found ?? true;
    });
    if (!found && o.exitCode) process.exitCode = EXIT.notFound;
    if (o.json) console.log(JSON.stringify({ found }));
    else console.log(found ? `deleted ${key}` : `nothing to delete: ${key} was not found`);
  });

program
  .command('getendpoints')
  .description("KEY's token, its replicas and where writes go now (fallbacks for replicas that are down), like nodetool getendpoints")
  .argument('<key>')
  .option('--node <host:port>', 'any node of the cluster (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('--json', 'print JSON')
  .action(async (key: string, o: { node: string; json?: boolean }) => {
    const e = await withAdmin(o.node, (c) => c.endpoints(key));
    console.log(o.json ? JSON.stringify(e, null, 2) : formatEndpoints(key, e));
  });

program
  .command('decommission')
  .description('take a node out of the cluster: it streams its ranges to the nodes that gain them, goes left and exits (like nodetool decommission)')
  .option('--node <host:port>', 'the node to decommission (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('--cancel', 'withdraw a decommission that has not finished')
  .option('--no-wait', 'return once started instead of following it to the end')
  .action(async (o: { node: string; cancel?: boolean; wait: boolean }) => {
    const r = await withAdmin(o.node, (c) => c.decommission(o.cancel === true));
    console.log(r.message);
    if (o.cancel || !o.wait || r.move === '') return;
    const { follow } = await import('./topology.js');
    await follow(`decommission ${o.node}`, o.node, r.move, (t) => (t === undefined || t.drive?.phase === 'left' ? true : t.drive?.phase.startsWith('withdrawn') ? `decommission ${t.drive.phase}` : false));
    console.log(`${o.node} left the cluster; its process exits. Its data stays in its data dir until you delete it.`);
  });

program
  .command('removenode')
  .description('remove a member that is down for good: the surviving replicas stream its ranges to the nodes that gain them (like nodetool removenode)')
  .argument('<id>', 'host id of the dead member (see ringkv status)')
  .option('--node <host:port>', 'a live node that drives the removal (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('--no-wait', 'return once started instead of following it to the end')
  .action(async (id: string, o: { node: string; wait: boolean }) => {
    const r = await withAdmin(o.node, (c) => c.removeNode(id));
    console.log(r.message);
    if (!o.wait || r.move === '') return;
    const { follow } = await import('./topology.js');
    await follow(`removenode ${id}`, o.node, r.move, (t) =>
      t === undefined ? `${o.node} stopped answering; run ringkv removenode ${id} again on another node to resume` : t.drive?.move === r.move && t.drive.phase === 'removed' ? true : t.drive?.phase.startsWith('withdrawn') ? `removal ${t.drive.phase}` : false,
    );
    console.log(`${id} removed: every range it held is back on N replicas.`);
  });

program
  .command('cleanup')
  .description('delete the data a node keeps for ranges it no longer replicates, after nodes joined (like nodetool cleanup)')
  .option('--node <host:port>', 'the node to clean up (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .action(async (o: { node: string }) => {
    const r = await withAdmin(o.node, (c) => c.cleanup());
    console.log(`${o.node}: ${r.deleted} keys deleted from ${r.ranges} ranges it no longer replicates${r.kept > 0 ? ` (${r.kept} written meanwhile, kept)` : ''}`);
  });

program
  .command('repair')
  .description('anti-entropy: compare every range a node replicates with its other replicas by Merkle tree, and exchange only what differs (like nodetool repair)')
  .option('--node <host:port>', 'the node to repair from (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('--range <start-end>', 'only the ranges overlapping START-END (tokens of 16 hex digits, as ringkv ring shows them)', (v: string) => {
    const m = /^([0-9a-f]{16})-([0-9a-f]{16})$/.exec(v);
    if (m === null) throw new InvalidArgumentError(`expected START-END, two tokens of 16 hex digits (as ringkv ring shows them), got "${v}"`);
    return { start: m[1]!, end: m[2]! };
  })
  .option('--status', 'show the repair running on the node, or its last one, and when each of its ranges was last repaired (with --json), and exit')
  .option('--no-wait', 'start it and return')
  .option('--json', 'print JSON')
  .action(async (o: { node: string; range?: { start: string; end: string }; status?: boolean; wait: boolean; json?: boolean }) => {
    const { formatRepair } = await import('./topology.js');
    const show = (r: RepairStatusReply): void => console.log(o.json ? JSON.stringify(r, null, 2) : formatRepair(r));
    if (o.status) return show(await withAdmin(o.node, (c) => c.repairStatus()));
    const started = await withAdmin(o.node, (c) => c.repair(o.range));
    if (!o.json) console.log(`repair ${started.id} started on ${o.node}: ${started.ranges} ranges`);
    if (!o.wait) return o.json ? show(started) : undefined;
    const { followRepair } = await import('./topology.js');
    const done = await followRepair(o.node, o.json ? { out: process.stderr } : {});
    show(done);
    if (done.failed > 0 || done.skipped > 0) process.exitCode = 1;
  });

program
  .command('transfers')
  .description('ranges being streamed between nodes, and the topology change in progress (like riak-admin transfers)')
  .option('--node <host:port>', 'any node of the cluster (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('--json', 'print JSON')
  .action(async (o: { node: string; json?: boolean }) => {
    const status = await withAdmin(o.node, (c) => c.status());
    const [{ clusterTransfers }, { formatTransfers }] = await Promise.all([import('../client/admin.js'), import('./topology.js')]);
    const { replies, unreachable } = await clusterTransfers(status);
    console.log(o.json ? JSON.stringify(replies, null, 2) : formatTransfers(replies, unreachable));
  });

function changes(kind: string, ids: string[]): { kind: 'join' | 'leave' | 'remove'; node: string }[] {
  if (kind === undefined && ids.length === 0) return [];
  if (kind !== 'join' && kind !== 'leave' && kind !== 'remove') throw new InvalidArgumentError(`expected join, leave or remove, got "${kind}"`);
  if (ids.length === 0) throw new InvalidArgumentError(`name the node(s): ringkv plan ${kind} ID [ID ...]`);
  return ids.map((node) => ({ kind, node }));
}

program
  .command('plan')
  .description('stage joins (of --join manual standbys), leaves and removals, and print what they would move; nothing changes until ringkv commit (like riak admin cluster plan)')
  .argument('[change]', 'join | leave | remove; omit to show what is staged')
  .argument('[ids...]', 'node ids')
  .option('--node <host:port>', 'the node that keeps the stage and will run the commit (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('--json', 'print JSON')
  .action(async (kind: string, ids: string[], o: { node: string; json?: boolean }) => {
    const p = await withAdmin(o.node, (c) => c.plan(changes(kind, ids)));
    const { formatPlan } = await import('./topology.js');
    console.log(o.json ? JSON.stringify(p, null, 2) : formatPlan(p));
  });

program
  .command('commit')
  .description('run the staged changes one after another, following them to the end; refused if the ring changed since the plan')
  .option('--node <host:port>', 'the node that keeps the stage (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .option('--no-wait', 'return once started')
  .action(async (o: { node: string; wait: boolean }) => {
    const started = await withAdmin(o.node, (c) => c.commit());
    console.log(`committing ${started.steps.filter((s) => s.state !== 'done').length} change(s) on ${o.node}`);
    if (!o.wait) return;
    const { followCommit } = await import('./topology.js');
    const end = await followCommit(o.node);
    const failed = end.steps.find((s) => s.state === 'failed');
    if (failed) throw new Error(`${failed.change.kind} ${failed.change.node} failed: ${failed.error}; the steps after it were not run`);
    console.log('every staged change is done');
  });

program
  .command('clear')
  .description('discard the staged changes')
  .option('--node <host:port>', 'the node that keeps the stage (RINGKV_NODE)', nodeAddress, DEFAULT_NODE)
  .action(async (o: { node: string }) => {
    await withAdmin(o.node, (c) => c.clear());
    console.log('staged changes discarded');
  });

registerHealth(program, DEFAULT_NODE);

// Every command that calls a node (it has --node) takes the credential flags.
const callsNode = (cmd: Command): boolean => cmd.options.some((o) => o.long === '--node');
for (const cmd of program.commands) if (callsNode(cmd)) withCredentials(cmd);
program.hook('preAction', (_, action) => {
  if (callsNode(action)) setCredentials(action.opts());
});

program.parseAsync().catch(async (err: unknown) => {
  const { describeFailure } = await import('./errors.js');
  console.error(`ringkv: ${describeFailure(err)}`);
  process.exit(err instanceof CliError ? err.exitCode : EXIT.error);
});
