/**
 * What a setting of the node may accept, as data with its check: a number in bounds, one of
 * a few words, text matching a pattern, a host:port, a list of them; and `setting`, the
 * row of the table that names one. The table itself is settings.ts.
 *
 * Owns: the kinds of value, their checks and their messages ("expected host:port, like
 * ..."). Must not: name a setting, or read the environment or files (config.ts does).
 */

import { isAddress } from '../membership/endpoint.js';

/** A setting that is refused: the message names it, where it came from and what is accepted. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Refuse the value being checked, saying what was expected ("expected host:port, like ..."). */
type Fail = (expected: string) => never;

/** What a setting accepts, as data (for messages, docs and tests), with the check that takes a raw value. */
export type Accepts<T> = (
  | {
      readonly kind: 'number';
      readonly min: number;
      readonly max: number;
      readonly integer: boolean;
      readonly orZero?: { readonly from: number; readonly expected: string };
    }
  | { readonly kind: 'oneOf'; readonly values: readonly string[] }
  | { readonly kind: 'text'; readonly pattern: RegExp; readonly expected: string }
  | { readonly kind: 'address'; readonly portZero: boolean; readonly off: boolean }
  | { readonly kind: 'addresses' }
) & {
  /** The value a flag, an environment variable (always a string) or the config file gave, checked. */
  readonly parse: (value: unknown, fail: Fail) => T;
};

/** One row of the table of settings (settings.ts). */
export interface Setting<T> {
  readonly accepts: Accepts<T>;
  readonly default: T;
  /** The flag's placeholder: `--listen <host:port>`. */
  readonly arg: string;
  /**
   * `ringkv node --help`: the text before "(RINGKV_X; default D)" (the default shown when
   * there is one), or the whole line, given the variable's name, for a line shaped otherwise.
   */
  readonly help: string | ((env: string) => string);
  /** Without a default value (undefined, '' or none): what not setting it means, as docs/node.md says it. */
  readonly unset?: string;
}

/** The value as a string: a config file may give a number for a text setting. */
function str(value: unknown, fail: Fail): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fail('expected a string');
}

/** A number from `min` to `max`; `orZero`: 0 (off), or `from` and above. */
export function numberFrom(
  min: number,
  max: number,
  integer: boolean,
  orZero?: { from: number; expected: string },
): Accepts<number> {
  return {
    kind: 'number',
    min,
    max,
    integer,
    ...(orZero !== undefined ? { orZero } : {}),
    parse(value, fail) {
      const n = typeof value === 'number' ? value : Number(str(value, fail));
      if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
        fail(`expected ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`);
      }
      return orZero === undefined || n === 0 || n >= orZero.from ? n : fail(orZero.expected);
    },
  };
}

/** A whole number from `min` to `max`; `orZero` as numberFrom. */
export const whole = (min: number, max: number, orZero?: { from: number; expected: string }): Accepts<number> =>
  numberFrom(min, max, true, orZero);

/** One of `values`, spelled exactly. */
export function oneOf<const V extends readonly string[]>(...values: V): Accepts<V[number]> {
  const expected =
    values.length === 2 ? `expected '${values[0]}' or '${values[1]}'` : `expected one of ${values.join(', ')}`;
  return {
    kind: 'oneOf',
    values,
    parse(value, fail) {
      const v = str(value, fail);
      return values.includes(v) ? v : fail(expected);
    },
  };
}

/** Text that `pattern` matches; else `expected` is the message. */
export function text(pattern: RegExp, expected: string): Accepts<string> {
  return {
    kind: 'text',
    pattern,
    expected,
    parse(value, fail) {
      const v = str(value, fail);
      return pattern.test(v) ? v : fail(expected);
    },
  };
}

/** `v` when it is host:port (port 0 too with `portZero`); else the message that says so. */
function checkAddress(v: string, portZero: boolean, fail: Fail): string {
  if (isAddress(v) || (portZero && /:0$/.test(v) && isAddress(`${v.slice(0, -2)}:1`))) return v;
  return fail('expected host:port, like 127.0.0.1:7001');
}

/** host:port; `portZero`: port 0 (any free port) too; `off`: 'off' spelled out is no address (an env var or config file may need to say so). */
export function address(o: { portZero: boolean; off?: false }): Accepts<string>;
export function address(o: { portZero: boolean; off: true }): Accepts<string | undefined>;
export function address({ portZero, off = false }: { portZero: boolean; off?: boolean }): Accepts<string | undefined> {
  return {
    kind: 'address',
    portZero,
    off,
    parse(value, fail) {
      const v = str(value, fail);
      return off && v === 'off' ? undefined : checkAddress(v, portZero, fail);
    },
  };
}

/** Comma-separated host:port (or a JSON array of them); empty items are skipped. */
export const addresses: Accepts<readonly string[]> = {
  kind: 'addresses',
  parse(value, fail) {
    const list = Array.isArray(value) ? value.map(String) : str(value, fail).split(',');
    return list
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
      .map((s) => checkAddress(s, false, fail));
  },
};

type Row<T> = Omit<Setting<T>, 'default'>;

/** A row of the table; a default of undefined makes the setting `T | undefined`. */
export function setting<T>(s: Row<T> & { default: NoInfer<T> }): Setting<T>;
export function setting<T>(s: Row<T> & { default: undefined }): Setting<T | undefined>;
export function setting<T>(s: Setting<T>): Setting<T> {
  return s;
}
