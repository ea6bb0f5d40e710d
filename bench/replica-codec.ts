/**
 * npm run bench:codec — the replica stream's hand-written codec (src/transport/replica-codec.ts)
 * against protobufjs through proto-loader (what every other ringkv message uses), on
 * the same batches: 64 calls (a put's merges: 16-byte key, a 180-byte record) and their
 * 64 replies, encoded and decoded. Prints batches/s each way and the ratio.
 *
 *   npm run bench:codec [-- --seconds 2]
 */
import { protos } from '../src/transport/protos.js';
import {
  decodeCalls,
  decodeReplies,
  encodeCalls,
  encodeReplies,
  type WireCall,
  type WireReply,
} from '../src/transport/replica-codec.js';
import { table } from './lib.js';

const args = process.argv.slice(2);
const seconds = Number(args[args.indexOf('--seconds') + 1] ?? NaN) || 2;
const BATCH = 64;

const key = (i: number): Buffer => Buffer.from(`k${String(i).padStart(15, '0')}`);
const record = Buffer.alloc(180, 7);
const deadline = Date.now() + 5000;
const calls: WireCall[] = Array.from({ length: BATCH }, (_, i) => ({
  id: i + 1,
  deadline,
  op: 'merge',
  key: key(i),
  record,
  hintFor: '',
}));
const replies: WireReply[] = Array.from({ length: BATCH }, (_, i) => ({ id: i + 1, op: 'merge', changed: true }));
// The same batches as proto-loader objects.
const callObjects = {
  calls: calls.map((c) => ({
    id: c.id,
    deadlineMs: c.deadline,
    merge: { key: (c as { key: Buffer }).key, record, hintFor: '' },
  })),
};
const replyObjects = { replies: replies.map((r) => ({ id: r.id, merge: { changed: true } })) };
type Codec = { serialize(o: object): Buffer; deserialize(b: Buffer): object };
const CallsType = protos().definition['ringkv.internal.v1.ReplicaCalls'] as unknown as Codec;
const RepliesType = protos().definition['ringkv.internal.v1.ReplicaReplies'] as unknown as Codec;

function rate(fn: () => void): number {
  for (let i = 0; i < 2000; i++) fn(); // warm the JIT
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  while (performance.now() < end && n < 50_000_000) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
  }
  return n / ((performance.now() - start) / 1000);
}

const encodedCalls = encodeCalls(calls),
  encodedReplies = encodeReplies(replies);
const rows = [['', 'hand-written batches/s', 'protobufjs batches/s', 'ratio']];
const row = (name: string, ours: number, theirs: number): void =>
  void rows.push([
    name,
    Math.round(ours).toLocaleString('en-US'),
    Math.round(theirs).toLocaleString('en-US'),
    (ours / theirs).toFixed(1),
  ]);
row(
  `encode ${BATCH} calls`,
  rate(() => encodeCalls(calls)),
  rate(() => CallsType.serialize(callObjects)),
);
row(
  `decode ${BATCH} calls`,
  rate(() => decodeCalls(encodedCalls)),
  rate(() => CallsType.deserialize(encodedCalls)),
);
row(
  `encode ${BATCH} replies`,
  rate(() => encodeReplies(replies)),
  rate(() => RepliesType.serialize(replyObjects)),
);
row(
  `decode ${BATCH} replies`,
  rate(() => decodeReplies(encodedReplies)),
  rate(() => RepliesType.deserialize(encodedReplies)),
);
console.log(`bench:codec — replica stream batches, ${seconds} s per figure (node ${process.version})\n`);
console.log(table(rows));
