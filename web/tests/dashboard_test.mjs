// The dashboard and /metrics end to end: a real coordinator (tokens
// required, --http on 127.0.0.1) and a real CPU worker run a job submitted
// with the CLI, while headless Chromium (Debian's, driven by playwright-core)
// signs in and watches it, and /metrics is scraped during and after it. A
// second coordinator, with --allow-anonymous, serves the page without a
// sign-in, and is held up neither by idle and stalled connections nor, at its
// stop, by them. Screenshots are kept in TUNEFLEET_TEST_OUT. ctest runs it
// (web_dashboard):
//   TUNEFLEET_BIN_DIR  build/bin, with the coordinator, worker and CLI
//   CHROMIUM, PROMTOOL the system's chromium and promtool
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, existsSync, writeFileSync, chmodSync } from "node:fs";
import { connect } from "node:net";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const bin = process.env.TUNEFLEET_BIN_DIR;
const out = process.env.TUNEFLEET_TEST_OUT;
for (const name of ["TUNEFLEET_BIN_DIR", "TUNEFLEET_TEST_OUT", "CHROMIUM", "PROMTOOL"]) {
  if (!process.env[name]) throw new Error(`${name} is not set: run this through ctest (ctest -R web_dashboard)`);
}
mkdirSync(out, { recursive: true });
const dir = mkdtempSync(join(out, "run-"));
const children = [];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what, timeoutMs, condition) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

function start(name, args, logName = name) {
  const log = join(dir, `${logName}.log`);
  writeFileSync(log, "");
  const child = spawn(join(bin, name), args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", (d) => writeFileSync(log, d, { flag: "a" }));
  child.stderr.on("data", (d) => writeFileSync(log, d, { flag: "a" }));
  children.push(child);
  return child;
}

const readPort = (file) => (existsSync(file) ? Number(readFileSync(file, "utf8").trim()) || 0 : 0);

// A coordinator with both ports on 127.0.0.1, its files in dir/NAME.
async function startCoordinator(name, ...flags) {
  const home = join(dir, name);
  mkdirSync(home);
  const child = start(
    "tunefleet-coordinator",
    [
      "--listen", "127.0.0.1:0", "--plaintext",
      "--db", join(home, "tf.db"), "--artifacts", join(home, "artifacts"),
      "--port-file", join(home, "grpc.port"),
      "--http", "127.0.0.1:0", "--http-port-file", join(home, "http.port"),
      ...flags,
    ],
    name,
  );
  const grpcPort = await waitFor(`the coordinator ${name}`, 60_000, () => readPort(join(home, "grpc.port")));
  const httpPort = await waitFor(`the dashboard port of ${name}`, 10_000, () => readPort(join(home, "http.port")));
  return { child, home, grpcAddress: `127.0.0.1:${grpcPort}`, httpPort, base: `http://127.0.0.1:${httpPort}` };
}

// A connection of its own to `port` that sends `text`, then nothing: what
// comes back, and how long it lasted once the server closes it.
// What `promise` gives, or a failure naming `what` after `ms`: a wait that
// does not end fails the test instead of holding it until ctest's limit.
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const heldSockets = [];
function hold(port, text = "") {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    heldSockets.push(socket);
    let received = "";
    socket.on("data", (data) => (received += data));
    socket.on("error", reject);
    socket.on("connect", () => {
      const opened = Date.now();
      if (text) socket.write(text);
      const closed = new Promise((done) => socket.on("close", () => done({ ms: Date.now() - opened, received })));
      resolve({ socket, closed });
    });
  });
}

let grpcAddress = "";
function cli(token, ...args) {
  const run = spawnSync(join(bin, "tunefleet"), ["--coordinator", grpcAddress, "--token-file", token, ...args], {
    encoding: "utf8",
  });
  return run;
}

function tokenFile(name, text) {
  const path = join(dir, `${name}.token`);
  writeFileSync(path, text.trim() + "\n");
  chmodSync(path, 0o600);
  return path;
}

// One scrape of /metrics, parsed into {"name{labels}": value}.
async function scrape(base, token) {
  const response = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  const samples = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    samples[line.slice(0, space)] = Number(line.slice(space + 1));
  }
  return { text, samples };
}

// The sum of a metric's samples whose labels include every one of `match`.
function sum(samples, name, match = {}) {
  let total = 0;
  for (const [key, value] of Object.entries(samples)) {
    const brace = key.indexOf("{");
    if ((brace < 0 ? key : key.slice(0, brace)) !== name) continue;
    if (Object.entries(match).every(([k, v]) => key.includes(`${k}="${v}"`))) total += value;
  }
  return total;
}

after(async () => {
  for (const socket of heldSockets) socket.destroy();
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  await sleep(500);
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
});

test("the dashboard follows a job; /metrics counts it", { timeout: 400_000 }, async (t) => {
  // A coordinator that requires tokens.
  const coordinator = await startCoordinator("tunefleet-coordinator", "--build-jobs", "2");
  grpcAddress = coordinator.grpcAddress;
  const base = coordinator.base;
  const admin = join(coordinator.home, "tf.db.admin-token");
  const make = (role, name = `web-${role}`) => {
    const made = cli(admin, "token", "create", "--role", role, "--name", name);
    assert.equal(made.status, 0, made.stderr);
    return made.stdout.trim();
  };
  const reader = make("reader");
  const submitter = make("submitter");
  const otherSubmitter = make("submitter", "web-other-submitter");
  const worker = make("worker");
  const workerToken = tokenFile("worker", worker);

  await t.test("requests without a valid token are refused", async () => {
    for (const path of ["/api/jobs", "/api/jobs/1", "/api/jobs/1/results", "/api/workers", "/api/kernels", "/api/kernels/web_axpy/best", "/metrics"]) {
      const none = await fetch(base + path);
      assert.equal(none.status, 401, `${path} without a token`);
      assert.match(none.headers.get("www-authenticate"), /^Bearer/);
      const refusal = (await none.json()).error;
      assert.match(refusal, /no bearer token/);
      assert.ok(refusal.includes(`'Authorization: Bearer TOKEN' (${path} needs one)`), refusal);
      const wrong = await fetch(base + path, { headers: { Authorization: "Bearer tf_999_nonsense" } });
      assert.equal(wrong.status, 401, `${path} with an unknown token`);
    }
    // The scheme is case-insensitive, as HTTP says.
    const lowercase = await fetch(`${base}/api/jobs`, { headers: { Authorization: `bearer ${reader}` } });
    assert.equal(lowercase.status, 200);
    const notBearer = await fetch(`${base}/api/jobs`, { headers: { Authorization: `Basic ${reader}` } });
    assert.equal(notBearer.status, 401);
    // A submitter sees its own jobs, not the fleet-wide counts.
    const own = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${submitter}` } });
    assert.equal(own.status, 403);
    // The page itself holds no data and is served to anyone.
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script src="\/app.js">/);
  });

  await t.test("the page posts no form and takes no other base URL; no HSTS over HTTP", async () => {
    // Sign-in stays in the page's script; browsers ignore HSTS without TLS.
    const page = await fetch(`${base}/`);
    const policy = page.headers.get("content-security-policy");
    assert.match(policy, /(^|; )form-action 'none'(;|$)/, policy);
    assert.match(policy, /(^|; )base-uri 'none'(;|$)/, policy);
    assert.equal(page.headers.get("strict-transport-security"), null);
  });

  const before = await scrape(base, reader);
  start("tunefleet-worker", [
    "--coordinator", grpcAddress, "--devices", "cpu:1",
    "--cache", join(dir, "worker-cache"), "--token-file", workerToken,
    "--lock-dir", join(dir, "worker-locks"),  // its own, beside tests that run at once
  ]);
  await waitFor("the worker to register", 60_000, async () => {
    const r = await fetch(`${base}/api/workers`, { headers: { Authorization: `Bearer ${reader}` } });
    return (await r.json()).some((w) => w.alive);
  });
  // Counted by code: a call without a token.
  const refused = spawnSync(join(bin, "tunefleet"), ["--coordinator", grpcAddress, "jobs"], { encoding: "utf8" });
  assert.notEqual(refused.status, 0);

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ["--no-sandbox"] });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));

  await t.test("the page asks for a token and refuses a wrong one", async () => {
    await page.goto(`${base}/`);
    await page.waitForSelector("#token");
    assert.equal(await page.locator("#signin-error").count(), 0, "a first visit is no error");
    await page.fill("#token", "tf_1_wrong");
    await page.click("button[type=submit]");
    await page.waitForSelector("#signin-error");
    assert.match(await page.textContent("#signin-error"), /unknown token|token/);
    // A character no header can carry goes back to the form too, rather
    // than to "cannot reach the coordinator" for ever.
    await page.fill("#token", "tf_1_\u2014wrong");
    await page.click("button[type=submit]");
    await page.waitForFunction(() =>
      document.querySelector("#signin-error")?.textContent.includes("that is not a token"));
    await page.fill("#token", reader);
    await page.click("button[type=submit]");
    await page.waitForSelector("#jobs");
  });

  // A second tab shows the workers, polling, while the job runs.
  const workersTab = await browser.newPage({ viewport: { width: 1400, height: 500 } });
  await workersTab.addInitScript((token) => sessionStorage.setItem("tunefleet.token", token), reader);
  await workersTab.goto(`${base}/#/workers`);
  await workersTab.waitForSelector("td.doing");

  const submitted = spawnSync(
    join(bin, "tunefleet"),
    ["--coordinator", grpcAddress, "--token-file", tokenFile("submitter", submitter), "--json", "submit", join(here, "data/axpy.yaml")],
    { encoding: "utf8" },
  );
  assert.equal(submitted.status, 0, submitted.stderr);
  const jobId = JSON.parse(submitted.stdout).job_id;
  assert.ok(jobId > 0);

  // /metrics, scraped four times a second while the job runs.
  const scrapes = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      scrapes.push(await scrape(base, reader));
      await sleep(250);
    }
  })();

  // The job's page follows it from the start; its requests for results.
  const resultsAsked = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.endsWith("/results")) resultsAsked.push(url.searchParams.get("since_ms"));
  });
  await page.goto(`${base}/#/jobs/${jobId}`);
  const seen = [];
  let workerDoing = "";
  // Leases as the job's submitter and another submitter see them.
  const leasesSeenBy = async (token) => {
    const workers = await (await fetch(`${base}/api/workers`, { headers: { Authorization: `Bearer ${token}` } })).json();
    return workers.flatMap((w) => w.devices.flatMap((d) => d.leases));
  };
  let ownLeases = [];
  let othersLeases = [];
  await waitFor("the job to end on the page", 300_000, async () => {
    if (!ownLeases.length) ownLeases = await leasesSeenBy(submitter);
    if (!othersLeases.length) othersLeases = await leasesSeenBy(otherSubmitter);
    const text = await page.textContent("#job-summary .progress-text").catch(() => null);
    if (text && seen[seen.length - 1] !== text) seen.push(text);
    const [done, total] = (text || "0 / 1").split(" / ").map(Number);
    const shown = await page.locator("#results tbody tr[data-candidate]").evaluateAll((rows) =>
      rows.map((r) => r.dataset.candidate),
    );
    assert.equal(new Set(shown).size, shown.length, `a result shown twice: ${shown}`);
    if (!workerDoing) {
      const doing = await workersTab.textContent("td.doing");
      if (doing.includes("job #")) {
        workerDoing = doing;
        await workersTab.screenshot({ path: join(out, "workers.png"), timeout: 120_000 });
      }
    }
    return (await page.locator("#job-summary .badge:is(.succeeded, .failed, .cancelled)").count()) > 0;
  });
  assert.equal(await page.textContent("#job-summary .badge"), "succeeded");
  // The page may have drawn the end between the loop's last read of the
  // progress and its look at the badge.
  const endText = await page.textContent("#job-summary .progress-text");
  if (seen[seen.length - 1] !== endText) seen.push(endText);
  sampling = false;
  await sampler;
  const midJob = scrapes.filter((s) => sum(s.samples, "tunefleet_jobs", { state: "running" }) === 1);

  const headers = { Authorization: `Bearer ${reader}` };
  const job = await (await fetch(`${base}/api/jobs/${jobId}`, { headers })).json();
  const results = await (await fetch(`${base}/api/jobs/${jobId}/results`, { headers })).json();
  const ok = results.filter((r) => r.status === "ok");
  const compileFailed = results.filter((r) => r.status === "compile_failed");

  await t.test("the job ran as the spec says", () => {
    assert.equal(job.candidates_total, 40);
    assert.equal(results.length, 40);
    assert.equal(compileFailed.length, 8, "UNROLL=3: 4 blocks x 2 problems");
    assert.equal(ok.length, 32);
    assert.equal(job.best.length, 2);
  });

  await t.test("the API answers in the JSON the CLI prints", () => {
    const readerFile = tokenFile("reader", reader);
    const status = cli(readerFile, "status", String(jobId), "--json");
    assert.equal(status.status, 0, status.stderr);
    assert.deepEqual(job, JSON.parse(status.stdout));
    const listed = cli(readerFile, "results", String(jobId), "--json");
    assert.equal(listed.status, 0, listed.stderr);
    const byId = (a, b) => a.candidate_id - b.candidate_id;
    const recorded = results.map(({ recorded_unix_ms, ...rest }) => {
      assert.ok(recorded_unix_ms >= job.created_unix_ms);
      return rest;
    });
    assert.deepEqual(recorded.sort(byId), JSON.parse(listed.stdout).sort(byId));
  });

  await t.test("a limit that is not a number of jobs is refused, 0 lists the default", async () => {
    for (const limit of ["abc", "-1", "2x", ""]) {
      const r = await fetch(`${base}/api/jobs?limit=${limit}`, { headers });
      assert.equal(r.status, 400, `limit=${limit}`);
      assert.ok((await r.json()).error.includes(`limit: '${limit}'`), `limit=${limit}`);
    }
    const all = await (await fetch(`${base}/api/jobs`, { headers })).json();
    assert.deepEqual(await (await fetch(`${base}/api/jobs?limit=0`, { headers })).json(), all);
    assert.deepEqual(await (await fetch(`${base}/api/jobs?limit=1`, { headers })).json(), all.slice(0, 1));
  });

  await t.test("since_ms lists the results recorded from then on; anything but a time is refused", async () => {
    const url = `${base}/api/jobs/${jobId}/results`;
    for (const since of ["abc", "-1", "2x", ""]) {
      const r = await fetch(`${url}?since_ms=${since}`, { headers });
      assert.equal(r.status, 400, `since_ms=${since}`);
      assert.ok((await r.json()).error.includes(`since_ms: '${since}'`), `since_ms=${since}`);
    }
    const ids = (list) => list.map((r) => r.candidate_id).sort((a, b) => a - b);
    assert.deepEqual(ids(await (await fetch(`${url}?since_ms=0`, { headers })).json()), ids(results));
    // Build failures come before measurements: at least two moments.
    const times = [...new Set(results.map((r) => r.recorded_unix_ms))].sort((a, b) => a - b);
    const since = times[Math.floor(times.length / 2)];
    const later = await (await fetch(`${url}?since_ms=${since}`, { headers })).json();
    assert.ok(later.length > 0 && later.length < results.length, `${later.length} of ${results.length}`);
    assert.deepEqual(ids(later), ids(results.filter((r) => r.recorded_unix_ms >= since)));
  });

  await t.test("a submitter sees which job a device works on only for its own jobs", () => {
    assert.ok(ownLeases.length && othersLeases.length, "no lease seen while the job ran");
    assert.equal(ownLeases[0].job_id, jobId);
    assert.equal(ownLeases[0].kernel, "web_axpy");
    assert.equal(othersLeases[0].job_id, null);
    assert.equal(othersLeases[0].kernel, null);
    assert.ok(othersLeases[0].candidates > 0);
  });

  await t.test("a page that loses the coordinator says so and recovers by itself", async () => {
    await workersTab.context().setOffline(true);
    await workersTab.waitForSelector("#offline:not([hidden])");
    assert.match(await workersTab.textContent("#offline"), /cannot reach the coordinator.*trying again/);
    await workersTab.context().setOffline(false);
    await workersTab.waitForSelector("#offline", { state: "hidden" });
    assert.ok((await workersTab.locator("td.doing").count()) > 0);
  });

  await t.test("the workers page showed the device working on the job", () => {
    assert.match(workerDoing, new RegExp(`job #${jobId} web_axpy: \\d+ candidates \\(lease \\d+\\) for`));
  });

  await t.test("progress moved on the page", () => {
    const done = seen.map((s) => Number(s.split(" / ")[0]));
    assert.ok(done.length >= 3, `progress seen: ${seen.join(", ")}`);
    for (let i = 1; i < done.length; i++) assert.ok(done[i] > done[i - 1], `progress went back: ${seen.join(", ")}`);
    assert.equal(seen[seen.length - 1], "40 / 40");
  });

  await t.test("the job's page asked only for new results while the job ran", () => {
    const since = resultsAsked.map(Number); // absent: 0, all of them
    const incremental = since.filter((ms) => ms > 0);
    assert.ok(incremental.length > 0, `since_ms asked: ${resultsAsked}`);
    // Each time, when the newest result it held was recorded.
    const recorded = new Set(results.map((r) => r.recorded_unix_ms));
    for (const ms of incremental) assert.ok(recorded.has(ms), `since_ms=${ms} is no result's time`);
    assert.equal(since[since.length - 1], 0, "once the job ended, all of them");
  });

  // Charts redraw once the last results are in; then count their points.
  await page.waitForFunction(
    (n) => window.tunefleet.charts.get("convergence-evaluations")?.getOption().series.reduce((a, s) => a + s.data.length, 0) === n,
    results.length,
    { timeout: 10_000 },
  );
  const drawn = await page.evaluate(() => {
    const points = (name) => window.tunefleet.charts.get(name).getOption().series.map((s) => s.data.length);
    const names = [...window.tunefleet.charts.keys()];
    return Object.fromEntries(names.map((n) => [n, points(n)]));
  });

  await t.test("the plots draw a point per evaluation and per successful result", () => {
    const total = (name) => drawn[name].reduce((a, b) => a + b, 0);
    // Convergence: a line per problem, a point per evaluation (failures too).
    assert.deepEqual(drawn["convergence-evaluations"], [20, 20]);
    assert.deepEqual(drawn["convergence-time"], [20, 20]);
    // A chart per knob, a point per successful result; parallel coordinates:
    // a line per successful result.
    assert.equal(total("knob-UNROLL"), ok.length);
    assert.equal(total("knob-BLOCK"), ok.length);
    assert.deepEqual(drawn.parallel, [ok.length]);
  });

  await t.test("results are sortable and failures show the compiler's message", async () => {
    assert.equal(await page.locator("#results tbody tr[data-candidate]").count(), 40);
    const diag = await page.locator("#results pre.diag").first().textContent();
    assert.match(diag, /UNROLL=3 is not supported/);
    // Sorted by median by default: fastest first, failures last.
    const medianOrder = await page.locator("#results tbody tr[data-candidate]").evaluateAll((rows) =>
      rows.map((r) => r.querySelector(".badge").textContent),
    );
    assert.equal(medianOrder[0], "ok");
    assert.equal(medianOrder[39], "compile failed");
    await page.click('#results th[data-column="#"]');
    const ids = await page.locator("#results tbody tr[data-candidate]").evaluateAll((rows) =>
      rows.map((r) => Number(r.dataset.candidate)),
    );
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
    await page.click('#results th[data-column="#"]');
    const down = await page.locator("#results tbody tr[data-candidate]").evaluateAll((rows) =>
      rows.map((r) => Number(r.dataset.candidate)),
    );
    assert.deepEqual(down, [...ids].reverse());
    await page.click('#results th[data-column="median"]');
  });

  await page.screenshot({ path: join(out, "job.png"), fullPage: true, timeout: 120_000 });
  await page.goto(`${base}/#/jobs`);
  await page.waitForSelector(`tr[data-job="${jobId}"] .badge.succeeded`);
  assert.equal(await page.textContent(`tr[data-job="${jobId}"] .progress-text`), "40 / 40");
  await page.screenshot({ path: join(out, "jobs.png"), timeout: 120_000 });
  await t.test("the kernels page lists the tuned kernel; its page shows its best configurations", async () => {
    // Each problem's winner, its variables and knobs as text in any order.
    const words = (text) => text.split(" ").sort();
    const asText = (object) => Object.entries(object).map(([k, v]) => `${k}=${v}`).sort();
    await page.goto(`${base}/#/kernels`);
    const row = page.locator('#kernels tr[data-kernel="web_axpy"]');
    await row.waitFor();
    assert.equal(await page.locator('[data-nav="kernels"].active').count(), 1);
    const cells = await row.locator("td").allTextContents();
    assert.deepEqual(cells.slice(0, 4), ["web_axpy", "web-submitter", "2", job.device_class]);
    assert.match(cells[4], / s ago$| min ago$/);
    await page.screenshot({ path: join(out, "kernels.png"), timeout: 120_000 });
    await row.locator("a").click();
    await page.waitForSelector("#kernel-best tbody tr td code");
    assert.equal(new URL(page.url()).hash, "#/kernels/web_axpy");
    assert.match(await page.textContent("#kernel-summary h1"), /web_axpy/);
    const bests = await page.locator("#kernel-best tbody tr").evaluateAll((rows) =>
      rows.map((r) => ({
        cells: [...r.children].map((td) => td.textContent),
        job: r.querySelector("a").getAttribute("href"),
      })),
    );
    assert.equal(bests.length, job.best.length);
    for (const best of job.best) {
      const shown = bests.find((b) => words(b.cells[0]).join() === asText(best.problem).join());
      assert.ok(shown, `no row for ${asText(best.problem)}`);
      assert.equal(shown.cells[1], job.device_class);
      assert.deepEqual(words(shown.cells[2]), asText(best.config));
      assert.match(shown.cells[3], /\d (ns|µs|ms|s)$/);
      assert.equal(shown.job, `#/jobs/${jobId}`);
    }
    await page.screenshot({ path: join(out, "kernel.png"), timeout: 120_000 });
  });

  await t.test("/api/kernels answers by the roles of ListKernels, its bests by ListBest's", async () => {
    const as = (token, path) => fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    for (const token of [reader, submitter, otherSubmitter]) {
      const kernels = await (await as(token, "/api/kernels")).json();
      assert.deepEqual(kernels.map((k) => k.name), ["web_axpy"]);
      assert.equal(kernels[0].owner, "web-submitter");
      assert.equal((await (await as(token, "/api/kernels/web_axpy/best")).json()).length, 2);
    }
    for (const path of ["/api/kernels", "/api/kernels/web_axpy/best"]) {
      const refused = await as(worker, path);
      assert.equal(refused.status, 403, path);
      assert.match((await refused.json()).error, /role 'worker' may not call List(Kernels|Best)/);
    }
    const of = async (deviceClass) =>
      (await (await as(reader, `/api/kernels?device_class=${encodeURIComponent(deviceClass)}`)).json()).map((k) => k.name);
    assert.deepEqual(await of(job.device_class), ["web_axpy"]);
    assert.deepEqual(await of("nowhere"), []);
    assert.deepEqual(await (await as(reader, "/api/kernels/no_such_kernel/best")).json(), []);
  });

  await t.test("the page raised no script error", () => assert.deepEqual(pageErrors, []));

  const last = await scrape(base, reader);
  await t.test("/metrics passes promtool and its counters moved", () => {
    const lint = spawnSync(process.env.PROMTOOL, ["check", "metrics"], { input: last.text, encoding: "utf8" });
    assert.equal(lint.status, 0, `promtool check metrics: ${lint.error ?? ""}\n${lint.stdout}${lint.stderr}`);
    writeFileSync(join(out, "metrics.txt"), last.text);

    assert.ok(midJob.length > 0, "no scrape landed while the job ran");
    const measured = (s) => sum(s.samples, "tunefleet_results_recorded_total", { origin: "worker" });
    const during = midJob.map(measured);
    assert.equal(measured(before), 0);
    assert.ok(during.some((n) => n > 0 && n < 32), `worker results in mid-job scrapes: ${during}`);
    assert.equal(measured(last), 32);
    assert.equal(sum(last.samples, "tunefleet_results_recorded_total", { status: "compile_failed", origin: "build" }), 8);
    assert.equal(sum(last.samples, "tunefleet_jobs", { state: "succeeded" }), 1);
    assert.ok(midJob.some((s) => sum(s.samples, "tunefleet_leases_active") >= 1), "a lease was active mid-job");
    assert.ok(
      midJob.some((s) => sum(s.samples, "tunefleet_candidates_queued", { waiting_for: "lease" }) > 0),
      "candidates queued for a lease mid-job",
    );
    assert.equal(sum(last.samples, "tunefleet_leases_active"), 0);
    assert.equal(sum(last.samples, "tunefleet_workers", { state: "alive" }), 1);
    assert.ok(sum(last.samples, "tunefleet_build_duration_seconds_count") >= 1);
    assert.ok(sum(last.samples, "tunefleet_compiler_runs_total") >= 2);
    assert.equal(sum(last.samples, "tunefleet_build_configurations_total", { outcome: "failed" }), 4);
    assert.ok(sum(last.samples, "tunefleet_lease_acquire_seconds_count") >= 1);
    assert.ok(sum(last.samples, "tunefleet_device_busy_seconds_total") > 0.5, "a device was busy for the job");
    assert.ok(
      sum(last.samples, "tunefleet_device_busy_seconds_total") >= sum(midJob[0].samples, "tunefleet_device_busy_seconds_total"),
    );
    assert.equal(sum(last.samples, "tunefleet_grpc_server_handled_total", { grpc_method: "SubmitJob", grpc_code: "OK" }), 1);
    assert.ok(sum(last.samples, "tunefleet_grpc_server_handled_total", { grpc_method: "ListJobs", grpc_code: "UNAUTHENTICATED" }) >= 1);
    assert.ok(
      sum(last.samples, "tunefleet_grpc_server_handled_total", { grpc_method: "ReportResults", grpc_code: "OK" }) >
        sum(midJob[0].samples, "tunefleet_grpc_server_handled_total", { grpc_method: "ReportResults", grpc_code: "OK" }),
    );
  });
});

test("an anonymous coordinator: the page needs no sign-in; slow clients hold nothing up", { timeout: 120_000 }, async (t) => {
  const coordinator = await startCoordinator("anonymous-coordinator", "--allow-anonymous");
  const { base, httpPort } = coordinator;

  await t.test("the page shows the jobs without asking for a token", async () => {
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage();
      const pageErrors = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await page.goto(`${base}/`);
      // The row is drawn once the API has answered.
      await page.waitForSelector("#jobs tbody tr", { timeout: 10_000 });
      assert.equal(await page.locator("#token").count(), 0);
      assert.ok(await page.locator("#sign-out").isHidden());
      assert.deepEqual(pageErrors, []);
    } finally {
      await browser.close();
    }
  });

  await t.test("without a token, only requests addressed to an IP address or localhost are answered", async () => {
    // What a page on another site sends once its name points here (DNS
    // rebinding): its own name as the Host.
    const ask = async (host) => {
      const request = `GET /api/jobs HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
      return (await within((await hold(httpPort, request)).closed, 10_000, host)).received;
    };
    const rebound = await ask(`rebound.example:${httpPort}`);
    assert.match(rebound, /^HTTP\/1\.1 403 /);
    assert.match(rebound, /answers only requests addressed to an IP address or localhost, not to 'rebound\.example:\d+'/);
    for (const host of [`localhost:${httpPort}`, `127.0.0.1:${httpPort}`, `[::1]:${httpPort}`, "[::1]"]) {
      assert.match(await ask(host), /^HTTP\/1\.1 200 /, host);
    }
    // In brackets, only an IPv6 address.
    for (const host of [`[not-an-address]:${httpPort}`, `[::1]${httpPort}`, `[::1]:x`]) {
      assert.match(await ask(host), /^HTTP\/1\.1 403 /, host);
    }
  });

  await t.test("refusals httplib makes by itself say what they are", async () => {
    const tooLarge = await hold(httpPort, `GET /api/jobs HTTP/1.1\r\nX-Padding: ${"x".repeat(9000)}\r\n\r\n`);
    const { received } = await within(tooLarge.closed, 15_000, "the answer to an oversized header");
    assert.match(received, /^HTTP\/1\.1 400 /);
    assert.match(received, /"error":"bad request \(400\): [^"]*header line over 8192 bytes"/);
    const longUri = await fetch(`${base}/api/jobs?padding=${"x".repeat(9000)}`);
    assert.equal(longUri.status, 414);
    assert.match((await longUri.json()).error, /^URI too long \(414\)/);
    const missing = await fetch(`${base}/nope`);
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).error, "no such page: /nope");
  });

  await t.test("idle and stalled connections hold up no request, and are dropped within seconds", async () => {
    // More than httplib's default pool (8 threads up to 9 cores): connections
    // kept open after a request, and ones whose request stops half way. (An
    // idle one sends a request first: one that sent nothing and was dropped
    // from the listen queue under a burst of connections from a loaded
    // machine would never learn it, and wait for ever.)
    const idle = await Promise.all(
      Array.from({ length: 16 }, () => hold(httpPort, "GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")),
    );
    const stalled = await Promise.all(
      Array.from({ length: 8 }, () => hold(httpPort, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")),
    );
    const asked = Date.now();
    const metrics = await within(fetch(`${base}/metrics`), 10_000, "/metrics beside 24 connections");
    assert.equal(metrics.status, 200);
    const took = Date.now() - asked;
    assert.ok(took < 2000, `/metrics took ${took} ms beside 24 idle or stalled connections`);
    // Idle: answered, then 2 s. Stalled: 2 s for the rest of the request,
    // answered 400, then 2 s for another one.
    const idleEnds = await within(Promise.all(idle.map((c) => c.closed)), 15_000, "the idle connections' end");
    const idleLasted = idleEnds.map((end) => end.ms);
    for (const end of idleEnds) assert.match(end.received, /^HTTP\/1\.1 200 /);
    assert.ok(Math.max(...idleLasted) < 3500, `idle connections lasted ${idleLasted} ms`);
    const stalledEnds = await within(Promise.all(stalled.map((c) => c.closed)), 15_000, "the stalled connections' end");
    const stalledLasted = stalledEnds.map((end) => end.ms);
    assert.ok(Math.max(...stalledLasted) < 6000, `stalled connections lasted ${stalledLasted} ms`);
    for (const end of stalledEnds) assert.match(end.received, /^HTTP\/1\.1 400 [^]*"error":"bad request \(400\)/);
  });

  await t.test("the coordinator stops within seconds while clients hold connections", async () => {
    await Promise.all(Array.from({ length: 4 }, () => hold(httpPort)));
    // Stalled longer than the server waits for the rest of a request, but
    // not for ever: a byte every 3 s.
    const trickling = await hold(httpPort, "GET /metrics HTTP/1.1\r\n");
    const trickle = setInterval(() => trickling.socket.write("X"), 3000);
    const exited = new Promise((resolve) => coordinator.child.on("exit", (code) => resolve(code)));
    const asked = Date.now();
    coordinator.child.kill("SIGTERM");
    const code = await Promise.race([exited, sleep(10_000).then(() => "still running")]);
    clearInterval(trickle);
    assert.equal(code, 0);
    const took = Date.now() - asked;
    assert.ok(took < 6000, `the coordinator took ${took} ms to stop`);
  });
});
