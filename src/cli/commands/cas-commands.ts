/**
 * The compare-and-set commands (docs/reads-and-writes.md#compare-and-set) on a bucket of
 * type consistent: `ringkv cas put KEY VALUE [--context C]` (without a context: only if
 * the key is absent), `ringkv cas del KEY --context C` and `ringkv cas get KEY`, each one
 * call to one node with a deadline. Their exit codes tell a script the outcome: 0 applied
 * (or read), EXIT.notApplied with the current value printed, EXIT.casUnknown when it may or
 * may not have applied.
 *
 * Owns: their flags, what they print and their exit codes. Must not: import at load what
 * only the actions need.
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { PutIfResult } from '../../client/kv.js';
import { withClient } from '../calls.js';
import { CliError, EXIT } from '../exit.js';
import { showValue } from '../format.js';
import { ANY_NODE_HELP, DEFAULT_NODES, nodeAddresses, positiveInt } from '../arguments.js';
import { REQUEST_ID_HELP, context, requestId } from './kv-commands.js';

interface CasOpts {
  node: string;
  bucket: string;
  deadlineMs: number;
  json?: boolean;
  context?: Buffer;
  requestId?: Buffer;
}

function casCommand(parent: Command, name: string, description: string): Command {
  return parent
    .command(name)
    .description(description)
    .requiredOption('--bucket <name>', 'a bucket of type consistent (ringkv bucket create NAME --type consistent)')
    .option('--node <host:port>', ANY_NODE_HELP, nodeAddresses, DEFAULT_NODES)
    .option('--deadline-ms <ms>', 'deadline of the request', positiveInt(600_000), 5000)
    .option('--json', 'print JSON');
}

/**
 * Run a compare-and-set under `o.requestId` (else a new UUID, so that it can be named for a
 * retry); an error that does not prove it unapplied exits EXIT.casUnknown, saying how to
 * learn the outcome.
 */
async function conditional(
  key: string,
  o: CasOpts,
  write: (c: import('../../client/kv.js').Client, requestId: Buffer) => Promise<PutIfResult>,
): Promise<void> {
  const id = o.requestId ?? Buffer.from(randomUUID(), 'utf8');
  const r = await withClient(o, async (c) => {
    try {
      return await write(c, id);
    } catch (e) {
      const [{ casNotApplied }, { describeFailure }] = await Promise.all([
        import('../../client/kv.js'),
        import('../failures.js'),
      ]);
      if (casNotApplied(e)) throw e;
      const why = describeFailure(e, { address: o.node, deadlineMs: o.deadlineMs, deadlineFlag: '--deadline-ms' });
      throw new CliError(
        `${why}\nthe write may or may not have applied: \`ringkv cas get ${key} --bucket ${o.bucket}\` shows the key now; ` +
          `sent again with --request-id ${id.toString('utf8')}, it answers applied if it applied and at most one write followed it (usually up to 8: docs/reads-and-writes.md#compare-and-set)`,
        EXIT.casUnknown,
      );
    }
  });
  const ctx = r.context.toString('base64');
  if (!r.applied) process.exitCode = EXIT.notApplied;
  if (o.json)
    console.log(
      JSON.stringify({
        applied: r.applied,
        context: ctx,
        ...(r.applied
          ? {}
          : {
              found: r.found,
              ...(r.value ? { value: showValue(r.value), valueBase64: r.value.toString('base64') } : {}),
            }),
      }),
    );
  else if (r.applied) console.log(`applied\ncontext: ${ctx}`);
  else
    console.log(
      `not applied: ${r.found ? `the key holds ${showValue(r.value!)}` : 'the key is absent'}\ncontext: ${ctx}`,
    );
}

export function casCommands(program: Command): void {
  const cas = program
    .command('cas')
    .description('compare-and-set on a bucket of type consistent: put, del, get (linearizable per key)');
  casCommand(
    cas,
    'put',
    'write KEY = VALUE only if the key is still at the version --context names (without it: only if absent)',
  )
    .argument('<key>')
    .argument('<value>')
    .option(
      '--context <base64>',
      'context printed by `ringkv cas get` or a cas put; unset: the key must be absent',
      context,
    )
    .option('--request-id <id>', REQUEST_ID_HELP, requestId)
    .addHelpText(
      'after',
      `\nExit codes: 0 applied; ${EXIT.notApplied} not applied (the key's value and context are printed); ${EXIT.casUnknown} unknown (cas get shows the key); ${EXIT.error} refused, nothing written.`,
    )
    .action((key: string, value: string, o: CasOpts) =>
      conditional(key, o, (c, requestId) => c.putIf(key, value, { bucket: o.bucket, context: o.context, requestId })),
    );
  casCommand(cas, 'del', 'delete KEY only if it is still at the version --context names')
    .argument('<key>')
    .requiredOption('--context <base64>', 'context printed by `ringkv cas get` or a cas put', context)
    .option('--request-id <id>', REQUEST_ID_HELP, requestId)
    .addHelpText('after', `\nExit codes: as cas put's.`)
    .action((key: string, o: CasOpts) =>
      conditional(key, o, (c, requestId) => c.deleteIf(key, o.context!, { bucket: o.bucket, requestId })),
    );
  casCommand(cas, 'get', 'read KEY linearizably: its value and the context a cas put or del of it takes')
    .argument('<key>')
    .option('--exit-code', `exit with ${EXIT.notFound} when the key is absent`)
    .action(async (key: string, o: CasOpts & { exitCode?: boolean }) => {
      const r = await withClient(o, (c) => c.get(key, { bucket: o.bucket }));
      const ctx = r.context.toString('base64');
      const value = r.values[0];
      if (value === undefined && o.exitCode) process.exitCode = EXIT.notFound;
      if (o.json)
        console.log(
          JSON.stringify({
            found: r.found,
            ...(value ? { value: showValue(value), valueBase64: value.toString('base64') } : {}),
            context: ctx,
          }),
        );
      else console.log(`${value === undefined ? '(absent)' : showValue(value)}\ncontext: ${ctx}`);
    });
}
