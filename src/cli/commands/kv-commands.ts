/**
 * The key/value commands: `put`, `get` and `del` (alias `delete`), each a call to one
 * node with a deadline; values in and out as bytes (values.ts).
 *
 * Owns: their flags, the checks of their values (R, W, confirmations, context, request id), what they
 * print and their exit codes. Must not: import at load what only the actions need.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { withClient } from '../calls.js';
import { EXIT } from '../exit.js';
import { formatGet, showValue } from '../format.js';
import { ANY_NODE_HELP, DEFAULT_NODES, duration, nodeAddresses, positiveInt } from '../arguments.js';

/** R or W: 0 is a majority of N, as the node takes it; the node checks the upper bound against its N. */
export function quorum(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 16)
    throw new InvalidArgumentError(`expected 0 (a majority) or a whole number from 1 to N, got "${value}"`);
  return n;
}

/** node_confirms, zone_confirms or pw: 0 is no rule; the node checks the upper bound against its N and zones. */
function confirms(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 16)
    throw new InvalidArgumentError(`expected 0 (no rule) or a whole number from 1 to N, got "${value}"`);
  return n;
}

export function context(value: string): Buffer {
  const b = Buffer.from(value, 'base64');
  if (b.length === 0 || b.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) {
    throw new InvalidArgumentError('expected the base64 context that `ringkv get` printed');
  }
  return b;
}

export function requestId(text: string): Buffer {
  const b = Buffer.from(text, 'utf8');
  if (b.length < 1 || b.length > 64)
    throw new InvalidArgumentError(`a request id must be 1 to 64 bytes, got ${b.length}; use a UUID`);
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
  bucket: string;
  nodeConfirms?: number;
  zoneConfirms?: number;
  pw?: number;
}

const QUORUM_HELP = '0 or unset: a majority of N';
export const REQUEST_ID_HELP =
  "the write's request id (text, 1 to 64 bytes): the same write sent again with it, from any script or node, is applied once; for retrying a write whose outcome is unknown";

/** A put's or delete's confirmation flags (docs/reads-and-writes.md#confirmations). */
function confirmFlags(c: Command): Command {
  return c
    .option(
      '--node-confirms <n>',
      'acknowledgements must come from N distinct nodes, fallbacks included (0 or unset: no rule)',
      confirms,
    )
    .option('--zone-confirms <n>', 'acknowledgements must come from N distinct zones (0 or unset: no rule)', confirms)
    .option(
      '--pw <n>',
      'acknowledgements must include N primary replicas, not fallbacks (0 or unset: no rule)',
      confirms,
    );
}

function confirmsOf(o: KvOpts): { nodeConfirms?: number; zoneConfirms?: number; pw?: number } {
  return { nodeConfirms: o.nodeConfirms, zoneConfirms: o.zoneConfirms, pw: o.pw };
}

function kvCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--deadline-ms <ms>', 'deadline of the request', positiveInt(600_000), 5000)
    .option('--bucket <name>', "the key's bucket (ringkv bucket list; default: the default bucket)", '')
    .option('--json', 'print JSON');
}

export function putCommand(program: Command): void {
  confirmFlags(
    kvCommand(
      program,
      'put',
      'write KEY = VALUE; with --context (from get) it replaces what that get saw, without it is a sibling of any value there',
    ),
  )
    .argument('<key>')
    .argument('[value]', 'the value as text (UTF-8); without it, --file PATH or stdin gives the bytes')
    .option('--file <path>', 'read the value\'s bytes from PATH ("-": stdin), up to 1 MiB')
    .option('--context <base64>', 'context printed by `ringkv get`', context)
    .option('--w <w>', `replicas that must acknowledge (1..N; ${QUORUM_HELP})`, quorum)
    .option('--request-id <id>', REQUEST_ID_HELP, requestId)
    .option(
      '--ttl <duration>',
      "the value expires after this long, like 30s, 12h or 7d (default: the bucket's TTL, if any)",
      duration,
    )
    .addHelpText(
      'after',
      '\nThe value is VALUE as UTF-8 text, or the bytes of --file PATH, or, with neither, of stdin when it is not a terminal:\n  ringkv put photo --file photo.jpg\n  ringkv put config < config.json\nA VALUE that starts with @ is stored as that text (use --file for a file).',
    )
    .action(async (key: string, arg: string | undefined, o: KvOpts & { file?: string; ttl?: number }) => {
      const { readValue } = await import('../values.js');
      const { value, note } = await readValue({ arg, file: o.file, stdin: process.stdin });
      if (note !== undefined) console.error(note);
      const r = await withClient(o, (c) =>
        c.put(key, value, {
          context: o.context,
          w: o.w,
          bucket: o.bucket,
          ttlMs: o.ttl,
          ...confirmsOf(o),
          ...(o.requestId ? { requestId: o.requestId } : {}),
        }),
      );
      const ctx = r.context.toString('base64');
      console.log(o.json ? JSON.stringify({ context: ctx }) : `ok\ncontext: ${ctx}`);
    });
}

export function getCommand(program: Command): void {
  kvCommand(program, 'get', 'read KEY: every sibling value, and the context to pass to the next put or del')
    .argument('<key>')
    .option('--r <r>', `replicas whose replies are merged (1..N; ${QUORUM_HELP})`, quorum)
    .option(
      '--out <file>',
      'write the value\'s raw bytes to FILE ("-": stdout) instead of printing it; with siblings, needs --sibling',
    )
    .option('--sibling <i>', 'the sibling to take, numbered as ringkv get lists them (1..)', positiveInt(1_000_000))
    // Not found always exits EXIT.notFound now; the flag that asked for it is still taken.
    .addOption(new Option('--exit-code').hideHelp())
    .addHelpText(
      'after',
      `\nExit codes: 0 found; ${EXIT.error} an error; ${EXIT.notFound} not found; ${EXIT.siblings} --out of a key with siblings and no --sibling (nothing written).\n  ringkv get photo --out photo.jpg\n  ringkv get photo --out - > photo.jpg     # the context goes to stderr`,
    )
    .action(async (key: string, o: KvOpts & { out?: string; sibling?: number }) => {
      const r = await withClient(o, (c) => c.get(key, { r: o.r, bucket: o.bucket }));
      const { chooseValue, writeValue } = await import('../values.js');
      if (!r.found) process.exitCode = EXIT.notFound;
      const ctx = r.context.toString('base64');
      if (o.out !== undefined) {
        if (!r.found)
          return o.json
            ? console.log(JSON.stringify({ found: false, context: ctx }))
            : console.error(`${key}: not found; nothing written to ${o.out === '-' ? 'stdout' : o.out}`);
        const value = chooseValue(key, r, o.sibling);
        writeValue(o.out, value);
        if (o.out === '-')
          return console.error(
            o.json ? JSON.stringify({ found: true, bytes: value.length, context: ctx }) : `context: ${ctx}`,
          );
        return console.log(
          o.json
            ? JSON.stringify({ found: true, out: o.out, bytes: value.length, context: ctx })
            : `wrote ${value.length} bytes to ${o.out}\ncontext: ${ctx}`,
        );
      }
      const shown = o.sibling === undefined || !r.found ? r : { ...r, values: [chooseValue(key, r, o.sibling)] };
      if (!o.json) return console.log(formatGet(key, shown));
      console.log(
        JSON.stringify({
          found: r.found,
          values: shown.values.map(showValue),
          valuesBase64: shown.values.map((v) => v.toString('base64')),
          context: ctx,
        }),
      );
    });
}

export function delCommand(program: Command): void {
  confirmFlags(
    kvCommand(
      program,
      'del',
      'delete KEY: a tombstone that supersedes what its context saw; a concurrent put survives it',
    ),
  )
    .alias('delete')
    .argument('<key>')
    .option(
      '--context <base64>',
      'context printed by `ringkv get`; default: read the key first and delete what that read saw',
      context,
    )
    .option('--w <w>', `replicas that must acknowledge (1..N; ${QUORUM_HELP})`, quorum)
    .option('--request-id <id>', REQUEST_ID_HELP, requestId)
    .option(
      '--exit-code',
      `exit with ${EXIT.notFound} when there was nothing to delete (the key was not found; only known without --context)`,
    )
    .addHelpText(
      'after',
      `\nExit codes: 0 deleted (or nothing to delete, without --exit-code); ${EXIT.error} an error; ${EXIT.notFound} nothing to delete, with --exit-code.`,
    )
    .action(async (key: string, o: KvOpts) => {
      const found = await withClient(o, async (c) => {
        const read = o.context === undefined ? await c.get(key, { bucket: o.bucket }) : undefined;
        await c.delete(key, {
          context: o.context ?? read!.context,
          w: o.w,
          bucket: o.bucket,
          ...confirmsOf(o),
          ...(o.requestId ? { requestId: o.requestId } : {}),
        });
        return read?.found ?? true;
      });
      if (!found && o.exitCode) process.exitCode = EXIT.notFound;
      if (o.json) console.log(JSON.stringify({ found }));
      else console.log(found ? `deleted ${key}` : `nothing to delete: ${key} was not found`);
    });
}
