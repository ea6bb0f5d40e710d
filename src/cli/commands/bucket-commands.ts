/**
 * `ringkv bucket create|set|show|list|delete`: a cluster's buckets and their properties (N, the
 * default R and W, a default TTL, the sibling policy, the data type). A change is made on the node named
 * and reaches the others by gossip; the command returns once every up member has it, or
 * says which ones did not yet.
 *
 * Owns: the flags, what is printed and the exit codes. Must not: import at load what only
 * the actions need.
 */
import type { Command } from 'commander';
import type { BucketChangeReply, BucketDeletionInfo, BucketInfo } from '../../client/admin.js';
import type { BucketProps } from '../../buckets/index.js';
import { withAdmin } from '../calls.js';
import { formatBuckets } from '../format.js';
import { ANY_NODE_HELP, DEFAULT_NODES, duration, nodeAddresses, positiveInt, wholeNumber } from '../arguments.js';

interface PropFlags {
  n?: number;
  r?: number;
  w?: number;
  ttl?: number;
  siblings?: string;
  type?: string;
}

/** `cmd` with the property flags: --n and --type settable on create only (refused on set). */
function withPropFlags(cmd: Command, create: boolean): Command {
  return cmd
    .option(
      '--n <n>',
      create
        ? "replicas per key, 1 to 9 (default: the cluster's N); fixed once created"
        : 'refused: a bucket keeps its N',
      positiveInt(9),
    )
    .option('--r <r>', 'replicas a get waits for unless it sets R (0: a majority of N)', wholeNumber(9))
    .option('--w <w>', 'replicas a put waits for unless it sets W (0: a majority of N)', wholeNumber(9))
    .option(
      '--ttl <duration>',
      'time to live of a put that sets none, like 30s, 12h or 7d (0: values do not expire)',
      duration,
    )
    .option(
      '--siblings <policy>',
      'siblings (keep concurrent writes, the default) or lww (the latest timestamp wins; concurrent writes are lost)',
    )
    .option(
      '--type <type>',
      create
        ? 'what its keys hold: kv (put/get/del; the default), counter (ringkv counter), set (ringkv set) or map (ringkv map); fixed once created'
        : 'refused: a bucket keeps its type',
    );
}

/** The properties the flags give, and only those. */
function propsOf(o: PropFlags): Partial<BucketProps> {
  const p: { -readonly [K in keyof BucketProps]?: BucketProps[K] } = {};
  if (o.n !== undefined) p.n = o.n;
  if (o.r !== undefined) p.r = o.r;
  if (o.w !== undefined) p.w = o.w;
  if (o.ttl !== undefined) p.ttlMs = o.ttl;
  if (o.siblings !== undefined) p.siblings = o.siblings as BucketProps['siblings'];
  if (o.type !== undefined) p.type = o.type as BucketProps['type'];
  return p;
}

/** What a change prints: the bucket as changed, and the members that do not have it yet. */
function report(verb: string, r: BucketChangeReply, json: boolean | undefined): void {
  if (json) return console.log(JSON.stringify(r, null, 2));
  console.log(`bucket ${r.bucket.name} ${verb}`);
  console.log(formatBuckets([r.bucket]));
  if (r.lagging.length > 0)
    console.error(
      `not yet on ${r.lagging.join(', ')}: the change is saved and reaches them by gossip (see ringkv bucket list --node on them)`,
    );
}

/** `ringkv bucket` and its subcommands, each built by its own function below. */
export function bucketCommand(program: Command): void {
  const bucket = program
    .command('bucket')
    .description(
      "a cluster's buckets: create, set, show, list, delete (each with its own type, N, default R/W, TTL and sibling policy)",
    );
  bucketCreateCommand(bucket);
  bucketSetCommand(bucket);
  bucketShowCommand(bucket);
  bucketDeleteCommand(bucket);
  bucketListCommand(bucket);
}

/** `bucket create NAME`: a new bucket with the properties given. */
function bucketCreateCommand(bucket: Command): void {
  withPropFlags(
    bucket.command('create').description('create a bucket').argument('<name>', "1 to 64 of a-z, 0-9, '_', '-', '.'"),
    true,
  )
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--json', 'print JSON')
    .action(async (name: string, o: PropFlags & { node: string; json?: boolean }) => {
      report('created', await withAdmin(o.node, (c) => c.createBucket(name, propsOf(o))), o.json);
    });
}

/** `bucket set NAME`: change the properties given (refused with none). */
function bucketSetCommand(bucket: Command): void {
  withPropFlags(
    bucket
      .command('set')
      .description("change a bucket's properties (those given; the others keep their values)")
      .argument('<name>'),
    false,
  )
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--json', 'print JSON')
    .action(async (name: string, o: PropFlags & { node: string; json?: boolean }) => {
      const changes = propsOf(o);
      if (Object.keys(changes).length === 0) {
        const { CliError } = await import('../exit.js');
        throw new CliError('name a property to change: --r, --w, --ttl or --siblings');
      }
      report('changed', await withAdmin(o.node, (c) => c.setBucket(name, changes)), o.json);
    });
}

/** `bucket show NAME`: a bucket's properties as the node has them. */
function bucketShowCommand(bucket: Command): void {
  bucket
    .command('show')
    .description("a bucket's properties as a node has them")
    .argument('<name>')
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--json', 'print JSON')
    .action(async (name: string, o: { node: string; json?: boolean }) => {
      const b: BucketInfo = await withAdmin(o.node, (c) => c.getBucket(name));
      console.log(o.json ? JSON.stringify(b, null, 2) : formatBuckets([b]));
    });
}

/** `bucket delete NAME`: delete it, then follow its purge to the end (or, with --no-wait, say how far it is). */
function bucketDeleteCommand(bucket: Command): void {
  bucket
    .command('delete')
    .description(
      'delete a bucket: its name is gone at once, and every member deletes its keys and hints (refused while it holds keys, unless --purge); follows the purge to its end',
    )
    .argument('<name>')
    .option('--purge', 'delete it even if it holds keys: they are deleted on every member')
    .option('--no-wait', 'return once deleted, without following the purge (run it again to see how far it is)')
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--json', 'print JSON (where the purge stands when the command returns)')
    .action(async (name: string, o: { purge?: boolean; wait: boolean; node: string; json?: boolean }) => {
      const { followPurge } = await import('../follow.js');
      const first = await startDeletion(name, o);
      if (!o.json)
        console.log(
          first.started
            ? `bucket ${name} deleted: its name is gone; every member deletes its keys`
            : `bucket ${name} was deleted before; its purge:`,
        );
      const last = o.wait
        ? await withAdmin(o.node, (c) => followPurge(c, name, first.at, o.json ? undefined : process.stdout))
        : first.at;
      if (o.json) console.log(JSON.stringify(last, null, 2));
      else if (!o.wait)
        console.log(
          `purged on ${last.purged.length} of ${last.purged.length + last.pending.length} members${last.pending.length > 0 ? ` (pending: ${last.pending.join(', ')}); run it again to follow the purge` : ''}`,
        );
    });
}

/** Delete bucket `name` on `o.node`; one deleted before is not an error: its purge is where it stands (`started` false). */
async function startDeletion(
  name: string,
  o: { purge?: boolean; node: string },
): Promise<{ started: boolean; at: BucketDeletionInfo }> {
  return withAdmin(o.node, async (c) => {
    try {
      return { started: true, at: await c.deleteBucket(name, { purge: o.purge === true }) };
    } catch (e) {
      // Deleted before (by this command or another): follow its purge.
      const deleted =
        (e as { code?: number }).code === 5 ? await c.bucketDeletion(name).catch(() => undefined) : undefined;
      if (deleted === undefined) throw e;
      return { started: false, at: deleted };
    }
  });
}

/** `bucket list`: every bucket the node knows. */
function bucketListCommand(bucket: Command): void {
  bucket
    .command('list')
    .description('every bucket a node knows, the default one first')
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--json', 'print JSON')
    .action(async (o: { node: string; json?: boolean }) => {
      const list = await withAdmin(o.node, (c) => c.listBuckets());
      console.log(o.json ? JSON.stringify(list, null, 2) : formatBuckets(list));
    });
}
