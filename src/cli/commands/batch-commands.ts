/**
 * The batch commands: `getmany` and `putmany`, the keys (or key/value lines) of a file
 * or stdin sent in batches (GetMany, PutMany) to one node, one output line per key.
 *
 * Owns: their flags, the file formats, what they print and their exit codes. Must not:
 * import at load what only the actions need.
 */
import type { Command } from 'commander';
import { withClient } from '../calls.js';
import { CliError, EXIT } from '../exit.js';
import { showValue } from '../format.js';
import { ANY_NODE_HELP, DEFAULT_NODES, nodeAddresses, positiveInt } from '../arguments.js';
import { quorum } from './kv-commands.js';
import { MAX_BATCH_KEYS, MAX_BATCH_VALUE_BYTES } from '../../common/batch-limits.js';

/** Most lines a file may have: the commands hold it all in memory. */
const MAX_LINES = 1_000_000;

interface BatchOpts {
  node: string;
  file: string;
  bucket?: string;
  deadlineMs: number;
  json?: boolean;
}

/** The lines of --file (`-`: stdin), without a final empty line; blank lines are skipped and counted. */
async function readLines(file: string): Promise<string[]> {
  const { readFile } = await import('node:fs/promises');
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (e) {
    throw new CliError(
      `cannot read --file ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
  const lines = text.split(/\r?\n/).filter((l) => l !== '');
  if (lines.length === 0)
    throw new CliError(`--file ${file} has no lines: give one key (getmany) or key<TAB>value (putmany) per line`);
  if (lines.length > MAX_LINES)
    throw new CliError(
      `--file ${file} has ${lines.length} lines, more than the ${MAX_LINES} these commands take at once; split it`,
    );
  return lines;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw new CliError('--file - reads stdin, which is a terminal: pipe the lines in (ringkv getmany --file - < KEYS)');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs of `items` no longer than MAX_BATCH_KEYS, nor over MAX_BATCH_VALUE_BYTES of `size` (an item alone may be). */
function chunks<T>(items: readonly T[], size: (x: T) => number): T[][] {
  const out: T[][] = [];
  let cur: T[] = [],
    bytes = 0;
  for (const it of items) {
    if (cur.length === MAX_BATCH_KEYS || (cur.length > 0 && bytes + size(it) > MAX_BATCH_VALUE_BYTES))
      (out.push(cur), (cur = []), (bytes = 0));
    cur.push(it);
    bytes += size(it);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** The line of each key after its first in `keys`: a repeat, refused here as a node refuses it within a batch (it could fall in another batch). */
function repeats(keys: readonly string[]): Map<number, number> {
  const first = new Map<string, number>();
  const out = new Map<number, number>();
  keys.forEach((k, i) => (first.has(k) ? out.set(i, first.get(k)!) : first.set(k, i)));
  return out;
}

/** gRPC's name of a status code; gRPC is loaded by the action (the client needs it anyway). */
async function codeNames(): Promise<(code: number) => string> {
  const { status } = await import('@grpc/grpc-js');
  return (code) => status[code] ?? String(code);
}

/** One key's outcome as printed: text (tab-separated: status, key, then values or the error) or a JSON line. */
type Outcome =
  | { key: string; ok: true; found?: boolean; values?: Buffer[]; context: Buffer }
  | { key: string; ok: false; code: string; details: string };

function print(o: Outcome, json: boolean | undefined): void {
  if (json) {
    if (!o.ok) return console.log(JSON.stringify({ key: o.key, ok: false, code: o.code, error: o.details }));
    return console.log(
      JSON.stringify({
        key: o.key,
        ok: true,
        ...(o.found === undefined
          ? {}
          : {
              found: o.found,
              values: o.values!.map(showValue),
              valuesBase64: o.values!.map((v) => v.toString('base64')),
            }),
        context: o.context.toString('base64'),
      }),
    );
  }
  if (!o.ok) return console.log(`error\t${o.key}\t${o.code}: ${o.details}`);
  if (o.found === undefined) return console.log(`ok\t${o.key}`);
  console.log(o.found ? ['found', o.key, ...o.values!.map(showValue)].join('\t') : `notfound\t${o.key}`);
}

/** Run `send` on each batch in turn, print each key's outcome in file order, and set the exit code. */
async function runBatches<T>(
  o: BatchOpts,
  keys: readonly string[],
  items: readonly T[],
  size: (x: T) => number,
  send: (batch: T[]) => Promise<Outcome[]>,
): Promise<void> {
  const rep = repeats(keys);
  let failed = 0;
  const byLine = new Map<T, number>(items.map((it, i) => [it, i]));
  const fresh = items.filter((_, i) => !rep.has(i));
  const results = new Map<number, Outcome>();
  for (const [i, first] of rep)
    results.set(i, {
      key: keys[i]!,
      ok: false,
      code: 'INVALID_ARGUMENT',
      details: `the key is repeated in the file (first on line ${first + 1}): each key may appear once; this line was not sent`,
    });
  for (const batch of chunks(fresh, size))
    (await send(batch)).forEach((r, j) => results.set(byLine.get(batch[j]!)!, r));
  for (let i = 0; i < keys.length; i++) {
    const r = results.get(i)!;
    if (!r.ok) failed++;
    print(r, o.json);
  }
  if (failed > 0) {
    console.error(
      `ringkv: ${failed} of ${keys.length} keys failed (the lines starting "error" say why)${failed < keys.length ? '; the others succeeded' : ''}`,
    );
    process.exitCode = EXIT.someFailed;
  }
}

function batchCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .requiredOption('--file <path>', 'the file of lines ("-": stdin)')
    .option('--bucket <name>', "the keys' bucket (default: the default bucket)")
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--deadline-ms <ms>', 'deadline of each batch', positiveInt(600_000), 5000)
    .option('--json', 'print one JSON object per key');
}

const EXITS = `Exit codes: 0 every key succeeded (a key not found is a success); ${EXIT.someFailed} some keys failed, each on a line starting "error"; ${EXIT.error} the command failed as a whole (a bad file or flag, no node, a batch the node refused whole).`;

export function getManyCommand(program: Command): void {
  batchCommand(
    program,
    'getmany',
    'read the keys of a file (one per line, as UTF-8 text) in batches of 100: one line per key',
  )
    .option('--r <r>', 'replicas whose replies are merged (1..N; 0 or unset: a majority of N)', quorum)
    .addHelpText(
      'after',
      `\nPrints, per key in file order: "found<TAB>KEY<TAB>VALUE" (one more field per sibling), "notfound<TAB>KEY", or "error<TAB>KEY<TAB>CODE: why". Binary values print as 0x... hex; --json gives base64 and the context.\n${EXITS}\n  ringkv getmany --file keys.txt\n  cut -f1 data.tsv | ringkv getmany --file - --bucket carts`,
    )
    .action(async (o: BatchOpts & { r?: number }) => {
      const keys = await readLines(o.file);
      const codeName = await codeNames();
      await withClient(o, (c) =>
        runBatches(
          o,
          keys,
          keys.map((key) => ({ key })),
          () => 0,
          async (batch) =>
            (
              await c.getMany(
                batch.map((b) => b.key),
                { r: o.r, bucket: o.bucket },
              )
            ).map((r, j): Outcome => {
              const key = batch[j]!.key;
              return r.ok
                ? { key, ok: true, found: r.value.found, values: r.value.values, context: r.value.context }
                : { key, ok: false, code: codeName(r.error.code), details: r.error.details };
            }),
        ),
      );
    });
}

export function putManyCommand(program: Command): void {
  batchCommand(
    program,
    'putmany',
    'write the "KEY<TAB>VALUE" lines of a file in batches of 100 (and 4 MiB): one line per key; blind writes, as put without --context',
  )
    .option('--w <w>', 'replicas that must acknowledge each write (1..N; 0 or unset: a majority of N)', quorum)
    .addHelpText(
      'after',
      `\nEach line is KEY, a tab, and the VALUE: the rest of the line, as UTF-8 text (tabs included). For binary values or values with newlines, use put --file.\nPrints, per key in file order: "ok<TAB>KEY" or "error<TAB>KEY<TAB>CODE: why"; --json adds each new context.\n${EXITS}\n  printf 'a\\t1\\nb\\t2\\n' | ringkv putmany --file -`,
    )
    .action(async (o: BatchOpts & { w?: number }) => {
      const lines = await readLines(o.file);
      const items = lines.map((line, i) => {
        const tab = line.indexOf('\t');
        if (tab < 0) throw new CliError(`line ${i + 1} of --file ${o.file} has no tab: each line is KEY<TAB>VALUE`);
        return { key: line.slice(0, tab), value: Buffer.from(line.slice(tab + 1), 'utf8') };
      });
      const codeName = await codeNames();
      await withClient(o, (c) =>
        runBatches(
          o,
          items.map((it) => it.key),
          items,
          (it) => it.value.length,
          async (batch) =>
            (await c.putMany(batch, { w: o.w, bucket: o.bucket })).map((r, j): Outcome => {
              const key = batch[j]!.key;
              return r.ok
                ? { key, ok: true, context: r.value.context }
                : { key, ok: false, code: codeName(r.error.code), details: r.error.details };
            }),
        ),
      );
    });
}
