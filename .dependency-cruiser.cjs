/**
 * The layers of docs/architecture.md as rules, checked by `npm run lint` (and so by CI):
 * no import circles, and each directory of src/ imports only the layers below it. A
 * violation that exists today and is being taken apart (issue 27) is listed, with the
 * rest of what it knows, in .dependency-cruiser-known-violations.json; anything new fails.
 * Refresh that list only by removing what got fixed:
 *   npx depcruise src --output-type baseline > .dependency-cruiser-known-violations.json
 */
/** `from` may import itself and `may` (directories of src/, or a file path under src/). */
function layer(from, may, comment) {
  const allowed = [from, ...may].map((p) => (p.endsWith('.ts') ? `^src/${p.replace(/\./g, '\\.')}$` : `^src/${p}/`));
  return { name: `layer-${from}`, severity: 'error', comment, from: { path: `^src/${from}/` }, to: { path: '^src/', pathNot: allowed } };
}

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'an import circle: one of its modules should not know the other', from: {}, to: { circular: true } },
    { name: 'src-not-tests', severity: 'error', comment: 'the product does not import its tests or benchmarks', from: { path: '^src/' }, to: { path: '^(test|bench)/' } },
    layer('ring', [], 'the ring is the bottom layer: pure, it imports no other part'),
    layer('membership', ['ring'], 'membership knows the ring, nothing above it'),
    layer('storage', ['ring'], 'the store knows tokens, not the network or membership'),
    layer('replication', ['ring', 'storage'], 'the coordinator knows the store and the ring, not the wire or the node'),
    layer('handoff', ['ring', 'storage', 'replication', 'membership'], 'streaming, hints and repair know what they move, not the wire or the node'),
    layer('cluster', ['ring', 'membership', 'handoff'], 'topology changes decided: pure functions of the view and what the node persisted; the node executes them'),
    layer('transport', ['ring', 'membership', 'storage', 'replication', 'handoff'], 'the wire maps messages for the parts below; it does not know the node, the client or the CLI'),
    layer('client', ['ring', 'transport', 'replication/latency-window.ts'], 'the client speaks the public API only'),
    layer('node', ['ring', 'membership', 'storage', 'replication', 'handoff', 'cluster', 'transport'], 'the node wires the parts; it does not steer its peers through the operator client'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.mjs'] },
  },
};
