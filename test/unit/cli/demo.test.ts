import { describe, expect, it } from 'vitest';
import { demo } from '../../../src/cli/ring-demo.js';

describe('ringkv demo', () => {
  it('prints every node with its shares, the keys’ preference lists and what a join moves', () => {
    const out = demo({ nodes: 5, zones: 3, n: 3, keys: ['user:1', 'cart:9'] });
    expect(out).toMatch(/5 nodes in 3 zones, 64 tokens per node, N = 3/);
    for (const id of ['n1', 'n2', 'n3', 'n4', 'n5'])
      expect(out).toMatch(new RegExp(`^${id}\\s+[abc]\\s+64\\s+20\\.0%`, 'm'));
    // every key's list names 3 nodes in 3 distinct zones
    for (const key of ['user:1', 'cart:9']) {
      const line = out.split('\n').find((l) => l.startsWith(key))!;
      const zones = [...line.matchAll(/\((\w)\)/g)].map((m) => m[1]);
      expect(new Set(zones).size).toBe(3);
    }
    expect(out).toMatch(/adding n6 \(zone c\) moves \d+\.\d% of the keys to it \(ideal 16\.7%\)/);
  });

  it('caps N at the number of nodes', () => {
    expect(demo({ nodes: 2, zones: 2, n: 3, keys: ['k'] })).toMatch(/N = 2/);
  });
});
