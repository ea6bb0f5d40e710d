/**
 * Every record's first byte names its format, and so its kind. This table is where each
 * kind claims its bytes: a new kind takes the next free number here, and nothing else in
 * the store changes to tell its records apart.
 *
 * Owns: the format numbers and the names messages give each kind. Must not: know a
 * kind's layout (its folder does).
 */

/** Versions (a plain key, a set element, a map's field): formats 1 to 3 (versions/). */
export const VERSIONS_FORMATS = [1, 2, 3] as const;
/** A counter: format 4 (counter/). */
export const COUNTER_FORMAT = 4;
/** A compare-and-set register's acceptor: format 5 (kinds/register). */
export const REGISTER_FORMAT = 5;

/** What a record of each format holds, for messages. */
const NAMES: ReadonlyMap<number, string> = new Map([
  ...VERSIONS_FORMATS.map((f) => [f, 'versions'] as const),
  [COUNTER_FORMAT, 'a counter'],
  [REGISTER_FORMAT, 'a compare-and-set register'],
]);

/** What a record of `format` holds, for messages ('a counter'); undefined for an unknown format. */
export const kindName = (format: number): string | undefined => NAMES.get(format);

/** True when `format` is one a record of some kind is written in. */
export const isKnownFormat = (format: number | undefined): boolean => format !== undefined && NAMES.has(format);

/** What a record holds, by its first byte, for messages: 'versions', 'a counter', …; an unknown format says so. */
export function recordKind(bytes: Uint8Array): string {
  return NAMES.get(bytes[0] ?? -1) ?? `an unknown record format ${bytes[0] ?? '(empty)'}`;
}
