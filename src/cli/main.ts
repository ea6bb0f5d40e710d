#!/usr/bin/env node
/**
 * The `ringkv` command. Each subcommand parses its flags and calls into the library;
 * the logic lives in src/ (DESIGN.md: the CLI holds nothing a library user would need).
 */

import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { demo } from './demo.js';

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

const program = new Command()
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
  .action((keys: string[], opts: { nodes: number; zones: number; replicas: number }) => {
    console.log(demo({ nodes: opts.nodes, zones: opts.zones, n: opts.replicas, keys }));
  });

program.parseAsync().catch((err: unknown) => {
  console.error(`ringkv: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
