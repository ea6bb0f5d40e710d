/**
 * `ringkv node`: a flag for every setting of node/settings.ts (its placeholder, and its
 * help line with its environment variable and default), and --config; the action runs
 * the node (run-node.ts).
 *
 * Owns: turning the table of settings into flags. Must not: check values (config.ts does,
 * with the flags, the environment and the config file together), or load the node at load.
 */
import type { Command } from 'commander';
import { ENV_NAMES, SETTINGS, SETTING_NAMES, flagOf, hasDefault, type SettingName } from '../../node/settings.js';

/** The help of `name`'s flag: "address the gRPC server binds (RINGKV_LISTEN; default 127.0.0.1:7001)". */
export function settingHelp(name: SettingName): string {
  const { help, default: value } = SETTINGS[name];
  const env = ENV_NAMES[name];
  if (typeof help === 'function') return help(env);
  return hasDefault(name) ? `${help} (${env}; default ${String(value)})` : `${help} (${env})`;
}

export function nodeCommand(program: Command): void {
  const cmd = program
    .command('node')
    .description('run one ringkv node (every flag can also come from --config FILE or an environment variable)')
    .option('--config <file>', 'JSON file of settings (camelCase names, e.g. {"listen": "127.0.0.1:7001"})');
  // No default and no parser: a flag not given is undefined, so the environment or the config file may set it.
  for (const name of SETTING_NAMES) cmd.option(`${flagOf(name)} <${SETTINGS[name].arg}>`, settingHelp(name));
  cmd.action(async (opts: Record<string, unknown>) => {
    const { config, ...flags } = opts;
    const { runNode } = await import('../run-node.js');
    await runNode(flags, config as string | undefined);
  });
}
