/**
 * The HTTP port of real `ringkv node` processes: Prometheus /metrics, the JSON the status
 * page reads, and the page itself in headless Chromium (playwright-core with Debian's
 * /usr/bin/chromium) while a fourth node joins and is killed mid-join, and then while the
 * node serving the page is killed.
 *
 * Without Chromium the browser part is skipped with a message, except under CI, which
 * installs it (.ci/run) and must run it. RINGKV_SCREENSHOT=1 rewrites
 * docs/images/status-page.png from this run.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster, httpOf } from '../../testkit/node-cluster.js';
import { freePort } from '../../testkit/ports.js';
import { waitFor } from '../../testkit/wait.js';

const CHROMIUM = '/usr/bin/chromium';
const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI)
  throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium for the status page test`);
if (!haveChromium) console.warn(`status page browser test skipped: no ${CHROMIUM} (apt-get install chromium)`);

async function get(url: string, init?: RequestInit): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** Metric names a scrape exposes (# TYPE lines). */
function metricNames(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
}

describe('the HTTP port: metrics, JSON and the status page', () => {
  let cluster: TestCluster;
  const http = new Map<string, string>();

  beforeAll(async () => {
    // Senders stream at 4 KiB/s: the fourth node's join lasts long enough to be seen mid-way.
    cluster = await TestCluster.create(4, 2, ['--http', '127.0.0.1:0', '--stream-bytes-per-second', '4096']);
    cluster.nodes.forEach((n, i) => n.args.push('--zone', 'abc'[i % 3]!));
    for (const n of cluster.nodes.slice(0, 3)) n.start();
    for (const n of cluster.nodes.slice(0, 3)) http.set(n.id, await httpOf(n));
    await waitFor(
      '3 normal and up on every node',
      60_000,
      async () => {
        const views = await Promise.all(cluster.nodes.slice(0, 3).map((n) => n.status()));
        return views.every((v) => v?.members.length === 3 && v.members.every((m) => m.status === 'normal' && m.up));
      },
      250,
    );
    // Through n1 alone: it coordinates every request, and n2 and n3 serve its replica calls.
    const client = new Client({ nodes: [cluster.node('n1').address], tokenAware: false });
    try {
      const value = Buffer.alloc(1024, 7);
      for (let i = 0; i < 200; i++) await client.put(Buffer.from(`page-${i}`), value);
      for (let i = 0; i < 20; i++) await client.get(Buffer.from(`page-${i}`));
    } finally {
      client.close();
    }
  }, 120_000);

  afterAll(() => cluster?.destroy());

  it('serves Prometheus metrics, every one of them documented in docs/metrics.md', async () => {
    const m = await get(`http://${http.get('n1')}/metrics`);
    expect(m.status).toBe(200);
    expect(m.type).toMatch(/^text\/plain/);
    // Client requests n1 coordinated, and replica calls the other two served.
    expect(m.text).toMatch(/^ringkv_requests_total\{operation="put",role="coordinator",code="OK"\} 200$/m);
    expect(m.text).toMatch(/^ringkv_request_duration_seconds_count\{operation="get",role="coordinator"\} 20$/m);
    expect(m.text).toMatch(/^ringkv_get_siblings_count 20$/m);
    expect(m.text).toMatch(/^ringkv_members\{status="normal",up="true"\} 3$/m);
    expect(m.text).toMatch(/^ringkv_peer_phi\{peer="n2"\} /m);
    expect(m.text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    const n2 = await get(`http://${http.get('n2')}/metrics`);
    expect(n2.text).toMatch(/^ringkv_requests_total\{operation="(apply|merge)",role="replica",code="OK"\} \d+$/m);

    const doc = readFileSync(join(import.meta.dirname, '../../docs/metrics.md'), 'utf8');
    const undocumented = metricNames(m.text).filter(
      (name) => name.startsWith('ringkv_') && !doc.includes(`\`${name}\``),
    );
    expect(undocumented).toEqual([]);
  });

  it('serves the JSON the CLI prints, and refuses what it does not serve with the right status', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', MAIN, 'status', '--json', '--node', cluster.node('n1').address],
      { timeout: 20_000 },
    );
    const fromCli = JSON.parse(stdout) as { members: Record<string, unknown>[] };
    const fromPage = JSON.parse((await get(`http://${http.get('n1')}/api/status`)).text) as typeof fromCli;
    // Heartbeats, phi and load move between the two reads; the shape and the rest may not.
    const still = (s: typeof fromCli) => s.members.map(({ heartbeat: _h, phi: _p, loadBytes: _l, ...rest }) => rest);
    expect(Object.keys(fromPage).sort()).toEqual(Object.keys(fromCli).sort());
    expect(still(fromPage)).toEqual(still(fromCli));

    const ring = JSON.parse((await get(`http://${http.get('n1')}/api/ring`)).text) as {
      ranges: unknown[];
      pending: unknown[];
    };
    expect(ring.ranges).toHaveLength(3 * 64);
    expect(ring.pending).toEqual([]);
    const events = JSON.parse((await get(`http://${http.get('n1')}/api/events`)).text) as {
      events: { msg: string; peer?: string }[];
    };
    expect(events.events.some((e) => e.msg === 'peer discovered' && e.peer === 'n2')).toBe(true);
    await cluster.node('n2').admin().createBucket('carts', { n: 2, ttlMs: 3_600_000 });
    const buckets = JSON.parse((await get(`http://${http.get('n1')}/api/buckets`)).text) as {
      buckets: { name: string; props: { n: number; ttlMs: number } }[];
    };
    expect(buckets.buckets.map((b) => [b.name, b.props.n, Number(b.props.ttlMs)])).toEqual([
      ['default', 3, 0],
      ['carts', 2, 3_600_000],
    ]);

    const base = `http://${http.get('n1')}`;
    expect((await get(`${base}/api/status?replicas=x`)).status).toBe(400);
    expect((await get(`${base}/api/status?replicas=17`)).status).toBe(400);
    const post = await get(`${base}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.text).toContain('read-only');
    const missing = await get(`${base}/nothing-here`);
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('/metrics');
  });

  it('refuses to start on an HTTP port that is taken, saying which setting to change', async () => {
    const taken = http.get('n1')!;
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'ringkv-http-'));
    const r = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', MAIN, 'node', '--listen', `127.0.0.1:${port}`, '--data-dir', dir, '--http', taken],
      { timeout: 20_000 },
    ).then(
      () => ({ code: 0, out: '' }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(`cannot serve HTTP on ${taken} (--http)`);
  });

  describe.skipIf(!haveChromium)('in headless Chromium', () => {
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      page.setDefaultTimeout(30_000);
    }, 60_000);

    afterAll(async () => browser?.close());

    const rowOf = (id: string) => page.locator(`#members tr[data-node="${id}"]`);

    /**
     * Each column of the table at `selector`: its header, and whether the header's text sits
     * over every value's (their text spans overlap across the page). An empty cell has no
     * text to sit under it.
     */
    const columnsOf = (selector: string) =>
      page.$eval(selector, (table) => {
        const span = (cell: typeof table) => {
          const r = table.ownerDocument.createRange();
          r.selectNodeContents(cell);
          const box = r.getBoundingClientRect();
          return cell.textContent?.trim() ? [box.left, box.right] : undefined;
        };
        const head = [...table.querySelectorAll('thead th')];
        const rows = [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.children]);
        return head.map((th, i) => {
          const [left, right] = span(th)!;
          const values = rows
            .map((cells) => (cells[i] === undefined ? [0, 0] : span(cells[i])))
            .filter((v) => v !== undefined);
          return {
            header: th.textContent!.trim(),
            over: values.every(([l, r]) => l! < right! && r! > left!),
            values: values.length,
            cells: rows.map((c) => c.length),
          };
        });
      });

    it('shows the members, the ring coloured by owner, the buckets and the recent events', async () => {
      await cluster.node('n1').admin().createBucket('hits', { type: 'counter' });
      await page.goto(`http://${http.get('n1')}/`);
      await page.waitForSelector('#updated[data-state=ok]');
      await expect.poll(() => page.locator('#members tbody tr').count()).toBe(3);
      for (const id of ['n1', 'n2', 'n3']) {
        expect(await rowOf(id).getAttribute('data-up')).toBe('true');
        expect(await rowOf(id).locator('.code').textContent()).toBe('UN');
      }
      const owners = await page.$$eval('#ring path.range', (ps) =>
        [...new Set(ps.map((p) => p.getAttribute('data-owner')))].sort(),
      );
      expect(owners).toEqual(['n1', 'n2', 'n3']);
      expect(await page.locator('#ring path.pending').count()).toBe(0);
      expect(await page.locator('#events li').first().textContent()).toMatch(/peer/);
      expect(await page.locator('#cluster').textContent()).toBe('ringkv');
      expect(await page.$$eval('#buckets tbody tr', (rs) => rs.map((r) => r.getAttribute('data-bucket')))).toEqual([
        'default',
        'carts',
        'hits',
      ]);
      expect(await page.locator('#buckets tr[data-bucket="carts"]').textContent()).toMatch(
        /carts\s*kv\s*2\s*quorum \(2\)\s*quorum \(2\)\s*1h\s*siblings/,
      );
      expect(await page.locator('#buckets tr[data-bucket="hits"] td').nth(1).textContent()).toBe('counter');
      // Two buckets made, and no event of each peer's bucket table digest changing.
      expect(await page.locator('#events').textContent()).not.toContain('buckets');
    });

    it('shows an event repeated in a row once, with its count', async () => {
      const folded = await browser.newPage();
      try {
        const events = [
          { atMs: Date.now() - 5000, level: 'info', peer: 'n2', msg: 'peer discovered' },
          {
            atMs: Date.now(),
            level: 'info',
            peer: 'n2',
            msg: 'peer state changed',
            detail: { fields: ['hinted'] },
            count: 12,
          },
        ];
        await folded.route('**/api/events', (route) =>
          route.fulfill({ contentType: 'application/json', body: JSON.stringify({ events }) }),
        );
        await folded.goto(`http://${http.get('n1')}/`);
        await folded.waitForSelector('#updated[data-state=ok]');
        const items = await folded.locator('#events li').allTextContents();
        expect(items).toHaveLength(2);
        expect(items[0]).toMatch(/ n2 peer state changed \(hinted\) ×12$/);
        expect(items[1]).toMatch(/ n2 peer discovered$/);
      } finally {
        await folded.close();
      }
    });

    it('puts every header of the Buckets and Members tables over its values, Type included', async () => {
      const buckets = await columnsOf('#buckets table');
      expect(buckets.map((c) => c.header)).toEqual(['Bucket', 'Type', 'N', 'R', 'W', 'TTL', 'Siblings', 'Changed']);
      for (const c of buckets) {
        expect(c.cells, c.header).toEqual([8, 8, 8]); // a cell per header in every row
        expect(c.values, c.header).toBeGreaterThan(c.header === 'Changed' ? 1 : 2); // the default bucket has no change to show
        expect(c.over, `${c.header} is not over its values`).toBe(true);
      }
      const members = await columnsOf('#members');
      expect(members.map((c) => c.header)).toContain('Load');
      for (const c of members) {
        expect(
          c.cells.every((n) => n === members.length),
          c.header,
        ).toBe(true);
        expect(c.over, `${c.header} is not over its values`).toBe(true);
      }
    });

    it('shows a join in progress: the joiner, its pending ranges on the ring and its transfer', async () => {
      const n4 = cluster.node('n4');
      n4.start();
      http.set('n4', await httpOf(n4));
      await expect.poll(() => rowOf('n4').getAttribute('data-status'), { timeout: 30_000 }).toBe('joining');
      await expect
        .poll(() => page.locator('#ring path.pending[data-owner="n4"]').count(), { timeout: 30_000 })
        .toBeGreaterThan(0);
      await expect
        .poll(() => page.locator('#transfers').textContent(), { timeout: 30_000 })
        .toMatch(/n4 pulls for its join: \d+\/\d+ ranges|In progress: .*n4/);
      expect(await page.locator('#transfers').textContent()).toContain('In progress');
      const shot = process.env.RINGKV_SCREENSHOT
        ? join(import.meta.dirname, '../../docs/images/status-page.png')
        : join(mkdtempSync(join(tmpdir(), 'ringkv-page-')), 'status-page.png');
      await page.screenshot({ path: shot, fullPage: true });
    }, 90_000);

    it('marks a node killed mid-join down, and says so when the node serving the page dies', async () => {
      cluster.node('n4').signal('SIGKILL');
      await expect.poll(() => rowOf('n4').getAttribute('data-up'), { timeout: 40_000 }).toBe('false');
      expect(await rowOf('n4').locator('.code').textContent()).toBe('DJ');
      await expect.poll(() => page.locator('#events').textContent(), { timeout: 10_000 }).toContain('n4 peer down');

      cluster.node('n1').signal('SIGKILL');
      await page.waitForSelector('#banner.shown', { timeout: 15_000 });
      expect(await page.locator('#banner').textContent()).toContain('not answering');
      // What it last said stays on the screen.
      expect(await page.locator('#members tbody tr').count()).toBe(4);
    }, 90_000);
  });
});
