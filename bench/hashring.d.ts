// The parts of the npm package `hashring` (no bundled types) that bench/ring.ts uses.
declare module 'hashring' {
  export default class HashRing {
    constructor(
      servers: string | string[] | Record<string, unknown>,
      algorithm?: string,
      options?: Record<string, unknown>,
    );
    get(key: string): string;
    range(key: string, size?: number, unique?: boolean): string[];
  }
}
