/**
 * A node's configuration: command-line flags over environment variables over a JSON
 * config file over defaults. Each value is checked once, as its entry in settings.ts
 * says, with a message that names the setting, where it came from and what is accepted;
 * then the rules that tie settings together (TLS needs all three files, an advertised
 * address is never a wildcard, ...).
 *
 * Owns: where a setting comes from, and the rules across settings. Must not: start
 * anything, or describe one setting (settings.ts does).
 */

import { readFileSync } from 'node:fs';
import {
  ConfigError,
  DEFAULT_CONFIG,
  ENV_NAMES,
  SETTINGS,
  SETTING_NAMES,
  checkSetting,
  flagOf,
  type NodeConfig,
  type SettingName,
} from './settings.js';

export { ConfigError, DEFAULT_CONFIG, ENV_NAMES, type NodeConfig } from './settings.js';

type Raw = Partial<Record<SettingName, unknown>>;

/**
 * Resolve the configuration. `flags` are what the command line set (undefined: not set);
 * `env` is usually process.env; `configFile` a JSON file of the same settings.
 */
export function resolveConfig(flags: Raw, env: NodeJS.ProcessEnv, configFile?: string): NodeConfig {
  const file: Raw = configFile === undefined ? {} : readConfigFile(configFile);
  const out: Record<string, unknown> = {};
  const sources: Partial<Record<SettingName, string>> = {};
  for (const key of SETTING_NAMES) {
    const envValue = env[ENV_NAMES[key]];
    const [value, from] =
      flags[key] !== undefined
        ? [flags[key], flagOf(key)]
        : envValue !== undefined && envValue !== ''
          ? [envValue, ENV_NAMES[key]]
          : file[key] !== undefined
            ? [file[key], `${key} in ${configFile}`]
            : [DEFAULT_CONFIG[key], 'default'];
    out[key] = from === 'default' ? value : checkSetting(key, value, from);
    sources[key] = from;
  }
  out.advertise = advertised(out.listen as string, out.advertise as string | undefined, sources);
  const tls = (['tlsCert', 'tlsKey', 'tlsCa'] as const).filter((k) => out[k] !== undefined);
  if (tls.length > 0 && tls.length < 3)
    throw new ConfigError(
      `TLS needs all three of --tls-cert, --tls-key and --tls-ca (or ${ENV_NAMES.tlsCert}, ${ENV_NAMES.tlsKey}, ${ENV_NAMES.tlsCa}); only ${tls.map(flagOf).join(' and ')} given`,
    );
  if (out.clientAuth === 'cert' && tls.length === 0)
    throw new ConfigError(
      `${sources.clientAuth} cert needs TLS: give --tls-cert, --tls-key and --tls-ca, or leave client auth at none`,
    );
  if (out.readAuth === 'credential' && tls.length === 0 && out.adminTokenFile === undefined)
    throw new ConfigError(
      `${sources.readAuth} credential needs a credential to check: TLS (--tls-cert, --tls-key, --tls-ca) or --admin-token-file`,
    );
  if (out.readAuth === 'credential' && out.http !== undefined && out.adminTokenFile === undefined)
    throw new ConfigError(
      `${sources.readAuth} credential with --http needs --admin-token-file: the HTTP port checks the admin token (Authorization: Bearer), not certificates; give one, or serve no HTTP port`,
    );
  return out as unknown as NodeConfig;
}

/** 0.0.0.0 and IPv6's :: (in any spelling): bind addresses, never addresses to reach. */
function isWildcard(address: string): boolean {
  const host = address.slice(0, address.lastIndexOf(':'));
  return host === '' || host === '0.0.0.0' || /^\[[0:.]*\]$/.test(host);
}

/**
 * The address the node gossips to peers and clients: --advertise, else the listen address.
 * Peers dial it, so a wildcard is refused rather than replaced by a guess (127.0.0.1 works
 * on one machine and nowhere else).
 */
function advertised(
  listen: string,
  advertise: string | undefined,
  sources: Partial<Record<SettingName, string>>,
): string | undefined {
  const said = (key: 'listen' | 'advertise', value: string): string => {
    const from = sources[key] ?? 'default';
    return from.startsWith('--') || from.startsWith('RINGKV_') ? `${from} ${value}` : `${key} ${value} (${from})`;
  };
  if (advertise !== undefined) {
    if (isWildcard(advertise))
      throw new ConfigError(
        `${said('advertise', advertise)} is a wildcard, not an address peers can reach: give the host:port other nodes and clients connect to`,
      );
    return advertise;
  }
  if (isWildcard(listen)) {
    throw new ConfigError(
      `${said('listen', listen)} binds every interface, so peers need to be told where to reach this node: pass --advertise host:port (or ${ENV_NAMES.advertise}), the address other nodes and clients connect to`,
    );
  }
  // Port 0: the port is known once bound; the node advertises listen's host with it.
  return /:0$/.test(listen) ? undefined : listen;
}

function readConfigFile(path: string): Raw {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a JSON object like {"listen": "127.0.0.1:7001"}`);
  }
  for (const key of Object.keys(parsed)) {
    if (!Object.hasOwn(SETTINGS, key)) {
      throw new ConfigError(`config file ${path}: unknown setting "${key}"; known: ${SETTING_NAMES.join(', ')}`);
    }
  }
  return parsed as Raw;
}
