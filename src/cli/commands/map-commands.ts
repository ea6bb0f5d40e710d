/**
 * `ringkv map set|enable|disable|incr|add|rm|drop|get` on a bucket of type map
 * (docs/data-types.md#maps). A field is named by a dotted PATH of UTF-8 names: every name
 * but the last is a nested map, and the command says the last one's type (set: a
 * register; enable, disable: a flag; incr: a counter; add: a set). `rm` removes what a
 * read shows under PATH, whatever its type. Each command is one update, with a deadline,
 * as put and get are; rm and disable read the map first, and send what they remove in
 * updates of at most 1,000 ops; drop removes every entry, page by page (client mapDrop).
 *
 * Owns: the path syntax, what the commands print and their exit codes. Must not: import at
 * load what only the actions need.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { Client, MapEntry, MapField, MapFieldType, MapOp } from '../../client/index.js';
import { withClient } from '../calls.js';
import { EXIT } from '../exit.js';
import { showValue } from '../format.js';
import { ANY_NODE_HELP, DEFAULT_NODES, nodeAddresses, positiveInt } from '../arguments.js';
import { quorum } from './kv-commands.js';
import { amount } from './datatype-commands.js';

/** A dotted path's names; every one non-empty (a name with a dot in it needs the client, which takes any bytes). */
export function pathNames(text: string): string[] {
  const names = text.split('.');
  if (names.some((n) => n === ''))
    throw new InvalidArgumentError(`a field path is names joined by dots, such as address.city; got "${text}"`);
  return names;
}

/** A dotted path as the client names it: the leading names maps, the last of type `last`. */
const fieldsOf = (names: readonly string[], last: MapFieldType): MapField[] =>
  names.map((name, i) => ({ name, type: i === names.length - 1 ? last : 'map' }));

/** An entry's path as text: its names joined by dots. */
const dotted = (e: MapEntry): string => e.path.map((f) => showValue(f.name)).join('.');

interface MapOpts {
  node: string;
  bucket: string;
  deadlineMs: number;
  json?: boolean;
  r?: number;
  w?: number;
}

/** A map command: --bucket required (a map lives in a bucket of type map), --node, --deadline-ms, --json. */
function mapCommand(parent: Command, name: string, description: string): Command {
  return parent
    .command(name)
    .description(description)
    .requiredOption('--bucket <name>', 'a bucket of type map (ringkv bucket create NAME --type map)')
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--deadline-ms <ms>', 'deadline of the request', positiveInt(600_000), 5000)
    .option('--json', 'print JSON');
}

/** `c` with --w, the replicas a write waits for. */
const writeFlags = (c: Command): Command =>
  c.option('--w <w>', 'replicas that must acknowledge (1..N; 0 or unset: a majority of N)', quorum);

/** `ops` applied to the map KEY, in updates of at most 1,000 ops and 2 MiB of contexts (each applied whole); how many ops were applied. */
async function update(key: string, o: MapOpts, ops: (c: Client) => Promise<MapOp[]>): Promise<number> {
  return withClient(o, async (c) => {
    const { updateBatches } = await import('../../client/maps.js');
    const list = await ops(c);
    for (const batch of updateBatches(list)) await c.mapUpdate(key, batch, { bucket: o.bucket, w: o.w });
    return list.length;
  });
}

/** Every entry of the map KEY (page by page). */
async function entriesOf(c: Client, key: string, o: MapOpts): Promise<MapEntry[]> {
  const out: MapEntry[] = [];
  for await (const e of c.mapEntries(key, { bucket: o.bucket, r: o.r })) out.push(e);
  return out;
}

/** What an update prints: how many ops it applied. */
function report(o: MapOpts, key: string, applied: number, verb: string): void {
  console.log(o.json ? JSON.stringify({ applied }) : `${verb} ${applied} in ${key}`);
}

/** A MapValue as JSON shows it: values as text (or 0x hex), counters as decimal strings. */
function valueJson(m: Awaited<ReturnType<Client['mapGet']>>): unknown {
  const each = <T, U>(r: Record<string, T>, f: (v: T) => U): Record<string, U> =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, f(v)]));
  return {
    registers: each(m.registers, showValue),
    flags: m.flags,
    counters: each(m.counters, String),
    sets: each(m.sets, (s) => s.map(showValue)),
    maps: each(m.maps, valueJson),
  };
}

/** `ringkv map` and its subcommands, each built by its own function below. */
export function mapCommands(program: Command): void {
  const map = program
    .command('map')
    .description(
      'maps of a bucket of type map: set, enable, disable, incr, add, rm, drop, get (fields named by dotted paths; nested maps)',
    );
  mapSetCommand(map);
  mapEnableCommand(map);
  mapDisableCommand(map);
  mapIncrCommand(map);
  mapAddCommand(map);
  mapRmCommand(map);
  mapDropCommand(map);
  mapGetCommand(map);
}

/** `map set KEY PATH=VALUE...`: assign registers, in one update. */
function mapSetCommand(map: Command): void {
  writeFlags(
    mapCommand(
      map,
      'set',
      'assign registers: PATH=VALUE... (in one request; concurrent assigns: the last writer wins)',
    ),
  )
    .argument('<key>')
    .argument('<assignment...>', 'PATH=VALUE, such as name=Ada or address.city=London')
    .action(async (key: string, assignments: string[], o: MapOpts) => {
      const ops = assignments.map((a): MapOp => {
        const at = a.indexOf('=');
        if (at < 1) throw new InvalidArgumentError(`expected PATH=VALUE, such as name=Ada; got "${a}"`);
        return { op: 'assign', path: fieldsOf(pathNames(a.slice(0, at)), 'register'), value: a.slice(at + 1) };
      });
      report(o, key, await update(key, o, async () => ops), 'assigned');
    });
}

/** `map enable KEY PATH...`: enable flags, each path once. */
function mapEnableCommand(map: Command): void {
  writeFlags(mapCommand(map, 'enable', 'enable the flags PATH...'))
    .argument('<key>')
    .argument('<path...>')
    .action(async (key: string, paths: string[], o: MapOpts) => {
      report(
        o,
        key,
        await update(key, o, async () =>
          [...new Set(paths)].map((p) => ({ op: 'enable', path: fieldsOf(pathNames(p), 'flag') })),
        ),
        'enabled',
      );
    });
}

/** `map disable KEY PATH...`: read the map, then remove the enables of those flags that the read saw. */
function mapDisableCommand(map: Command): void {
  writeFlags(
    mapCommand(map, 'disable', 'disable the flags PATH...: reads them, then disables the enables that read saw'),
  )
    .argument('<key>')
    .argument('<path...>')
    .action(async (key: string, paths: string[], o: MapOpts) => {
      const wanted = new Set(paths.map((p) => pathNames(p).join('.')));
      const applied = await update(key, o, async (c) =>
        (await entriesOf(c, key, o)).flatMap((e): MapOp[] =>
          e.kind === 'flag' && wanted.has(dotted(e)) ? [{ op: 'remove', path: e.path, context: e.context }] : [],
        ),
      );
      report(o, key, applied, 'disabled');
    });
}

/** `map incr KEY PATH [AMOUNT]`: add to a counter. */
function mapIncrCommand(map: Command): void {
  writeFlags(
    mapCommand(
      map,
      'incr',
      'add AMOUNT (default 1; negative subtracts) to the counter PATH (each increment counts once, even when retried)',
    ),
  )
    .argument('<key>')
    .argument('<path>')
    .argument('[amount]', 'a whole number other than 0', amount, 1n)
    .action(async (key: string, path: string, by: bigint, o: MapOpts) => {
      report(
        o,
        key,
        await update(key, o, async () => [{ op: 'increment', path: fieldsOf(pathNames(path), 'counter'), amount: by }]),
        'incremented',
      );
    });
}

/** `map add KEY PATH ELEMENT...`: add elements to a set, each once. */
function mapAddCommand(map: Command): void {
  writeFlags(mapCommand(map, 'add', 'add ELEMENT... to the set PATH'))
    .argument('<key>')
    .argument('<path>')
    .argument('<element...>', 'elements as text, 1 to 1,024 bytes each')
    .action(async (key: string, path: string, elements: string[], o: MapOpts) => {
      const fields = fieldsOf(pathNames(path), 'set');
      report(
        o,
        key,
        await update(key, o, async () =>
          [...new Set(elements)].map((element) => ({ op: 'add', path: fields, element })),
        ),
        'added',
      );
    });
}

/** `map rm KEY PATH [ELEMENT...]`: read the map, then remove what it showed under PATH (of a set, only ELEMENT... when given). */
function mapRmCommand(map: Command): void {
  writeFlags(
    mapCommand(
      map,
      'rm',
      "remove what a read shows under PATH: a register (cleared), a flag (disabled), a counter (reset), a set's elements (all, or ELEMENT...), a nested map's fields",
    ),
  )
    .alias('remove')
    .argument('<key>')
    .argument('<path>')
    .argument('[element...]', 'only these elements of the set PATH')
    .option('--exit-code', `exit with ${EXIT.notFound} when nothing under PATH was removed`)
    .action(async (key: string, path: string, elements: string[], o: MapOpts & { exitCode?: boolean }) => {
      const prefix = pathNames(path).join('.');
      const only = new Set(elements);
      const applied = await update(key, o, async (c) => {
        const { removeOf } = await import('../../client/maps.js');
        return (await entriesOf(c, key, o)).flatMap((e): MapOp[] => {
          const p = dotted(e);
          if (p !== prefix && !p.startsWith(`${prefix}.`)) return [];
          if (e.kind === 'element') return only.size === 0 || only.has(showValue(e.element)) ? [removeOf(e)] : [];
          return only.size === 0 ? [removeOf(e)] : [];
        });
      });
      if (applied === 0 && o.exitCode) process.exitCode = EXIT.notFound;
      report(o, key, applied, 'removed');
    });
}

/** `map drop KEY`: remove every entry, page by page (client mapDrop). */
function mapDropCommand(map: Command): void {
  writeFlags(
    mapCommand(
      map,
      'drop',
      'remove every entry of the map KEY, page by page, as rm does under a path (a write concurrent with the drop survives it)',
    ),
  )
    .option(
      '--r <r>',
      'replicas whose replies are merged on each page read (1..N; 0 or unset: a majority of N)',
      quorum,
    )
    .argument('<key>')
    .option('--exit-code', `exit with ${EXIT.notFound} when the map had no entries`)
    .action(async (key: string, o: MapOpts & { exitCode?: boolean }) => {
      const { removed } = await withClient(o, (c) => c.mapDrop(key, { bucket: o.bucket, r: o.r, w: o.w }));
      if (removed === 0 && o.exitCode) process.exitCode = EXIT.notFound;
      report(o, key, removed, 'removed');
    });
}

/** `map get KEY`: every live entry, one a line (or the whole map as JSON). */
function mapGetCommand(map: Command): void {
  mapCommand(map, 'get', 'every live entry of the map KEY, one a line: PATH, type, value (read page by page)')
    .option('--r <r>', 'replicas whose replies are merged (1..N; 0 or unset: a majority of N)', quorum)
    .argument('<key>')
    .option('--exit-code', `exit with ${EXIT.notFound} when the map has no entries`)
    .action(async (key: string, o: MapOpts & { exitCode?: boolean }) => {
      const entries = await withClient(o, (c) => entriesOf(c, key, o));
      if (entries.length === 0 && o.exitCode) process.exitCode = EXIT.notFound;
      if (o.json) {
        const { assemble } = await import('../../client/maps.js');
        return console.log(JSON.stringify(valueJson(assemble(entries))));
      }
      for (const e of entries) console.log(entryLine(e));
    });
}

/** An entry as `map get` prints it: PATH, type and value, tab-separated. */
function entryLine(e: MapEntry): string {
  const value =
    e.kind === 'register'
      ? showValue(e.value)
      : e.kind === 'flag'
        ? 'on'
        : e.kind === 'counter'
          ? String(e.value)
          : showValue(e.element);
  return `${dotted(e)}\t${e.kind === 'element' ? 'set' : e.kind}\t${value}`;
}
