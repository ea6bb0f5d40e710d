/**
 * `ringkv node`'s flags, derived from the table of settings (src/node/settings.ts): one
 * per setting, named as the setting, with no default of its own (so the environment and
 * the config file can set what the command line does not), and a help line that names
 * the environment variable and the default.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { nodeCommand, settingHelp } from '../../../src/cli/commands/node-commands.js';
import { resolveConfig } from '../../../src/node/config.js';
import { ENV_NAMES, SETTING_NAMES, flagOf } from '../../../src/node/settings.js';

function nodeProgram(): { program: Command; node: Command; ran: Record<string, unknown>[] } {
  const program = new Command().exitOverride();
  nodeCommand(program);
  const node = program.commands.find((c) => c.name() === 'node')!;
  const ran: Record<string, unknown>[] = [];
  // The real action starts a node; record what it would have been given instead.
  node.action((opts: Record<string, unknown>) => void ran.push(opts));
  return { program, node, ran };
}

describe('ringkv node', () => {
  it('has --config and one flag per setting, in the table order, each setting the name a config file uses', () => {
    const { node } = nodeProgram();
    expect(node.options.map((o) => o.long)).toEqual(['--config', ...SETTING_NAMES.map(flagOf)]);
    for (const o of node.options.slice(1)) {
      expect(SETTING_NAMES).toContain(o.attributeName());
      expect(o.required, o.long).toBe(true);
      expect(o.defaultValue, o.long).toBeUndefined();
      expect(o.description, o.long).toContain(ENV_NAMES[o.attributeName() as (typeof SETTING_NAMES)[number]]);
    }
    expect(node.options.find((o) => o.long === '--fault-injection')!.flags).toBe('--fault-injection <on|off>');
  });

  it("says each flag's environment variable and default", () => {
    expect(settingHelp('listen')).toBe('address the gRPC server binds (RINGKV_LISTEN; default 127.0.0.1:7001)');
    expect(settingHelp('hintBytesPerSecond')).toBe(
      'hinted handoff throttle (RINGKV_HINT_BYTES_PER_SECOND; default 1048576)',
    );
    expect(settingHelp('zone')).toBe('availability zone (RINGKV_ZONE)');
    expect(settingHelp('seeds')).toBe('comma-separated host:port of seed nodes (RINGKV_SEEDS)');
    expect(settingHelp('http')).toBe(
      'serve Prometheus /metrics and the status page here; off = none (RINGKV_HTTP; default off)',
    );
    expect(settingHelp('id')).toBe('node id (RINGKV_ID); default: the one kept in the data dir, or a new random one');
  });

  it('passes only the flags given, as text, and resolveConfig takes them over the environment', async () => {
    const { program, ran } = nodeProgram();
    await program.parseAsync(['node', '--max-calls-per-connection', '7', '--tls-ca', 'ca.pem', '--config', 'c.json'], {
      from: 'user',
    });
    expect(ran).toEqual([{ maxCallsPerConnection: '7', tlsCa: 'ca.pem', config: 'c.json' }]);
    const { config: _, ...flags } = ran[0]!;
    const c = resolveConfig(flags, {
      RINGKV_MAX_CALLS_PER_CONNECTION: '9',
      RINGKV_TLS_CERT: 'n1.pem',
      RINGKV_TLS_KEY: 'n1-key.pem',
      RINGKV_TOKENS: '8',
    });
    expect(c).toMatchObject({ maxCallsPerConnection: 7, tlsCa: 'ca.pem', tlsCert: 'n1.pem', tokens: 8 });
  });
});
