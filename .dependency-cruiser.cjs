/**
 * The layers of docs/architecture.md as rules, checked by `npm run lint` (and so by CI):
 * no import circles, and each directory of src/ imports only the layers below it. No
 * violation is known or allowed: a new one fails the lint, with the rule's comment.
 * Around the product, over testkit/, test/ and bench/ too: the test kit imports src/ and
 * itself only, a test src/, testkit/ and test/, a benchmark src/, testkit/ and bench/.
 */
/** `from` may import itself, src/common (what both sides of the wire use) and `may` (directories of src/, or a file path under src/). */
function layer(from, may, comment) {
  const allowed = [from, 'common', ...may].map((p) =>
    p.endsWith('.ts') ? `^src/${p.replace(/\./g, '\\.')}$` : `^src/${p}/`,
  );
  return {
    name: `layer-${from}`,
    severity: 'error',
    comment,
    from: { path: `^src/${from}/` },
    to: { path: '^src/', pathNot: allowed },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'an import circle: one of its modules should not know the other',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-tests',
      severity: 'error',
      comment: 'the product does not import its tests or benchmarks',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'src-not-testkit',
      severity: 'error',
      comment: 'the product does not import the test kit',
      from: { path: '^src/' },
      to: { path: '^testkit/' },
    },
    {
      name: 'testkit-only-src',
      severity: 'error',
      comment: 'the test kit drives the product: it imports src/ and itself, never a test or a benchmark',
      from: { path: '^testkit/' },
      to: { dependencyTypes: ['local'], pathNot: '^(src|testkit)/' },
    },
    {
      name: 'bench-not-test',
      severity: 'error',
      comment: 'a benchmark imports src/, testkit/ and bench/; what it shares with a test belongs in testkit/',
      from: { path: '^bench/' },
      to: { dependencyTypes: ['local'], pathNot: '^(src|testkit|bench)/' },
    },
    {
      name: 'test-not-bench',
      severity: 'error',
      comment: 'a test imports src/, testkit/ and test/; what it shares with a benchmark belongs in testkit/',
      from: { path: '^test/' },
      to: { dependencyTypes: ['local'], pathNot: '^(src|testkit|test)/' },
    },
    layer('common', [], 'shapes and tools both sides of the wire use: they import nothing'),
    layer('ring', [], 'the ring is the bottom layer: pure, it imports no other part'),
    layer(
      'buckets',
      [],
      'buckets (names, properties, stored keys, the table) are pure data: they import no other part',
    ),
    layer(
      'kinds',
      [],
      "kinds of record (their formats, rules and joins) are pure: they import no other part; the store looks a record's kind up in them",
    ),
    layer('membership', ['ring'], 'membership knows the ring, nothing above it'),
    layer('storage', ['buckets', 'kinds', 'ring'], 'the store knows tokens, not the network or membership'),
    layer(
      'replication',
      ['buckets', 'kinds', 'ring', 'storage'],
      'the coordinator knows the store and the ring, not the wire or the node',
    ),
    layer(
      'hints',
      ['buckets', 'kinds', 'ring', 'storage', 'replication', 'membership'],
      'hint delivery knows the store and who is up, not the wire or the node',
    ),
    layer(
      'streaming',
      ['buckets', 'kinds', 'ring', 'storage', 'replication', 'membership', 'cluster/transfer-plan.ts'],
      'range pulls know what they move (and from whom, the transfer plan says), not the wire or the node',
    ),
    layer(
      'repair',
      ['buckets', 'kinds', 'ring', 'storage', 'replication', 'membership'],
      'anti-entropy knows trees and records, not the wire or the node',
    ),
    layer(
      'cluster',
      ['buckets', 'ring', 'membership'],
      'topology changes decided: pure functions of the view and what the node persisted; the node executes them',
    ),
    layer(
      'security',
      [],
      'TLS files, roles, tokens and who may call what: it knows no other part (the node hands it its settings)',
    ),
    layer(
      'transport',
      ['buckets', 'kinds', 'ring', 'membership', 'storage', 'replication', 'hints', 'streaming', 'repair', 'security'],
      'the wire maps messages for the parts below; it does not know the node, the client or the CLI',
    ),
    layer('client', ['buckets', 'ring', 'transport', 'security', 'common'], 'the client speaks the public API only'),
    layer(
      'node',
      [
        'buckets',
        'kinds',
        'ring',
        'membership',
        'storage',
        'replication',
        'hints',
        'streaming',
        'repair',
        'cluster',
        'security',
        'transport',
      ],
      'the node wires the parts; it does not steer its peers through the operator client',
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs'],
    },
  },
};
