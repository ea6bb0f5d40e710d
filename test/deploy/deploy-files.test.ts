/**
 * The deployment files, checked without a Docker engine or a Kubernetes cluster: the
 * Dockerfile (parsed with dockerfile-ast), docker-compose.yml (Debian's docker-compose
 * 1.29.2 `config -q` when installed, and its shape with the yaml package) and every
 * manifest under deploy/kubernetes/ (kubernetes-models' schemas, and how the objects fit
 * together). Each check also runs on a broken copy in a temp dir, to show it can fail.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/node/config.js';

const ROOT = join(import.meta.dirname, '../..');
const K8S = join(ROOT, 'deploy/kubernetes');
/** Debian's docker-compose 1.29.2; DOCKER_COMPOSE_BIN points elsewhere (or, set to a missing path, shows the CI failure). */
const COMPOSE_BIN = process.env.DOCKER_COMPOSE_BIN ?? '/usr/bin/docker-compose';
const tmp = mkdtempSync(join(tmpdir(), 'ringkv-deploy-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `text` with `from` replaced by `to`; throws if `from` is not there, so a broken copy is really broken. */
function replaced(text: string, from: string | RegExp, to: string): string {
  const out = text.replace(from, to);
  if (out === text) throw new Error(`test bug: ${String(from)} not found in the file`);
  return out;
}

function copy(name: string, text: string): string {
  const dir = mkdtempSync(join(tmp, 'case-'));
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

// ---------------------------------------------------------------------------------------
// Dockerfile

function words(i: Instruction): string[] {
  return i.getArguments().map((a) => a.getValue());
}

/** A JSON-form instruction's strings (["node", "x"] → ['node', 'x']), else its words. */
function execForm(i: Instruction): string[] {
  const text = i.getArgumentsContent() ?? '';
  const json = text.slice(text.indexOf('['));
  try {
    const v = JSON.parse(json) as unknown;
    if (Array.isArray(v)) return v.map(String);
  } catch {
    // shell form
  }
  return words(i);
}

/** What is wrong with the Dockerfile at `path`; [] when nothing. */
function dockerfileProblems(path: string): string[] {
  const df = DockerfileParser.parse(readFileSync(path, 'utf8'));
  const problems: string[] = [];
  const all = df.getInstructions();
  const froms = all.map((i, n) => [i, n] as const).filter(([i]) => i.getKeyword() === 'FROM');
  if (froms.length < 2) problems.push(`expected a multi-stage build (2 or more FROM), found ${froms.length}`);
  const lastFrom = froms.at(-1);
  if (lastFrom === undefined) return [...problems, 'no FROM'];
  const final = all.slice(lastFrom[1] + 1);
  const earlier = all.slice(0, lastFrom[1]);
  // FROM ${BASE}: the default of the ARG before the first FROM (scripts/base-image.sh may pass another).
  const image = df.getFROMs().at(-1)!.getImage() ?? '';
  const arg = /^\$\{?(\w+)\}?$/.exec(image)?.[1];
  const defaults = new Map(
    all
      .slice(0, froms[0]![1])
      .filter((i) => i.getKeyword() === 'ARG')
      .map((i) => (i.getArgumentsContent() ?? '').split('=') as [string, string]),
  );
  const finalImage = arg === undefined ? image : defaults.get(arg);
  if (finalImage !== 'node:20-bookworm-slim')
    problems.push(
      `final stage is FROM ${finalImage ?? `${image} with no default`}, expected node:20-bookworm-slim (glibc: classic-level's prebuilt binaries)`,
    );
  const runs = earlier.filter((i) => i.getKeyword() === 'RUN').map((i) => words(i).join(' '));
  if (!runs.some((r) => /\bnpm ci\b/.test(r))) problems.push('no build stage runs npm ci');
  if (!runs.some((r) => /\bnpm run build\b/.test(r))) problems.push('no build stage runs npm run build');
  if (
    !runs.some((r) => /\bnpm ci\b.*--omit=dev/.test(r)) &&
    !final.some((i) => i.getKeyword() === 'RUN' && /--omit=dev/.test(words(i).join(' ')))
  ) {
    problems.push('production dependencies are not installed with npm ci --omit=dev');
  }
  const copies = final.filter((i) => i.getKeyword() === 'COPY').map((i) => words(i).join(' '));
  // What the package ships ("files": dist, proto, web) is what the node reads at run time.
  const shipped = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
  for (const want of [...shipped, 'node_modules', 'package.json']) {
    if (!copies.some((c) => c.includes(want))) problems.push(`final stage does not copy ${want}`);
  }
  const users = final.filter((i) => i.getKeyword() === 'USER');
  const user = users.at(-1) === undefined ? undefined : words(users.at(-1)!)[0];
  if (user === undefined) problems.push('final stage has no USER: it would run as root');
  else if (/^(root|0)(:|$)/.test(user)) problems.push(`final stage runs as ${user}, expected a non-root user`);
  const hc = final.filter((i) => i.getKeyword() === 'HEALTHCHECK');
  if (hc.length === 0) problems.push('final stage has no HEALTHCHECK');
  else {
    const cmd = execForm(hc.at(-1)!);
    if (!cmd.includes('health') || !cmd.some((w) => w.endsWith('dist/cli/main.js')))
      problems.push(`HEALTHCHECK does not run ringkv health: ${cmd.join(' ')}`);
  }
  const exposed = final.filter((i) => i.getKeyword() === 'EXPOSE').flatMap(words);
  for (const port of ['7001', '8080'])
    if (!exposed.some((p) => p === port || p === `${port}/tcp`)) problems.push(`EXPOSE lacks ${port}`);
  const volumes = final.filter((i) => i.getKeyword() === 'VOLUME').flatMap(execForm);
  if (!volumes.includes('/var/lib/ringkv')) problems.push('no VOLUME /var/lib/ringkv');
  const entry = final.filter((i) => i.getKeyword() === 'ENTRYPOINT').at(-1);
  if (entry === undefined || JSON.stringify(execForm(entry)) !== JSON.stringify(['node', '/app/dist/cli/main.js'])) {
    problems.push('ENTRYPOINT is not ["node", "/app/dist/cli/main.js"] (exec form: the node gets SIGTERM itself)');
  }
  const cmd = final.filter((i) => i.getKeyword() === 'CMD').at(-1);
  if (cmd === undefined || JSON.stringify(execForm(cmd)) !== JSON.stringify(['node']))
    problems.push('CMD is not ["node"]');
  return problems;
}

describe('Dockerfile', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('is multi-stage, runs as a non-root user, has a HEALTHCHECK running ringkv health, exposes 7001 and 8080', () => {
    expect(dockerfileProblems(join(ROOT, 'Dockerfile'))).toEqual([]);
  });

  it('the checks catch a broken copy', () => {
    expect(dockerfileProblems(copy('Dockerfile', replaced(text, /^USER .*$/m, 'USER root')))).toEqual([
      'final stage runs as root, expected a non-root user',
    ]);
    expect(dockerfileProblems(copy('Dockerfile', replaced(text, /^USER .*$/m, '')))).toEqual([
      'final stage has no USER: it would run as root',
    ]);
    expect(dockerfileProblems(copy('Dockerfile', replaced(text, /^HEALTHCHECK[^\n]*\\\n[^\n]*\n/m, '')))).toEqual([
      'final stage has no HEALTHCHECK',
    ]);
    expect(dockerfileProblems(copy('Dockerfile', replaced(text, '"health", ', '"status", ')))[0]).toMatch(
      /^HEALTHCHECK does not run ringkv health/,
    );
    expect(dockerfileProblems(copy('Dockerfile', replaced(text, 'EXPOSE 7001 8080', 'EXPOSE 8080')))).toEqual([
      'EXPOSE lacks 7001',
    ]);
    expect(
      dockerfileProblems(
        copy('Dockerfile', replaced(text, 'ARG BASE=node:20-bookworm-slim', 'ARG BASE=node:20-alpine')),
      ),
    ).toEqual([expect.stringMatching(/^final stage is FROM node:20-alpine, expected node:20-bookworm-slim/)]);
    // One stage: everything after the last FROM.
    const single = `FROM node:20-bookworm-slim\n${text
      .slice(text.lastIndexOf('\nFROM ') + 1)
      .split('\n')
      .slice(1)
      .join('\n')}`;
    expect(dockerfileProblems(copy('Dockerfile', single))).toContain(
      'expected a multi-stage build (2 or more FROM), found 1',
    );
  });

  it('.dockerignore keeps node_modules, dist, data, results, .git and .vitest out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    for (const p of ['node_modules', 'dist', 'data', 'results', '.git', '.vitest']) expect(ignored, p).toContain(p);
  });

  it('classic-level has a prebuilt glibc binary for linux x64 and arm64 (no compiler in the image)', () => {
    const prebuilds = join(ROOT, 'node_modules/classic-level/prebuilds');
    expect(readdirSync(join(prebuilds, 'linux-x64'))).toContain('classic-level.node');
    expect(readdirSync(join(prebuilds, 'linux-arm64')).some((f) => f.endsWith('.node') && !f.includes('musl'))).toBe(
      true,
    );
  });
});

// ---------------------------------------------------------------------------------------
// docker-compose.yml

type Env = Record<string, string>;
interface ComposeService {
  environment?: Env | string[];
  healthcheck?: { test?: string[] | string };
  volumes?: unknown[];
  ports?: string[];
}

function envOf(s: ComposeService): Env {
  if (Array.isArray(s.environment))
    return Object.fromEntries(s.environment.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));
}

/** What is wrong with the shape of the compose file at `path`; [] when nothing. */
function composeProblems(path: string): string[] {
  const doc = parse(readFileSync(path, 'utf8'), { merge: true }) as {
    services?: Record<string, ComposeService>;
    volumes?: Record<string, unknown>;
  };
  const services = doc.services ?? {};
  const names = Object.keys(services);
  const problems: string[] = [];
  if (names.length !== 3) problems.push(`expected 3 services, found ${names.length}: ${names.join(', ')}`);
  const zones = new Set<string>();
  for (const [name, s] of Object.entries(services)) {
    const test = s.healthcheck?.test;
    const cmd = Array.isArray(test) ? test.join(' ') : (test ?? '');
    if (!/dist\/cli\/main\.js health\b/.test(cmd)) problems.push(`${name}: no healthcheck running ringkv health`);
    const volumes = (s.volumes ?? []).map(String);
    if (!volumes.some((v) => v.endsWith(':/var/lib/ringkv') && (doc.volumes ?? {})[v.split(':')[0]!] !== undefined))
      problems.push(`${name}: no named volume on /var/lib/ringkv`);
    const env = envOf(s);
    if (env.RINGKV_ADVERTISE !== `${name}:7001`)
      problems.push(`${name}: RINGKV_ADVERTISE is ${env.RINGKV_ADVERTISE ?? 'unset'}, expected ${name}:7001`);
    const seeds = (env.RINGKV_SEEDS ?? '').split(',').filter((x) => x !== '');
    const hosts = seeds.map((x) => x.slice(0, x.lastIndexOf(':')));
    if (!hosts.some((h) => h !== name && names.includes(h)))
      problems.push(`${name}: RINGKV_SEEDS (${seeds.join(',')}) names no other service`);
    for (const h of hosts) if (!names.includes(h)) problems.push(`${name}: seed ${h} is not a service`);
    if (env.RINGKV_LISTEN !== '0.0.0.0:7001') problems.push(`${name}: RINGKV_LISTEN is not 0.0.0.0:7001`);
    if (env.RINGKV_HTTP !== '0.0.0.0:8080') problems.push(`${name}: RINGKV_HTTP is not 0.0.0.0:8080`);
    if (env.RINGKV_ZONE) zones.add(env.RINGKV_ZONE);
    for (const p of s.ports ?? [])
      if (!String(p).startsWith('127.0.0.1:')) problems.push(`${name}: port ${p} is published beyond 127.0.0.1`);
  }
  if (zones.size !== names.length) problems.push(`expected one zone per node, found ${[...zones].join(', ')}`);
  return problems;
}

/** `docker-compose config -q` of the file at `path`: undefined when valid, else what it said. */
function composeConfig(path: string): string | undefined {
  try {
    execFileSync(COMPOSE_BIN, ['-f', path, 'config', '-q'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, COMPOSE_PROJECT_NAME: 'ringkv-check' },
    });
    return undefined;
  } catch (e) {
    const x = e as { stderr?: string; stdout?: string; message: string };
    return `${x.stderr ?? ''}${x.stdout ?? ''}`.trim() || x.message;
  }
}

describe('docker-compose.yml', () => {
  const path = join(ROOT, 'docker-compose.yml');
  const text = readFileSync(path, 'utf8');
  const haveCompose = existsSync(COMPOSE_BIN);

  it('has 3 services, each with a ringkv health check, a named volume, its own advertise address and seeds naming the others', () => {
    expect(composeProblems(path)).toEqual([]);
  });

  it('the shape checks catch a broken copy', () => {
    const noHealth = replaced(text, /^  n2:\n    <<: \*ringkv\n/m, '  n2:\n    image: ringkv:local\n');
    expect(composeProblems(copy('docker-compose.yml', noHealth))).toEqual(['n2: no healthcheck running ringkv health']);
    expect(
      composeProblems(
        copy('docker-compose.yml', replaced(text, 'RINGKV_ADVERTISE: n3:7001', 'RINGKV_ADVERTISE: 127.0.0.1:7001')),
      ),
    ).toEqual(['n3: RINGKV_ADVERTISE is 127.0.0.1:7001, expected n3:7001']);
    const lonely = replaced(text, 'RINGKV_SEEDS: n1:7001,n2:7001,n3:7001', 'RINGKV_SEEDS: n1:7001');
    expect(composeProblems(copy('docker-compose.yml', lonely))).toEqual([
      'n1: RINGKV_SEEDS (n1:7001) names no other service',
    ]);
    expect(
      composeProblems(copy('docker-compose.yml', replaced(text, '      - n2-data:/var/lib/ringkv\n', ''))),
    ).toEqual(['n2: no named volume on /var/lib/ringkv']);
  });

  it.runIf(haveCompose)(`passes ${COMPOSE_BIN} config -q (Debian's docker-compose 1.29.2)`, () => {
    expect(composeConfig(path)).toBeUndefined();
  });

  it.runIf(haveCompose)(
    'docker-compose config -q refuses a broken copy (a wrong type, and a key newer than 1.29.2)',
    () => {
      expect(composeConfig(copy('docker-compose.yml', replaced(text, 'retries: 3', 'retries: three')))).toMatch(
        /retries.*"three" is not a valid integer/,
      );
      expect(
        composeConfig(
          copy(
            'docker-compose.yml',
            replaced(text, '    start_period: 120s\n', '    start_period: 120s\n    start_interval: 5s\n'),
          ),
        ),
      ).toMatch(/start_interval/);
    },
  );

  it.runIf(!haveCompose)(`${COMPOSE_BIN} is installed (required under CI)`, () => {
    const message = `docker-compose config -q not run: ${COMPOSE_BIN} not found; install Debian's docker-compose package (apt-get install docker-compose)`;
    if (process.env.CI && process.env.CI !== 'false') expect.fail(message);
    console.warn(message);
  });
});

// ---------------------------------------------------------------------------------------
// deploy/kubernetes/

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  [k: string]: unknown;
}

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  'v1/Namespace': Namespace,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/StatefulSet': StatefulSet,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
};

function loadManifests(dir: string): { file: string; obj: K8sObject }[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => {
        if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
        return { file, obj: d.toJS() as K8sObject };
      }),
    )
    .filter(({ obj }) => obj !== null);
}

/** Schema problems of every object in `dir`, by kubernetes-models; [] when none. */
function schemaProblems(dir: string): string[] {
  return loadManifests(dir).flatMap(({ file, obj }) => {
    const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
    if (Model === undefined) return [`${file}: ${obj.apiVersion} ${obj.kind} is not a kind this test knows`];
    try {
      new Model(obj).validate();
      return [];
    } catch (e) {
      return [`${file}: ${obj.kind} ${obj.metadata?.name}: ${(e as Error).message}`];
    }
  });
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  return (
    selector !== undefined &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([k, v]) => labels?.[k] === v)
  );
}

/** How the objects in `dir` fit together; [] when they do. */
function wiringProblems(dir: string): string[] {
  const objs = loadManifests(dir).map((x) => x.obj);
  const problems: string[] = [];
  const sts = objs.filter((o) => o.kind === 'StatefulSet');
  if (sts.length !== 1) return [`expected one StatefulSet, found ${sts.length}`];
  const set = sts[0]!;
  const spec = set.spec!;
  const podLabels = spec.template?.metadata?.labels as Record<string, string> | undefined;
  const pod = spec.template?.spec ?? {};
  if (spec.replicas !== 3) problems.push(`StatefulSet replicas is ${spec.replicas}, expected 3`);
  if (!matches(spec.selector?.matchLabels, podLabels))
    problems.push('StatefulSet selector does not match its pod labels');
  const headless = objs.find((o) => o.kind === 'Service' && o.metadata.name === spec.serviceName);
  if (headless === undefined) problems.push(`StatefulSet serviceName ${spec.serviceName} is no Service here`);
  else {
    if (headless.spec?.clusterIP !== 'None')
      problems.push(`StatefulSet serviceName ${spec.serviceName} is not headless (clusterIP: None)`);
    if (headless.spec?.publishNotReadyAddresses !== true)
      problems.push(
        `${spec.serviceName} lacks publishNotReadyAddresses: true (a joining node is not ready, yet its peers must resolve it)`,
      );
    if (!matches(headless.spec?.selector, podLabels))
      problems.push(`${spec.serviceName} selector does not match the pod labels`);
  }
  const client = objs.find((o) => o.kind === 'Service' && o !== headless && o.spec?.clusterIP !== 'None');
  if (client === undefined || !matches(client.spec?.selector, podLabels))
    problems.push('no client Service selecting the pods');
  if (!Array.isArray(spec.volumeClaimTemplates) || spec.volumeClaimTemplates.length === 0)
    problems.push('no volumeClaimTemplates');
  const ringkv = (pod.containers ?? []).find((c: { name: string }) => c.name === 'ringkv');
  if (ringkv === undefined) return [...problems, 'no container named ringkv'];
  const ready = ringkv.readinessProbe;
  if (ready?.grpc?.port !== 7001 || (ready.grpc.service ?? '') !== '')
    problems.push('readinessProbe is not gRPC health on port 7001 (service "")');
  const live = ringkv.livenessProbe;
  if (live?.grpc?.port !== 7001 || live.grpc.service !== 'liveness')
    problems.push('livenessProbe is not gRPC health on port 7001 (service "liveness")');
  if (live?.grpc !== undefined && (live.grpc.service ?? '') === '')
    problems.push(
      'livenessProbe is gRPC health "", which is NOT_SERVING while a node joins or leaves: it would restart them',
    );
  const env = Object.fromEntries(
    (ringkv.env ?? []).map((e: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }) => [
      e.name,
      e.value ?? `fieldRef:${e.valueFrom?.fieldRef?.fieldPath}`,
    ]),
  ) as Record<string, string>;
  if (env.POD_NAME !== 'fieldRef:metadata.name' || env.POD_NAMESPACE !== 'fieldRef:metadata.namespace')
    problems.push('POD_NAME and POD_NAMESPACE do not come from the downward API');
  const dns = `$(POD_NAME).${spec.serviceName}.$(POD_NAMESPACE).svc.cluster.local:7001`;
  if (env.RINGKV_ADVERTISE !== dns) problems.push(`RINGKV_ADVERTISE is ${env.RINGKV_ADVERTISE}, expected ${dns}`);
  const seeds = (env.RINGKV_SEEDS ?? '').split(',');
  const seedPods = seeds.map(
    (s) =>
      new RegExp(
        `^(${set.metadata.name}-\\d+)\\.${spec.serviceName}\\.\\$\\(POD_NAMESPACE\\)\\.svc\\.cluster\\.local:7001$`,
      ).exec(s)?.[1],
  );
  if (seedPods.length === 0 || seedPods.some((p) => p === undefined) || !seedPods.includes(`${set.metadata.name}-0`))
    problems.push(`RINGKV_SEEDS (${env.RINGKV_SEEDS}) are not the first pods' DNS names`);
  if (env.RINGKV_ZONE !== undefined)
    problems.push('RINGKV_ZONE is set: it would override the zone the init container writes');
  const args: string[] = ringkv.args ?? [];
  const configFile = args[args.indexOf('--config') + 1];
  if (!args.includes('--config') || configFile === undefined)
    problems.push('the ringkv container is not started with --config');
  const init = (pod.initContainers ?? [])[0];
  const script = (init?.command ?? []).join(' ');
  if (
    init === undefined ||
    !script.includes('topology.kubernetes.io/zone') ||
    configFile === undefined ||
    !script.includes(configFile)
  )
    problems.push(`no init container writes the node's zone label to ${configFile}`);
  else if (!/^[\w.-]+\/[\w.-]+:[\w.-]+$/.test(init.image) || init.image.endsWith(':latest'))
    problems.push(`init container image ${init.image} is not pinned to a version`);
  const sa = objs.find((o) => o.kind === 'ServiceAccount' && o.metadata.name === pod.serviceAccountName);
  if (sa === undefined) problems.push(`serviceAccountName ${pod.serviceAccountName} is no ServiceAccount here`);
  const role = objs.find(
    (o) =>
      o.kind === 'ClusterRole' &&
      ((o.rules as { resources: string[]; verbs: string[] }[] | undefined) ?? []).some(
        (r) => r.resources.includes('nodes') && r.verbs.includes('get'),
      ),
  );
  const binding = objs.find(
    (o) => o.kind === 'ClusterRoleBinding' && (o.roleRef as { name: string }).name === role?.metadata.name,
  );
  const subjects = (binding?.subjects as { kind: string; name: string; namespace: string }[] | undefined) ?? [];
  if (
    role === undefined ||
    !subjects.some(
      (s) => s.kind === 'ServiceAccount' && s.name === sa?.metadata.name && s.namespace === sa?.metadata.namespace,
    )
  )
    problems.push('the ServiceAccount is not bound to a ClusterRole that may get nodes');
  const psc = pod.securityContext ?? {};
  const csc = ringkv.securityContext ?? {};
  if (psc.runAsNonRoot !== true || !(psc.runAsUser > 0))
    problems.push('pod securityContext is not runAsNonRoot with a non-zero runAsUser');
  if (csc.allowPrivilegeEscalation !== false) problems.push('ringkv container allows privilege escalation');
  if (!ringkv.resources?.requests?.memory || !ringkv.resources?.limits?.memory)
    problems.push('ringkv container has no memory request and limit');
  if (!(pod.terminationGracePeriodSeconds >= 30))
    problems.push(
      `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} is under 30 s (shutdown grace 10 s plus a clean close)`,
    );
  const pdbs = objs.filter((o) => o.kind === 'PodDisruptionBudget');
  if (pdbs.length !== 1) problems.push(`expected one PodDisruptionBudget, found ${pdbs.length}`);
  for (const pdb of pdbs) {
    if (pdb.spec?.maxUnavailable !== 1)
      problems.push(`PodDisruptionBudget maxUnavailable is ${pdb.spec?.maxUnavailable}, expected 1`);
    if (!matches(pdb.spec?.selector?.matchLabels, podLabels))
      problems.push('PodDisruptionBudget selector does not match the pod labels');
  }
  for (const o of objs) {
    const clusterScoped = ['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind);
    if (!clusterScoped && o.metadata.namespace !== sa?.metadata.namespace)
      problems.push(
        `${o.kind} ${o.metadata.name} is in namespace ${o.metadata.namespace}, not ${sa?.metadata.namespace}`,
      );
  }
  return problems;
}

/** A copy of deploy/kubernetes/ with `file`'s text changed by `edit`. */
function brokenManifests(file: string, edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmp, 'k8s-'));
  for (const f of readdirSync(K8S)) {
    const text = readFileSync(join(K8S, f), 'utf8');
    writeFileSync(join(dir, f), f === file ? edit(text) : text);
  }
  return dir;
}

describe('deploy/kubernetes', () => {
  it('every object passes its kubernetes-models schema', () => {
    const kinds = loadManifests(K8S)
      .map(({ obj }) => obj.kind)
      .sort();
    expect(kinds).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Namespace',
      'PodDisruptionBudget',
      'Service',
      'Service',
      'ServiceAccount',
      'StatefulSet',
    ]);
    expect(schemaProblems(K8S)).toEqual([]);
  });

  it('the objects fit together: headless serviceName, gRPC readiness on 7001, advertise and seeds by pod DNS, zone init container, RBAC, PDB', () => {
    expect(wiringProblems(K8S)).toEqual([]);
  });

  it('schema validation catches a broken copy (a wrong field type, a missing required field)', () => {
    const replicas = brokenManifests('30-statefulset.yaml', (t) =>
      replaced(t, /^  replicas: 3$/m, '  replicas: three'),
    );
    expect(schemaProblems(replicas)).toEqual([
      '30-statefulset.yaml: StatefulSet ringkv: data/spec/replicas must be integer',
    ]);
    const port = brokenManifests('30-statefulset.yaml', (t) =>
      replaced(t, /grpc:\n              port: 7001/, 'grpc:\n              port: "7001"'),
    );
    expect(schemaProblems(port)).toEqual([
      '30-statefulset.yaml: StatefulSet ringkv: data/spec/template/spec/containers/0/readinessProbe/grpc/port must be integer',
    ]);
    const noSelector = brokenManifests('40-pdb.yaml', (t) =>
      replaced(t, '  maxUnavailable: 1\n', '  maxUnavailable: [1]\n'),
    );
    expect(schemaProblems(noSelector)[0]).toMatch(
      /^40-pdb\.yaml: PodDisruptionBudget ringkv: data\/spec\/maxUnavailable/,
    );
  });

  it('the wiring checks catch a broken copy', () => {
    const notHeadless = brokenManifests('20-services.yaml', (t) => replaced(t, '  clusterIP: None\n', ''));
    expect(wiringProblems(notHeadless)).toContain(
      'StatefulSet serviceName ringkv-headless is not headless (clusterIP: None)',
    );
    const httpProbe = brokenManifests('30-statefulset.yaml', (t) =>
      replaced(
        t,
        /readinessProbe:\n            grpc:\n              port: 7001/,
        'readinessProbe:\n            tcpSocket:\n              port: 7001',
      ),
    );
    expect(wiringProblems(httpProbe)).toEqual(['readinessProbe is not gRPC health on port 7001 (service "")']);
    const grpcLiveness = brokenManifests('30-statefulset.yaml', (t) =>
      replaced(t, /\n              service: liveness/, ''),
    );
    expect(wiringProblems(grpcLiveness)).toEqual([
      'livenessProbe is not gRPC health on port 7001 (service "liveness")',
      'livenessProbe is gRPC health "", which is NOT_SERVING while a node joins or leaves: it would restart them',
    ]);
    const pdb = brokenManifests('40-pdb.yaml', (t) =>
      replaced(
        t,
        /matchLabels:\n      app.kubernetes.io\/name: ringkv/,
        'matchLabels:\n      app.kubernetes.io/name: ringkv-db',
      ),
    );
    expect(wiringProblems(pdb)).toEqual(['PodDisruptionBudget selector does not match the pod labels']);
    const zoneEnv = brokenManifests('30-statefulset.yaml', (t) =>
      replaced(
        t,
        '            - name: RINGKV_DATA_DIR\n',
        '            - name: RINGKV_ZONE\n              value: a\n            - name: RINGKV_DATA_DIR\n',
      ),
    );
    expect(wiringProblems(zoneEnv)).toEqual([
      'RINGKV_ZONE is set: it would override the zone the init container writes',
    ]);
  });

  it('a node takes the zone from the file the init container writes when RINGKV_ZONE is unset, and RINGKV_ZONE over it', () => {
    const file = copy('topology.json', '{"zone":"eu-west-1a"}\n');
    expect(
      resolveConfig(
        {},
        { RINGKV_LISTEN: '0.0.0.0:7001', RINGKV_ADVERTISE: 'ringkv-0.ringkv-headless.ringkv.svc.cluster.local:7001' },
        file,
      ).zone,
    ).toBe('eu-west-1a');
    expect(resolveConfig({}, { RINGKV_ZONE: '' }, file).zone).toBe('eu-west-1a');
    expect(resolveConfig({}, { RINGKV_ZONE: 'b' }, file).zone).toBe('b');
    expect(resolveConfig({}, {}, copy('topology.json', '{}\n')).zone).toBe('');
  });
});
