#!/usr/bin/env node
/**
 * The `ringkv` command: assembles the program from the commands of src/cli/commands/, in
 * the order `ringkv --help` lists them, gives every command that calls a node the
 * credential flags, and turns a failure into its message and exit code. Each command
 * parses its flags and calls into the library; the logic lives in src/
 * (docs/architecture.md: the CLI holds nothing a library user would need).
 *
 * Loaded with every command, as are the command files, so all of them import only what
 * defining the commands needs: no gRPC, no LevelDB, no logger. Each action imports what
 * it runs (a get loads the client, not the node; test/integration/cli-imports.test.ts).
 */

import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { getManyCommand, putManyCommand } from './commands/batch-commands.js';
import { bucketCommand } from './commands/bucket-commands.js';
import { certsCommand } from './commands/certs-commands.js';
import { endpointsCommand, ringCommand, statusCommand, transfersCommand } from './commands/cluster-commands.js';
import { counterCommand, setCommand } from './commands/datatype-commands.js';
import { mapCommands } from './commands/map-commands.js';
import { casCommands } from './commands/cas-commands.js';
import { demoCommand } from './commands/demo-commands.js';
import { delCommand, getCommand, putCommand } from './commands/kv-commands.js';
import { localCommand } from './commands/local-commands.js';
import { cleanupCommand, repairCommand } from './commands/maintenance-commands.js';
import { nodeCommand } from './commands/node-commands.js';
import {
  clearCommand,
  commitCommand,
  decommissionCommand,
  planCommand,
  removenodeCommand,
} from './commands/topology-commands.js';
import { CliError, EXIT } from './exit.js';
import { registerHealth } from './health-check.js';
import { DEFAULT_NODE } from './arguments.js';
import { setCredentials, withCredentials } from './credential-flags.js';
import { dropIpServernameWarning } from './warnings.js';

dropIpServernameWarning();

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command()
  .enablePositionalOptions()
  .name('ringkv')
  .description('ringkv: a Dynamo-style replicated key-value store')
  .version(pkg.version);

demoCommand(program);
nodeCommand(program);
certsCommand(program);
localCommand(program);
statusCommand(program);
ringCommand(program);
putCommand(program);
getCommand(program);
delCommand(program);
getManyCommand(program);
putManyCommand(program);
counterCommand(program);
setCommand(program);
mapCommands(program);
casCommands(program);
endpointsCommand(program);
bucketCommand(program);
decommissionCommand(program);
removenodeCommand(program);
cleanupCommand(program);
repairCommand(program);
transfersCommand(program);
planCommand(program);
commitCommand(program);
clearCommand(program);
registerHealth(program, DEFAULT_NODE);

// Every command that calls a node (it has --node) takes the credential flags.
const callsNode = (cmd: Command): boolean => cmd.options.some((o) => o.long === '--node');
for (const cmd of program.commands.flatMap((c) => [c, ...c.commands])) if (callsNode(cmd)) withCredentials(cmd);
program.hook('preAction', (_, action) => {
  if (callsNode(action)) setCredentials(action.opts());
});

program.parseAsync().catch(async (err: unknown) => {
  const { describeFailure } = await import('./failures.js');
  console.error(`ringkv: ${describeFailure(err)}`);
  process.exit(err instanceof CliError ? err.exitCode : EXIT.error);
});
