/**
 * Ask many nodes the same thing at once: the transfers `ringkv transfers` and the status
 * page show are gathered from every member this way (by the CLI through the Admin
 * service, by a node through its peers' Control service).
 *
 * Owns: the fan-out, the order of the answers, and who did not answer. Must not: know
 * what is asked (the caller's `ask` does).
 */

/**
 * Ask every node in `nodes` in parallel and collect what answered, sorted by node, and
 * who did not (`ringkv transfers` and the status page gather transfers this way).
 */
export async function gather<T>(
  nodes: readonly string[],
  ask: (node: string) => Promise<T>,
): Promise<{ replies: T[]; unreachable: string[] }> {
  const replies: { node: string; reply: T }[] = [];
  const unreachable: string[] = [];
  await Promise.all(
    nodes.map(async (node) => {
      try {
        replies.push({ node, reply: await ask(node) });
      } catch {
        unreachable.push(node);
      }
    }),
  );
  replies.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  unreachable.sort();
  return { replies: replies.map((r) => r.reply), unreachable };
}
