/**
 * Fuzzing every RPC a node serves, from the proto files themselves: for each method, a
 * fast-check arbitrary of request messages built from its message descriptor (random and
 * boundary values in every field, nested messages, repeated fields), of raw bytes, and of
 * well-formed messages with bytes flipped or cut; each sent as raw frames, so that nothing
 * on the client side filters what the node sees.
 */
import * as grpc from '@grpc/grpc-js';
import type * as protoLoader from '@grpc/proto-loader';
import fc from 'fast-check';

export interface FuzzMethod {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  /** The request's full message name; undefined for methods fuzzed with raw bytes only. */
  readonly requestType: string | undefined;
  readonly serialize: (value: unknown) => Buffer;
}

interface FieldDescriptor {
  readonly name: string;
  readonly label: string;
  readonly type: string;
  readonly typeName: string;
}

/** Every method of every service in `definition`, plus the reflection services (raw bytes only: they bring their own protos). */
export function methodsOf(definition: protoLoader.PackageDefinition): FuzzMethod[] {
  const out: FuzzMethod[] = [];
  for (const [service, entry] of Object.entries(definition)) {
    if ('format' in entry) continue; // a message or enum, not a service
    for (const m of Object.values(entry as Record<string, protoLoader.MethodDefinition<unknown, unknown>>)) {
      const requestType = (m.requestType as unknown as { type: { name: string } }).type.name;
      out.push({
        path: m.path,
        requestStream: m.requestStream,
        responseStream: m.responseStream,
        requestType: resolve(definition, service, requestType),
        serialize: m.requestSerialize as (v: unknown) => Buffer,
      });
    }
  }
  for (const version of ['v1', 'v1alpha'])
    out.push({
      path: `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`,
      requestStream: true,
      responseStream: true,
      requestType: undefined,
      serialize: () => Buffer.alloc(0),
    });
  return out;
}

/** A type name as written in `scope` (a message or service's full name), resolved as protoc does: innermost scope first. */
function resolve(definition: protoLoader.PackageDefinition, scope: string, name: string): string {
  if (name.startsWith('.')) return name.slice(1);
  for (let s = scope; s !== ''; s = s.includes('.') ? s.slice(0, s.lastIndexOf('.')) : '')
    if (`${s}.${name}` in definition) return `${s}.${name}`;
  if (name in definition) return name;
  throw new Error(`no type ${name} seen from ${scope}`);
}

interface EnumDescriptor {
  readonly name: string;
  readonly value: readonly { readonly name: string }[];
}

/** An enum's value names: a top-level enum, or one nested in the message `scope` (proto-loader keeps those inside their message). */
function enumNames(definition: protoLoader.PackageDefinition, scope: string, name: string): string[] {
  const nested = (definition[scope] as { type?: { enumType?: EnumDescriptor[] } } | undefined)?.type?.enumType?.find(
    (e) => e.name === name,
  );
  const e = nested ?? (definition[resolve(definition, scope, name)] as { type: EnumDescriptor }).type;
  return e.value.map((v) => v.name);
}

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Values that have broken parsers before: empty, huge, negative, not-a-number, path-like, NUL. */
export interface Pools {
  /** Strings the node knows (its id, address, cluster name): so that some calls get past the first check. */
  readonly strings: readonly string[];
  /** Keys that hold data: so that some reads and deletes find something. */
  readonly keys: readonly Buffer[];
  /**
   * Values to favour for fields of these (camelCase) names, four times in five: a
   * cluster name or a token that passes the first check, so that calls reach deeper.
   */
  readonly byField?: Readonly<Record<string, fc.Arbitrary<unknown>>>;
}

function scalar(type: string, pools: Pools): fc.Arbitrary<unknown> {
  switch (type) {
    case 'TYPE_BYTES':
      return fc.oneof(
        { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)), weight: 4 },
        { arbitrary: fc.constantFrom(...pools.keys), weight: 2 },
        {
          arbitrary: fc.constantFrom(
            Buffer.alloc(0),
            Buffer.alloc(4097, 7),
            Buffer.alloc(1024 * 1024 + 1, 1),
            Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]),
          ),
          weight: 1,
        },
      );
    case 'TYPE_STRING':
      return fc.oneof(
        { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
        { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 1 },
        { arbitrary: fc.constantFrom(...pools.strings), weight: 3 },
        {
          arbitrary: fc.constantFrom(
            '',
            ' ',
            '\0',
            '-1',
            'NaN',
            '1e309',
            '../../../etc/passwd',
            '127.0.0.1:0',
            '[::1]:1',
            'x'.repeat(70_000),
          ),
          weight: 1,
        },
      );
    case 'TYPE_BOOL':
      return fc.boolean();
    case 'TYPE_UINT32':
    case 'TYPE_FIXED32':
      return fc.oneof(fc.constantFrom(0, 1, 2, 3, 255, 4096, 2 ** 31, 2 ** 32 - 1), fc.nat({ max: 2 ** 32 - 1 }));
    case 'TYPE_INT32':
    case 'TYPE_SINT32':
    case 'TYPE_SFIXED32':
      return fc.oneof(fc.constantFrom(0, -1, 1, -(2 ** 31), 2 ** 31 - 1), fc.integer());
    case 'TYPE_UINT64':
    case 'TYPE_FIXED64':
      return fc.oneof(
        fc.constantFrom(0, 1, 2 ** 32, Number.MAX_SAFE_INTEGER, '18446744073709551615', '9223372036854775808'),
        fc.maxSafeNat(),
      );
    case 'TYPE_INT64':
    case 'TYPE_SINT64':
    case 'TYPE_SFIXED64':
      return fc.oneof(
        fc.constantFrom(
          0,
          -1,
          Number.MIN_SAFE_INTEGER,
          Number.MAX_SAFE_INTEGER,
          '-9223372036854775808',
          '9223372036854775807',
        ),
        fc.maxSafeInteger(),
      );
    case 'TYPE_DOUBLE':
    case 'TYPE_FLOAT':
      return fc.oneof(fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1e308, -1), fc.double());
    default:
      throw new Error(`no arbitrary for ${type}`);
  }
}

/** A random message of type `fullName`, as proto-loader's serializer takes it. */
export function messageArb(
  definition: protoLoader.PackageDefinition,
  fullName: string,
  pools: Pools,
  depth = 0,
): fc.Arbitrary<Record<string, unknown>> {
  const entry = definition[fullName] as { type: { field: FieldDescriptor[] } };
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  const required: string[] = [];
  for (const f of entry.type.field) {
    let value: fc.Arbitrary<unknown>;
    if (f.type === 'TYPE_MESSAGE') {
      if (depth >= 3) continue;
      const nested = resolve(definition, fullName, f.typeName);
      value = fc.constant(null).chain(() => messageArb(definition, nested, pools, depth + 1));
    } else if (f.type === 'TYPE_ENUM') {
      value = fc.oneof(
        fc.constantFrom(...enumNames(definition, fullName, f.typeName)),
        fc.integer({ min: -1, max: 1000 }),
      );
    } else value = scalar(f.type, pools);
    const favoured = pools.byField?.[camel(f.name)];
    if (favoured !== undefined) {
      value = fc.oneof({ arbitrary: favoured, weight: 4 }, { arbitrary: value, weight: 1 });
      required.push(camel(f.name));
    }
    // Long arrays (to reach a batch's limits) only in the outer two levels, where the batches are
    // (a batch's items, its calls): a list inside each of 200 calls (a replica call's 200 element
    // ops, each with megabyte fields) made messages of a hundred megabytes, slow to build and
    // send, and refused whole for their size before any list inside them was read.
    const short = fc.array(value, { maxLength: 4 });
    fields[camel(f.name)] =
      f.label !== 'LABEL_REPEATED'
        ? value
        : depth < 2
          ? fc.oneof(
              { arbitrary: short, weight: 5 },
              { arbitrary: fc.array(value, { minLength: 50, maxLength: 200 }), weight: 1 },
            )
          : short;
  }
  return fc.record(fields, { requiredKeys: required });
}

/** One request's bytes for `m`: a random well-formed message, raw random bytes, or a well-formed one flipped or cut. */
export function requestBytesArb(
  definition: protoLoader.PackageDefinition,
  m: FuzzMethod,
  pools: Pools,
): fc.Arbitrary<Buffer> {
  const raw = fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b));
  if (m.requestType === undefined) return raw;
  const wellFormed = messageArb(definition, m.requestType, pools).map((o) => m.serialize(o));
  const damaged = fc
    .tuple(wellFormed, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean())
    .map(([b, at, byte, cut]) => {
      if (b.length === 0) return Buffer.from([byte]);
      const copy = Buffer.from(b);
      const i = at % copy.length;
      if (cut) return copy.subarray(0, i);
      copy[i] = byte;
      return copy;
    });
  return fc.oneof(
    { arbitrary: wellFormed, weight: 5 },
    { arbitrary: raw, weight: 2 },
    { arbitrary: damaged, weight: 2 },
  );
}

export interface Outcome {
  readonly code: grpc.status;
  readonly details: string;
  readonly replies: number;
}

const identity = (b: Buffer): Buffer => b;

/**
 * Call `m` on `client` with these request frames (exactly one for a unary or
 * server-streaming method), half-close, and wait for the status.
 */
export function callRaw(
  client: grpc.Client,
  m: FuzzMethod,
  frames: readonly Buffer[],
  metadata: grpc.Metadata,
  deadlineMs: number,
): Promise<Outcome> {
  const options = { deadline: Date.now() + deadlineMs };
  return new Promise((resolve) => {
    let replies = 0;
    const done = (e: grpc.ServiceError | null): void =>
      resolve({ code: e?.code ?? grpc.status.OK, details: e?.details ?? '', replies });
    if (!m.requestStream && !m.responseStream) {
      client.makeUnaryRequest(m.path, identity, identity, frames[0] ?? Buffer.alloc(0), metadata, options, (e) => {
        if (!e) replies++;
        done(e);
      });
      return;
    }
    const call:
      grpc.ClientWritableStream<Buffer> | grpc.ClientReadableStream<Buffer> | grpc.ClientDuplexStream<Buffer, Buffer> =
      !m.requestStream
        ? client.makeServerStreamRequest(m.path, identity, identity, frames[0] ?? Buffer.alloc(0), metadata, options)
        : m.responseStream
          ? client.makeBidiStreamRequest(m.path, identity, identity, metadata, options)
          : client.makeClientStreamRequest(m.path, identity, identity, metadata, options, (e) => done(e));
    if ('on' in call && (m.responseStream || !m.requestStream)) {
      (call as grpc.ClientReadableStream<Buffer>).on('data', () => replies++);
      call.on('error', (e: grpc.ServiceError) => done(e));
      call.on('status', (s: grpc.StatusObject) => {
        if (s.code === grpc.status.OK) done(null);
      });
    }
    if (m.requestStream) {
      const w = call as grpc.ClientWritableStream<Buffer>;
      for (const f of frames) w.write(f);
      w.end();
    }
  });
}
