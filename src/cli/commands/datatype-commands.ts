/**
 * The data types' commands (docs/data-types.md): `ringkv counter incr|decr|get|reset` on a
 * bucket of type counter, `ringkv set add|rm|drop|list|has` on a bucket of type set. Keys and
 * elements are UTF-8 text; each command is one call to one node (set rm and set list a
 * few), with a deadline, as put and get are.
 *
 * Owns: their flags, the check of an amount, what they print and their exit codes. Must
 * not: import at load what only the actions need.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { withClient } from '../calls.js';
import { EXIT } from '../exit.js';
import { showValue } from '../format.js';
import { ANY_NODE_HELP, DEFAULT_NODES, nodeAddresses, positiveInt } from '../arguments.js';
import { quorum } from './kv-commands.js';

/** A counter amount: a whole number, not 0, within ±(2^53 − 1) (what a node takes exactly). */
export function amount(value: string): bigint {
  if (!/^[+-]?\d{1,16}$/.test(value.trim()))
    throw new InvalidArgumentError(`expected a whole number such as 5 or -3, got "${value}"`);
  const n = BigInt(value.trim());
  if (n === 0n) throw new InvalidArgumentError('an amount of 0 changes nothing: give a whole number other than 0');
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || -n > BigInt(Number.MAX_SAFE_INTEGER))
    throw new InvalidArgumentError(`an amount is at most ${Number.MAX_SAFE_INTEGER} either way, got ${value}`);
  return n;
}

interface TypedOpts {
  node: string;
  bucket: string;
  deadlineMs: number;
  json?: boolean;
  r?: number;
  w?: number;
}

const QUORUM_HELP = '0 or unset: a majority of N';

/** A data-type command: --bucket required (a counter or set lives in a bucket of its type), --node, --deadline-ms, --json. */
function typedCommand(parent: Command, name: string, description: string, type: 'counter' | 'set'): Command {
  return parent
    .command(name)
    .description(description)
    .requiredOption('--bucket <name>', `a bucket of type ${type} (ringkv bucket create NAME --type ${type})`)
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--deadline-ms <ms>', 'deadline of the request', positiveInt(600_000), 5000)
    .option('--json', 'print JSON');
}

/** `c` with --w, the replicas a write waits for. */
const writeFlags = (c: Command): Command =>
  c.option('--w <w>', `replicas that must acknowledge (1..N; ${QUORUM_HELP})`, quorum);
/** `c` with --r, the replicas a read merges. */
const readFlags = (c: Command): Command =>
  c.option('--r <r>', `replicas whose replies are merged (1..N; ${QUORUM_HELP})`, quorum);

/** `ringkv counter` and its subcommands. */
export function counterCommand(program: Command): void {
  const counter = program
    .command('counter')
    .description(
      'counters of a bucket of type counter: incr, decr, get, reset (each increment counts once, even when retried)',
    );
  const update = (name: string, description: string, sign: 1n | -1n): void => {
    writeFlags(typedCommand(counter, name, description, 'counter'))
      .argument('<key>')
      .argument('[amount]', 'a whole number other than 0 (default 1); negative to go the other way', amount, 1n)
      .action(async (key: string, by: bigint, o: TypedOpts) => {
        // One request id for the call's attempts: the client draws it, and reuses it on a hedge or failover.
        const r = await withClient(o, (c) => c.counterUpdate(key, sign * by, { bucket: o.bucket, w: o.w }));
        console.log(o.json ? JSON.stringify({ value: r.value.toString() }) : r.value.toString());
      });
  };
  update('incr', 'add AMOUNT (default 1) to the counter KEY; prints its value after', 1n);
  update('decr', 'subtract AMOUNT (default 1) from the counter KEY; prints its value after', -1n);
  readFlags(typedCommand(counter, 'get', "the counter KEY's value (0 when never updated)", 'counter'))
    .argument('<key>')
    .option('--exit-code', `exit with ${EXIT.notFound} when the counter was never updated`)
    .action(async (key: string, o: TypedOpts & { exitCode?: boolean }) => {
      const r = await withClient(o, (c) => c.counterGet(key, { bucket: o.bucket, r: o.r }));
      if (!r.found && o.exitCode) process.exitCode = EXIT.notFound;
      console.log(o.json ? JSON.stringify({ value: r.value.toString(), found: r.found }) : r.value.toString());
    });
  writeFlags(
    readFlags(
      typedCommand(
        counter,
        'reset',
        'reset the counter KEY to count from 0: takes out the increments a read of it sees (a concurrent one still counts); prints the value taken out',
        'counter',
      ),
    ),
  )
    .argument('<key>')
    .option('--exit-code', `exit with ${EXIT.notFound} when the counter was never updated`)
    .action(async (key: string, o: TypedOpts & { exitCode?: boolean }) => {
      const r = await withClient(o, (c) => c.counterReset(key, { bucket: o.bucket, w: o.w }));
      if (!r.found && o.exitCode) process.exitCode = EXIT.notFound;
      console.log(
        o.json ? JSON.stringify({ value: r.value.toString(), found: r.found }) : `reset ${key} (took out ${r.value})`,
      );
    });
}

/** An element as JSON shows it: text (or 0x hex, as get shows values) and its bytes in base64. */
function elementJson(e: Uint8Array): { element: string; elementBase64: string } {
  return { element: showValue(e), elementBase64: Buffer.from(e).toString('base64') };
}

/** `ringkv set` and its subcommands, each built by its own function below. */
export function setCommand(program: Command): void {
  const set = program
    .command('set')
    .description(
      'sets of a bucket of type set: add, rm, drop, list, has (observed-remove: a remove takes out the adds it saw)',
    );
  setAddCommand(set);
  setRmCommand(set);
  setDropCommand(set);
  setListCommand(set);
  setHasCommand(set);
}

/** `set add KEY ELEMENT...`: add elements, each once, in one request. */
function setAddCommand(set: Command): void {
  writeFlags(typedCommand(set, 'add', 'add ELEMENT... (1 to 1,000) to the set KEY, in one request', 'set'))
    .argument('<key>')
    .argument('<element...>', 'elements as text, 1 to 1,024 bytes each')
    .action(async (key: string, elements: string[], o: TypedOpts) => {
      // An element named twice is added once (a request names each element at most once).
      const wanted = [...new Set(elements)];
      await withClient(o, (c) => c.setAdd(key, wanted, { bucket: o.bucket, w: o.w }));
      console.log(o.json ? JSON.stringify({ added: wanted.length }) : `added ${wanted.length} to ${key}`);
    });
}

/** `set rm KEY ELEMENT...`: read each element's context, remove those present, name those absent. */
function setRmCommand(set: Command): void {
  writeFlags(
    typedCommand(
      set,
      'rm',
      "remove ELEMENT... from the set KEY: reads each one's context, then removes what those reads saw",
      'set',
    ),
  )
    .alias('remove')
    .argument('<key>')
    .argument('<element...>', 'elements as text')
    .option('--exit-code', `exit with ${EXIT.notFound} when some element was not in the set`)
    .action(async (key: string, elements: string[], o: TypedOpts & { exitCode?: boolean }) => {
      const wanted = [...new Set(elements)];
      const absent = await withClient(o, async (c) => {
        const seen = await Promise.all(
          wanted.map(async (element) => ({ element, ...(await c.setContains(key, element, { bucket: o.bucket })) })),
        );
        const present = seen.filter((s) => s.present);
        if (present.length > 0) await c.setRemove(key, present, { bucket: o.bucket, w: o.w });
        return seen.filter((s) => !s.present).map((s) => s.element);
      });
      if (absent.length > 0 && o.exitCode) process.exitCode = EXIT.notFound;
      if (o.json) return console.log(JSON.stringify({ removed: wanted.length - absent.length, absent }));
      console.log(`removed ${wanted.length - absent.length} from ${key}`);
      if (absent.length > 0) console.error(`not in the set: ${absent.join(', ')}`);
    });
}

/** `set drop KEY`: remove every element, page by page (client setDrop). */
function setDropCommand(set: Command): void {
  writeFlags(
    readFlags(
      typedCommand(
        set,
        'drop',
        "remove every element of the set KEY, page by page, each with the context its page's read gave (an add concurrent with the drop survives it)",
        'set',
      ),
    ),
  )
    .argument('<key>')
    .option('--exit-code', `exit with ${EXIT.notFound} when the set had no elements`)
    .action(async (key: string, o: TypedOpts & { exitCode?: boolean }) => {
      const { removed } = await withClient(o, (c) => c.setDrop(key, { bucket: o.bucket, r: o.r, w: o.w }));
      if (removed === 0 && o.exitCode) process.exitCode = EXIT.notFound;
      console.log(o.json ? JSON.stringify({ removed }) : `removed ${removed} from ${key}`);
    });
}

/** `set list KEY`: every element, one a line, read page by page. */
function setListCommand(set: Command): void {
  readFlags(
    typedCommand(set, 'list', 'every element of the set KEY, one a line, in byte order (read page by page)', 'set'),
  )
    .alias('ls')
    .argument('<key>')
    .option('--page <n>', 'elements per page read, 1 to 1,000', positiveInt(1000), 1000)
    .action(async (key: string, o: TypedOpts & { page: number }) => {
      const elements = await withClient(o, async (c) => {
        const out: Buffer[] = [];
        for await (const e of c.setElements(key, { bucket: o.bucket, r: o.r, limit: o.page })) out.push(e.element);
        return out;
      });
      if (o.json) return console.log(JSON.stringify({ elements: elements.map(elementJson) }));
      for (const e of elements) console.log(showValue(e));
    });
}

/** `set has KEY ELEMENT`: whether it is in the set, and the context a remove needs. */
function setHasCommand(set: Command): void {
  readFlags(
    typedCommand(
      set,
      'has',
      'whether ELEMENT is in the set KEY (prints yes or no, and the context a remove needs)',
      'set',
    ),
  )
    .argument('<key>')
    .argument('<element>')
    .option('--exit-code', `exit with ${EXIT.notFound} when the element is not in the set`)
    .action(async (key: string, element: string, o: TypedOpts & { exitCode?: boolean }) => {
      const r = await withClient(o, (c) => c.setContains(key, element, { bucket: o.bucket, r: o.r }));
      if (!r.present && o.exitCode) process.exitCode = EXIT.notFound;
      const ctx = r.context.toString('base64');
      console.log(
        o.json ? JSON.stringify({ present: r.present, context: ctx }) : `${r.present ? 'yes' : 'no'}\ncontext: ${ctx}`,
      );
    });
}
