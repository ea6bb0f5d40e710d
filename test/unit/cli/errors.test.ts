import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../../src/cli/failures.js';
import { CliError } from '../../../src/cli/exit.js';
import { NO_NODE_TRIED } from '../../../src/client/kv.js';

const err = (code: grpc.status, details: string) =>
  Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), {
    code,
    details,
    metadata: new grpc.Metadata(),
  });

describe('ringkv failure messages', () => {
  it("say grpc-js's own failures in ringkv's words, with the code name", () => {
    const node = { address: 'db1:7001', deadlineMs: 250, deadlineFlag: '--deadline-ms' };
    expect(describeFailure(err(grpc.status.UNAVAILABLE, 'Name resolution failed for target dns:db1:7001'), node)).toBe(
      'cannot reach a ringkv node at db1:7001: the name does not resolve; pass --node host:port of a running node (or several, comma-separated), or set RINGKV_NODES (gRPC UNAVAILABLE)',
    );
    expect(
      describeFailure(
        err(
          grpc.status.UNAVAILABLE,
          'No connection established. Last error: Error: connect ECONNREFUSED 10.0.0.1:7001. Resolution note: ',
        ),
        node,
      ),
    ).toMatch(/^no ringkv node answers at db1:7001 \(connection refused\); is it running/);
    expect(
      describeFailure(
        err(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded after 0.251s,remote_addr=10.0.0.1:7001'),
        node,
      ),
    ).toBe(
      'no answer from db1:7001 within 250 ms (--deadline-ms); the node may be down, unreachable or overloaded (pass --node host:port of a running node (or several, comma-separated), or set RINGKV_NODES), or the deadline too short: raise --deadline-ms (gRPC DEADLINE_EXCEEDED)',
    );
    // A deadline so short it passed before the client sent anything (seen under load with --deadline-ms 1).
    expect(describeFailure(err(grpc.status.DEADLINE_EXCEEDED, NO_NODE_TRIED), node)).toBe(
      'no answer from db1:7001 within 250 ms (--deadline-ms); the node may be down, unreachable or overloaded (pass --node host:port of a running node (or several, comma-separated), or set RINGKV_NODES), or the deadline too short: raise --deadline-ms (gRPC DEADLINE_EXCEEDED)',
    );
    expect(
      describeFailure(
        err(grpc.status.RESOURCE_EXHAUSTED, 'Received message larger than max (9000000 vs. 8454144)'),
        node,
      ),
    ).toBe(
      'the message of 9000000 bytes is over the gRPC message limit of 8454144 bytes; a value may have at most 1 MiB (gRPC RESOURCE_EXHAUSTED)',
    );
  });

  it('say when a TLS connection failed and why, and point a plaintext client at --tls-ca', () => {
    const node = { address: 'db1:7001' };
    expect(
      describeFailure(
        err(
          grpc.status.UNAVAILABLE,
          'No connection established. Last error: Error: self-signed certificate in certificate chain. Resolution note: ',
        ),
        node,
      ),
    ).toMatch(
      /^the TLS connection to db1:7001 failed \(self-signed certificate in certificate chain\): --tls-ca must be the CA that issued the nodes' certificates/,
    );
    expect(
      describeFailure(
        err(
          grpc.status.UNAVAILABLE,
          "No connection established. Last error: Error: Hostname/IP does not match certificate's altnames: IP: 10.0.0.9 is not in the cert's list: 10.0.0.1",
        ),
        node,
      ),
    ).toMatch(/^the TLS connection to db1:7001 failed .*must name the address dialled/);
    // A plaintext client to a TLS node: connected, then dropped.
    expect(
      describeFailure(
        err(
          grpc.status.UNAVAILABLE,
          'No connection established. Last error: Failed to connect (2026-12-01T22:41:46.119Z). Resolution note: ',
        ),
        node,
      ),
    ).toMatch(
      /^no ringkv node answers at db1:7001; is it running, and is that its --listen address\?; if the cluster runs with TLS, pass --tls-ca/,
    );
  });

  it("keep a node's own message as it is, and other errors' messages", () => {
    const fromNode =
      'this node is not serving requests (it is joining, not yet a member); send the request to another node';
    expect(describeFailure(err(grpc.status.UNAVAILABLE, fromNode), { address: 'x:1' })).toBe(
      `${fromNode} (gRPC UNAVAILABLE)`,
    );
    const timeout =
      'get of key "k" reached 1 of the 2 replicas it needs before the deadline. Retry, perhaps with a longer deadline.';
    expect(describeFailure(err(grpc.status.DEADLINE_EXCEEDED, timeout), { address: 'x:1', deadlineMs: 5000 })).toBe(
      `${timeout} (gRPC DEADLINE_EXCEEDED)`,
    );
    expect(describeFailure(new CliError('no value: stdin was empty'))).toBe('no value: stdin was empty');
    expect(describeFailure(new Error('ENOENT: no such file'))).toBe('ENOENT: no such file');
  });
});

describe('--node', () => {
  it('takes host:port, and refuses a host with no port, or a port out of range, saying what to pass', async () => {
    const { nodeAddress } = await import('../../../src/cli/arguments.js');
    for (const ok of ['127.0.0.1:7001', 'db-1.example:1', '[::1]:7001']) expect(nodeAddress(ok)).toBe(ok);
    expect(() => nodeAddress('127.0.0.1')).toThrow(
      'expected host:port, got "127.0.0.1" with no port: a node\'s gRPC port (ringkv local uses 7001-7003), like 127.0.0.1:7001',
    );
    expect(() => nodeAddress('db1:0')).toThrow(/expected host:port \(like 127\.0\.0\.1:7001/);
    expect(() => nodeAddress('db1:70000')).toThrow(/expected host:port/);
    expect(() => nodeAddress('http://db1:7001')).toThrow(/expected host:port/);
  });
});
