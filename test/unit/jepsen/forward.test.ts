import { describe, expect, it } from 'vitest';
import { forwardProblem } from '../../../testkit/jepsen/net.js';

describe("the harness's check of the FORWARD policy", () => {
  it('says what is wrong, and what to do, when bridged traffic meets a DROP policy (what a default dockerd leaves behind)', () => {
    const docker = '-P FORWARD DROP\n-A FORWARD -j DOCKER-USER\n-A FORWARD -j DOCKER-FORWARD';
    expect(forwardProblem(docker, '1\n')).toMatch(
      /FORWARD policy is DROP.*iptables -P FORWARD ACCEPT.*--iptables=false/,
    );
  });

  it('finds nothing wrong with an ACCEPT policy, or when bridged frames skip iptables (no br_netfilter, or it is off)', () => {
    expect(forwardProblem('-P FORWARD ACCEPT', '1')).toBeUndefined();
    expect(forwardProblem('-P FORWARD DROP', undefined)).toBeUndefined();
    expect(forwardProblem('-P FORWARD DROP', '0\n')).toBeUndefined();
  });
});
