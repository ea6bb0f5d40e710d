/**
 * `ringkv demo`: a ring built in memory (ring-demo.ts prints it).
 *
 * Owns: the command's flags. Must not: import at load what only the action needs.
 */
import type { Command } from 'commander';
import { positiveInt } from '../arguments.js';

export function demoCommand(program: Command): void {
  program
    .command('demo')
    .description('build a ring in memory and print ownership, preference lists and what a join moves')
    .option('--nodes <count>', 'number of nodes', positiveInt(1000), 5)
    .option('--zones <count>', 'number of zones the nodes are spread over', positiveInt(26), 3)
    .option('-n, --replicas <n>', 'replicas per key (N)', positiveInt(1000), 3)
    .argument('[keys...]', 'keys to look up', ['user:1', 'user:42', 'user:123456', 'cart:9', 'session:abc'])
    .action(async (keys: string[], opts: { nodes: number; zones: number; replicas: number }) => {
      const { demo } = await import('../ring-demo.js');
      console.log(demo({ nodes: opts.nodes, zones: opts.zones, n: opts.replicas, keys }));
    });
}
