/**
 * A map's entries as a read gives them (docs/data-types.md#maps): the coordinator builds
 * them from the replicas' sub-keys, the KeyValue service sends them, the client receives
 * them. One definition for both sides of the wire.
 *
 * Owns: the shapes. Must not: import anything.
 */

/** The type of a map's field: a register, a flag, a counter, a set of elements, or a nested map. */
export type MapFieldType = 'register' | 'flag' | 'counter' | 'set' | 'map';

/** A field's path in a map, from its top: every field but the last a map; names as bytes. */
export type MapPath = readonly { readonly name: Buffer; readonly type: MapFieldType }[];

/**
 * One live entry of a map: a register's value, an enabled flag, a counter's value, or an
 * element of a set field; each with the context a remove of it needs (a register's clear,
 * a flag's disable, a counter's reset, an element's remove).
 */
export type MapEntry =
  | { readonly kind: 'register'; readonly path: MapPath; readonly value: Buffer; readonly context: Buffer }
  | { readonly kind: 'flag'; readonly path: MapPath; readonly context: Buffer }
  | { readonly kind: 'counter'; readonly path: MapPath; readonly value: bigint; readonly context: Buffer }
  | { readonly kind: 'element'; readonly path: MapPath; readonly element: Buffer; readonly context: Buffer };

/** A page of a map's entries, in the order of their sub-keys (by path). */
export interface MapPage {
  readonly entries: MapEntry[];
  /** Pass as `after` for the next page (an opaque token); undefined when the map is read to its end. */
  readonly next: Buffer | undefined;
}
