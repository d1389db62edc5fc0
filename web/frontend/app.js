// The TuneFleet dashboard: a single page over the coordinator's JSON API
// (web/dashboard_server.h). The page asks the API without a token until it
// is refused (401; a coordinator with --allow-anonymous needs none), then asks
// for one, kept in sessionStorage (this tab only); every request carries it
// in an Authorization header. Pages poll the API every second while shown.
import * as echarts from "echarts/core";
import { LineChart, ScatterChart, ParallelChart } from "echarts/charts";
import {
  GridComponent,
  LegendComponent,
  TooltipComponent,
  ParallelComponent,
  VisualMapComponent,
} from "echarts/components";
import { CanvasRenderer } from "echarts/renderers";

echarts.use([
  LineChart,
  ScatterChart,
  ParallelChart,
  GridComponent,
  LegendComponent,
  TooltipComponent,
  ParallelComponent,
  VisualMapComponent,
  CanvasRenderer,
]);

const TOKEN_KEY = "tunefleet.token";
const POLL_MS = 1000;
const MAX_ROWS = 1000;
const main = document.getElementById("main");

// The charts now on the page, by name: for the browser's console and the
// end-to-end test (web/tests/dashboard_test.mjs).
const charts = new Map();
window.tunefleet = { charts };

// ---- the API ------------------------------------------------------------

class Unauthorized extends Error {}
// A request that failed or a server error: the page keeps asking.
class Unreachable extends Error {}

async function api(path) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  let headers;
  try {
    headers = new Headers(token ? { Authorization: `Bearer ${token}` } : {});
  } catch {
    // A pasted character a header cannot carry: no token has one.
    throw new Unauthorized("that is not a token: a token is tf_ID_SECRET, in plain ASCII");
  }
  let response;
  try {
    response = await fetch(path, { headers, cache: "no-store" });
  } catch (error) {
    throw new Unreachable(`cannot reach the coordinator (${error.message})`);
  }
  const body = await response.json().catch(() => ({}));
  // Refused without a token: a first visit, not an error to show.
  if (response.status === 401) throw new Unauthorized(token ? body.error || "unauthorized" : "");
  if (response.status >= 500) throw new Unreachable(body.error || `${path}: HTTP ${response.status}`);
  if (!response.ok) throw new Error(body.error || `${path}: HTTP ${response.status}`);
  return body;
}

// ---- small helpers ------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function badge(text) {
  return el("span", { class: `badge ${text}` }, text.replace("_", " "));
}

function formatNs(ns) {
  if (!(ns > 0)) return "";
  if (ns < 1e3) return `${ns.toFixed(0)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(ns < 1e4 ? 2 : 1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

function ago(unixMs) {
  if (!unixMs) return "";
  const s = Math.max(0, (Date.now() - unixMs) / 1000);
  if (s < 60) return `${s.toFixed(0)} s ago`;
  if (s < 3600) return `${(s / 60).toFixed(0)} min ago`;
  if (s < 86400) return `${(s / 3600).toFixed(1)} h ago`;
  return new Date(unixMs).toLocaleString();
}

const keyText = (object) =>
  Object.entries(object)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");

function progress(job) {
  const total = Math.max(job.candidates_total, 1);
  const ok = job.candidates_done - job.candidates_failed;
  return el(
    "div",
    { class: "progress", title: `${job.candidates_failed} failed` },
    el("div", { class: "done", style: `width:${(100 * ok) / total}%` }),
    el("div", {
      class: "failed",
      style: `left:${(100 * ok) / total}%;width:${(100 * job.candidates_failed) / total}%`,
    }),
    el("span", { class: "progress-text" }, `${job.candidates_done} / ${job.candidates_total}`),
  );
}

const finished = (job) => ["succeeded", "failed", "cancelled"].includes(job.state);

// ---- pages --------------------------------------------------------------

let stopPolling = () => {};

function poll(refresh) {
  let timer = null;
  let stopped = false;
  const tick = async () => {
    try {
      const again = await refresh();
      document.getElementById("live").hidden = !again;
      if (again !== false && !stopped) timer = setTimeout(tick, POLL_MS);
      document.getElementById("offline").hidden = true;
    } catch (error) {
      if (error instanceof Unauthorized) return signIn(error.message);
      if (!(error instanceof Unreachable)) {
        main.replaceChildren(el("div", { class: "card error" }, error.message));
        return;
      }
      // A restart or a network blip: the page stays as it was and asks again.
      const offline = document.getElementById("offline");
      offline.textContent = `${error.message}; trying again`;
      offline.hidden = false;
      document.getElementById("live").hidden = true;
      if (!stopped) timer = setTimeout(tick, POLL_MS);
    }
  };
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function signIn(message) {
  stopPolling();
  sessionStorage.removeItem(TOKEN_KEY);
  document.getElementById("sign-out").hidden = true;
  const input = el("input", {
    type: "password",
    id: "token",
    autocomplete: "off",
    placeholder: "tf_…",
  });
  const form = el(
    "form",
    {
      class: "card signin",
      onsubmit: (event) => {
        event.preventDefault();
        sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        route();
      },
    },
    el("h1", {}, "Sign in"),
    el(
      "p",
      { class: "muted" },
      "Paste a TuneFleet token (reader, submitter or admin), as made by ",
      el("code", {}, "tunefleet token create"),
      ". It is kept in this tab only.",
    ),
    message && el("p", { class: "error", id: "signin-error" }, message),
    el("label", { for: "token" }, "Token"),
    input,
    el("button", { type: "submit" }, "Sign in"),
  );
  main.replaceChildren(form);
  input.focus();
}

function jobsPage() {
  const body = el("tbody");
  main.replaceChildren(
    el(
      "div",
      { class: "card" },
      el("h1", {}, "Jobs"),
      el(
        "table",
        { id: "jobs" },
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            ["Job", "Kernel", "State", "Device class", "Progress", "Failed", "Reused", "Submitted"].map(
              (h) => el("th", {}, h),
            ),
          ),
        ),
        body,
      ),
    ),
  );
  return poll(async () => {
    const jobs = await api("/api/jobs?limit=200");
    body.replaceChildren(
      ...jobs.map((job) =>
        el(
          "tr",
          { "data-job": job.job_id },
          el("td", {}, el("a", { href: `#/jobs/${job.job_id}` }, `#${job.job_id}`)),
          el("td", {}, job.kernel),
          el("td", {}, badge(job.state)),
          el("td", {}, job.device_class || el("span", { class: "muted", title: job.waiting_for }, "waiting for a device")),
          el("td", {}, progress(job)),
          el("td", { class: "num" }, job.candidates_failed),
          el("td", { class: "num" }, job.candidates_cached),
          el("td", {}, ago(job.created_unix_ms)),
        ),
      ),
    );
    if (!jobs.length) {
      body.append(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "No jobs yet: tunefleet submit SPEC.yaml")));
    }
    return true;
  });
}

// The results in the order they were recorded.
const inOrder = (results) =>
  [...results].sort((a, b) => a.recorded_unix_ms - b.recorded_unix_ms || a.candidate_id - b.candidate_id);

function problemsOf(results) {
  const problems = [...new Set(results.map((r) => keyText(r.problem)))];
  return problems.sort();
}

function knobsOf(results) {
  const knobs = [];
  for (const r of results) for (const k of Object.keys(r.config)) if (!knobs.includes(k)) knobs.push(k);
  return knobs;
}

// Best median time per problem, among successful results.
function bestByProblem(results) {
  const best = new Map();
  for (const r of results) {
    if (r.status !== "ok") continue;
    const p = keyText(r.problem);
    if (!best.has(p) || r.median_ns < best.get(p)) best.set(p, r.median_ns);
  }
  return best;
}

function chart(name, container) {
  let instance = charts.get(name);
  if (!instance || instance.getDom() !== container) {
    instance = echarts.init(container);
    charts.set(name, instance);
  }
  return instance;
}

const sortValue = (a, b) =>
  typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b), undefined, { numeric: true });

// Best so far against evaluations and against time since the job was
// submitted: one line per problem, one point per evaluation (failures
// included, as evaluations spent), empty until the problem's first success.
function drawConvergence(job, results, byEvalEl, byTimeEl) {
  const problems = problemsOf(results);
  const series = { evals: new Map(), time: new Map() };
  const state = new Map(problems.map((p) => [p, { n: 0, best: Infinity }]));
  for (const p of problems) {
    series.evals.set(p, []);
    series.time.set(p, []);
  }
  for (const r of inOrder(results)) {
    const p = keyText(r.problem);
    const s = state.get(p);
    s.n += 1;
    if (r.status === "ok") s.best = Math.min(s.best, r.median_ns);
    const y = Number.isFinite(s.best) ? s.best / 1e3 : "-";
    series.evals.get(p).push([s.n, y]);
    series.time.get(p).push([Math.max(0, (r.recorded_unix_ms - job.created_unix_ms) / 1000), y]);
  }
  const option = (xName, data) => ({
    animation: false,
    tooltip: { trigger: "axis", valueFormatter: (v) => (typeof v === "number" ? `${v.toFixed(2)} µs` : "") },
    legend: { top: 0, type: "scroll" },
    grid: { left: 60, right: 20, top: 36, bottom: 40 },
    xAxis: { type: "value", name: xName, nameLocation: "middle", nameGap: 26, minInterval: 1 },
    yAxis: { type: "log", name: "best median (µs)", nameTextStyle: { align: "left" }, scale: true },
    series: problems.map((p) => ({
      name: p,
      type: "line",
      step: "end",
      showSymbol: true,
      symbolSize: 4,
      data: data.get(p),
    })),
  });
  chart("convergence-evaluations", byEvalEl).setOption(option("evaluations", series.evals), true);
  const byTime = option("seconds since submission", series.time);
  byTime.xAxis.minInterval = 0;
  chart("convergence-time", byTimeEl).setOption(byTime, true);
}

// Each knob against time relative to the best of its problem: one chart per
// knob, one point per successful result.
function drawKnobs(results, container) {
  const ok = results.filter((r) => r.status === "ok");
  const best = bestByProblem(results);
  const problems = problemsOf(ok);
  const knobs = knobsOf(results);
  if (container.dataset.knobs !== knobs.join(",")) {
    container.dataset.knobs = knobs.join(",");
    container.replaceChildren(
      ...knobs.map((k) =>
        el("div", {}, el("h2", {}, k), el("div", { class: "chart small", "data-knob": k })),
      ),
    );
  }
  for (const k of knobs) {
    const values = [...new Set(results.map((r) => r.config[k]))].sort(sortValue).map(String);
    chart(`knob-${k}`, container.querySelector(`[data-knob="${CSS.escape(k)}"]`)).setOption(
      {
        animation: false,
        tooltip: {
          trigger: "item",
          // Knob values and problems come from specs: text, never markup.
          formatter: (p) =>
            [`${k}=${p.value[0]}`, `${p.value[1].toFixed(3)}× best`, p.seriesName].map(echarts.format.encodeHTML).join("<br>"),
        },
        legend: { top: 0, type: "scroll", show: problems.length > 1 },
        grid: { left: 50, right: 12, top: problems.length > 1 ? 30 : 12, bottom: 30 },
        xAxis: { type: "category", data: values, name: k, nameLocation: "middle", nameGap: 22 },
        yAxis: { type: "value", name: "× best", min: 1 },
        series: problems.map((p) => ({
          name: p,
          type: "scatter",
          symbolSize: 7,
          itemStyle: { opacity: 0.6 },
          data: ok.filter((r) => keyText(r.problem) === p).map((r) => [String(r.config[k]), r.median_ns / best.get(p)]),
        })),
      },
      true,
    );
  }
}

// Parallel coordinates: an axis per knob, the problem, and time relative to
// the best of the problem; one line per successful result.
function drawParallel(results, container) {
  const ok = results.filter((r) => r.status === "ok");
  const best = bestByProblem(results);
  const knobs = knobsOf(results);
  const problems = problemsOf(ok);
  const axes = knobs.map((k, i) => ({
    dim: i,
    name: k,
    type: "category",
    data: [...new Set(results.map((r) => r.config[k]))].sort(sortValue).map(String),
  }));
  axes.push({ dim: knobs.length, name: "problem", type: "category", data: problems });
  axes.push({ dim: knobs.length + 1, name: "× best", type: "value", min: 1 });
  const data = ok.map((r) => [
    ...knobs.map((k) => String(r.config[k])),
    keyText(r.problem),
    r.median_ns / best.get(keyText(r.problem)),
  ]);
  const worst = Math.max(1.01, ...data.map((d) => d[d.length - 1]));
  chart("parallel", container).setOption(
    {
      animation: false,
      parallelAxis: axes,
      parallel: { left: 60, right: 110, top: 40, bottom: 30, parallelAxisDefault: { nameTextStyle: { fontWeight: 600 } } },
      visualMap: {
        type: "continuous",
        dimension: knobs.length + 1,
        min: 1,
        max: Math.min(worst, 4),
        right: 0,
        top: "middle",
        text: ["slow", "fast"],
        inRange: { color: ["#1f8a4c", "#f2c14e", "#c0392b"] },
        calculable: true,
      },
      series: [{ type: "parallel", lineStyle: { width: 1.2, opacity: 0.55 }, data }],
    },
    true,
  );
}

function winnersTable(job) {
  if (!job.best.length) return el("p", { class: "muted" }, "No successful candidate yet.");
  return el(
    "table",
    { id: "winners" },
    el("thead", {}, el("tr", {}, ["Problem", "Best configuration", "Median", "p10–p90", "GFLOP/s", "Candidate"].map((h) => el("th", {}, h)))),
    el(
      "tbody",
      {},
      job.best.map((b) =>
        el(
          "tr",
          {},
          el("td", {}, keyText(b.problem)),
          el("td", {}, el("code", {}, keyText(b.config))),
          el("td", { class: "num" }, formatNs(b.median_ns)),
          el("td", { class: "num" }, `${formatNs(b.p10_ns)} – ${formatNs(b.p90_ns)}`),
          el("td", { class: "num" }, b.gflops ? b.gflops.toFixed(1) : ""),
          el("td", { class: "num" }, b.candidate_id),
        ),
      ),
    ),
  );
}

// The sortable results table: a column per knob, failures with their
// reasons (a compile failure's is the compiler's own message).
function resultsTable(results, view, rerender) {
  const knobs = knobsOf(results);
  const columns = [
    { name: "#", num: true, get: (r) => r.candidate_id },
    { name: "problem", get: (r) => keyText(r.problem) },
    ...knobs.map((k) => ({ name: k, num: true, get: (r) => r.config[k] })),
    { name: "status", get: (r) => r.status },
    { name: "median", num: true, get: (r) => (r.status === "ok" ? r.median_ns : Infinity), show: (r) => formatNs(r.median_ns) },
    { name: "p10", num: true, get: (r) => r.p10_ns, show: (r) => formatNs(r.p10_ns) },
    { name: "p90", num: true, get: (r) => r.p90_ns, show: (r) => formatNs(r.p90_ns) },
    { name: "GFLOP/s", num: true, get: (r) => r.gflops, show: (r) => (r.gflops ? r.gflops.toFixed(1) : "") },
    { name: "worker", get: (r) => r.worker },
  ];
  const column = columns.find((c) => c.name === view.sort) || columns.find((c) => c.name === "median");
  const shown = results.filter((r) => view.filter === "all" || (view.filter === "ok") === (r.status === "ok"));
  const sorted = [...shown].sort((a, b) => sortValue(column.get(a), column.get(b)) * (view.desc ? -1 : 1));
  const head = el(
    "tr",
    {},
    columns.map((c) =>
      el(
        "th",
        {
          class: `sortable ${c.num ? "num" : ""} ${c === column ? (view.desc ? "sorted-desc" : "sorted-asc") : ""}`,
          "data-column": c.name,
          onclick: () => {
            view.desc = c === column ? !view.desc : false;
            view.sort = c.name;
            rerender();
          },
        },
        c.name,
      ),
    ),
  );
  const rows = sorted.slice(0, MAX_ROWS).flatMap((r) => {
    const row = el(
      "tr",
      { class: r.status === "ok" ? "" : "failed", "data-candidate": r.candidate_id },
      columns.map((c) => el("td", { class: c.num ? "num" : "" }, c.name === "status" ? badge(r.status) : c.show ? c.show(r) : c.get(r))),
    );
    if (r.status === "ok" || !r.error) return [row];
    // The reason's first line leads (for a compile failure, the compiler's
    // first error); the whole text folds out.
    const [first, ...rest] = r.error.split("\n");
    const reason = el(
      "tr",
      { class: "failed reason" },
      el("td", {}),
      el(
        "td",
        { colspan: columns.length - 1 },
        el("pre", { class: "diag" }, first),
        rest.length > 0 && el("details", {}, el("summary", {}, "full diagnostics"), el("pre", { class: "diag" }, rest.join("\n"))),
      ),
    );
    return [row, reason];
  });
  const failures = results.filter((r) => r.status !== "ok").length;
  const filter = el(
    "select",
    {
      id: "result-filter",
      onchange: (event) => {
        view.filter = event.target.value;
        rerender();
      },
    },
    [
      ["all", `all (${results.length})`],
      ["ok", `ok (${results.length - failures})`],
      ["failed", `failures (${failures})`],
    ].map(([value, label]) => el("option", { value, selected: view.filter === value }, label)),
  );
  return [
    el(
      "div",
      { class: "toolbar" },
      el("label", { for: "result-filter" }, "Show"),
      filter,
      sorted.length > MAX_ROWS && el("span", { class: "muted" }, `first ${MAX_ROWS} of ${sorted.length}`),
    ),
    el("table", { id: "results" }, el("thead", {}, head), el("tbody", {}, rows)),
  ];
}

function jobPage(id) {
  const title = el("div", { class: "card", id: "job-summary" });
  const winners = el("div", { class: "card" }, el("h2", {}, "Winners per problem"), el("div", { id: "winners-body" }));
  const byEval = el("div", { class: "chart", id: "convergence-evaluations" });
  const byTime = el("div", { class: "chart", id: "convergence-time" });
  const knobs = el("div", { class: "knobs", id: "knobs" });
  const parallel = el("div", { class: "chart tall", id: "parallel" });
  const table = el("div", { id: "results-body" });
  main.replaceChildren(
    title,
    winners,
    el(
      "div",
      { class: "grid2" },
      el("div", { class: "card" }, el("h2", {}, "Best so far, by evaluations"), byEval),
      el("div", { class: "card" }, el("h2", {}, "Best so far, by time"), byTime),
    ),
    el("div", { class: "card" }, el("h2", {}, "Each knob against performance (time ÷ best of the problem)"), knobs),
    el("div", { class: "card" }, el("h2", {}, "Parallel coordinates"), parallel),
    el("div", { class: "card" }, el("h2", {}, "Results"), table),
  );
  const view = { sort: "median", desc: false, filter: "all" };
  const held = new Map(); // the results fetched, by candidate id
  let results = [];
  let newest = 0; // when the newest of them was recorded
  let seen = -1; // the job's count of results when they were last fetched
  let job = null;
  const renderTable = () => table.replaceChildren(...resultsTable(results, view, renderTable));
  return poll(async () => {
    job = await api(`/api/jobs/${id}`);
    title.replaceChildren(
      el("h1", {}, `Job #${job.job_id}: ${job.kernel} `, badge(job.state)),
      el("div", { class: "muted" }, job.device_class ? `on ${job.device_class}` : job.waiting_for || "waiting for a device", job.device_class && job.waiting_for ? ` · ${job.waiting_for}` : "", ` · submitted ${ago(job.created_unix_ms)}`, job.priority ? ` · priority ${job.priority}` : ""),
      el("div", { class: "progress-cell", style: "margin-top:10px" }, progress(job)),
      el(
        "div",
        { class: "facts" },
        [
          [job.candidates_done, "results"],
          [job.candidates_total, "candidates"],
          [job.candidates_failed, "failed"],
          [job.candidates_cached, "reused"],
          [`${job.builds_done} / ${job.configurations}`, "configurations built"],
        ].map(([value, label]) => el("div", {}, el("b", {}, value), el("span", {}, label))),
      ),
      job.error && el("p", { class: "error" }, job.error),
    );
    winners.querySelector("#winners-body").replaceChildren(winnersTable(job));
    if (job.candidates_done !== seen || finished(job)) {
      // While the job runs, those recorded since the newest held, its
      // millisecond again (more may have come in it); all of them once it
      // ended (re-timings amend results) or when fewer are held than it
      // counted (the clock was set back).
      const all = finished(job) || held.size < seen;
      seen = job.candidates_done;
      const fresh = await api(`/api/jobs/${id}/results?since_ms=${all ? 0 : newest}`);
      if (all) held.clear();
      for (const r of fresh) {
        held.set(r.candidate_id, r);
        newest = Math.max(newest, r.recorded_unix_ms);
      }
      results = [...held.values()];
      drawConvergence(job, results, byEval, byTime);
      drawKnobs(results, knobs);
      drawParallel(results, parallel);
      renderTable();
    }
    return !finished(job);
  });
}

function workersPage() {
  const body = el("div", { id: "workers" });
  main.replaceChildren(el("div", { class: "card" }, el("h1", {}, "Workers"), body));
  return poll(async () => {
    const workers = await api("/api/workers");
    if (!workers.length) {
      body.replaceChildren(el("p", { class: "muted" }, "No worker has registered."));
      return true;
    }
    body.replaceChildren(
      el(
        "table",
        {},
        el("thead", {}, el("tr", {}, ["Worker", "Host", "State", "Last heartbeat", "Results", "Device", "Class", "Doing"].map((h) => el("th", {}, h)))),
        el(
          "tbody",
          {},
          workers.flatMap((w) =>
            w.devices.map((d, i) =>
              el(
                "tr",
                { "data-worker": w.worker_id, "data-device": d.index },
                i === 0 && el("td", { rowspan: w.devices.length }, el("code", {}, w.worker_id)),
                i === 0 && el("td", { rowspan: w.devices.length }, w.hostname),
                i === 0 && el("td", { rowspan: w.devices.length }, badge(w.alive ? "alive" : "silent")),
                i === 0 && el("td", { rowspan: w.devices.length }, ago(w.last_heartbeat_unix_ms)),
                i === 0 && el("td", { rowspan: w.devices.length, class: "num" }, w.results_reported),
                el("td", {}, `${d.index}: ${d.model || d.vendor}`),
                el("td", {}, d.device_class),
                el(
                  "td",
                  { class: "doing" },
                  d.leases.length
                    ? d.leases.map((l) =>
                        el(
                          "div",
                          {},
                          l.job_id === null
                            ? "a job of another token"
                            : el("a", { href: `#/jobs/${l.job_id}` }, `job #${l.job_id} ${l.kernel}`),
                          `: ${l.candidates} candidates (lease ${l.lease_id}${l.backup ? ", a backup" : ""}) for ${ago(l.granted_unix_ms).replace(" ago", "")}`,
                        ),
                      )
                    : el("span", { class: "muted" }, "idle"),
                ),
              ),
            ),
          ),
        ),
      ),
    );
    return true;
  });
}

// The kernels the coordinator answers for, each linking to its bests.
function kernelsPage() {
  const body = el("tbody");
  main.replaceChildren(
    el(
      "div",
      { class: "card" },
      el("h1", {}, "Kernels"),
      el(
        "table",
        { id: "kernels" },
        el("thead", {}, el("tr", {}, ["Kernel", "Owner", "Tuned", "Device classes", "Last tuned"].map((h) => el("th", {}, h)))),
        body,
      ),
    ),
  );
  return poll(async () => {
    const kernels = await api("/api/kernels");
    body.replaceChildren(
      ...kernels.map((k) =>
        el(
          "tr",
          { "data-kernel": k.name },
          el("td", {}, el("a", { href: `#/kernels/${encodeURIComponent(k.name)}` }, k.name)),
          el("td", {}, k.owner || el("span", { class: "muted", title: "no submitter token has used the name" }, "none")),
          el("td", { class: "num", title: "tuned (problem, device class) pairs" }, k.tuned),
          el("td", {}, k.device_classes.join(", ")),
          el("td", { title: new Date(k.last_tuned_unix_ms).toISOString() }, ago(k.last_tuned_unix_ms)),
        ),
      ),
    );
    if (!kernels.length) {
      body.append(
        el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No kernel is tuned yet: tunefleet submit SPEC.yaml, or tunefleet import results")),
      );
    }
    return true;
  });
}

// A kernel's best configuration on every tuned (problem, device class), as
// `tunefleet export` writes them.
function kernelPage(name) {
  const body = el("tbody");
  main.replaceChildren(
    el(
      "div",
      { class: "card", id: "kernel-summary" },
      el("h1", {}, `Kernel ${name}`),
      el("div", { class: "muted" }, "The best configuration of every tuned problem and device class · ", el("a", { href: "#/kernels" }, "all kernels")),
    ),
    el(
      "div",
      { class: "card" },
      el(
        "table",
        { id: "kernel-best" },
        el("thead", {}, el("tr", {}, ["Problem", "Device class", "Best configuration", "Median", "Job"].map((h) => el("th", {}, h)))),
        body,
      ),
    ),
  );
  return poll(async () => {
    const bests = await api(`/api/kernels/${encodeURIComponent(name)}/best`);
    body.replaceChildren(
      ...bests.map((b) =>
        el(
          "tr",
          {},
          el("td", {}, keyText(b.problem)),
          el("td", {}, b.device_class),
          el("td", {}, el("code", {}, keyText(b.config))),
          el("td", { class: "num" }, formatNs(b.median_ns)),
          el("td", {}, el("a", { href: `#/jobs/${b.job_id}` }, `#${b.job_id}`)),
        ),
      ),
    );
    if (!bests.length) body.append(el("tr", {}, el("td", { colspan: 5, class: "muted" }, "Nothing of this kernel is tuned.")));
    return true;
  });
}

// ---- routing ------------------------------------------------------------

// A hash's part as it was encoded into it; as typed when it is no encoding.
function decoded(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function route() {
  stopPolling();
  for (const instance of charts.values()) instance.dispose();
  charts.clear();
  document.getElementById("sign-out").hidden = !sessionStorage.getItem(TOKEN_KEY);
  const hash = location.hash || "#/jobs";
  const job = hash.match(/^#\/jobs\/(\d+)$/);
  const kernel = hash.match(/^#\/kernels\/([^/]+)$/);
  const page = ["kernels", "workers"].find((p) => hash.startsWith(`#/${p}`)) || "jobs";
  for (const a of document.querySelectorAll("[data-nav]")) a.classList.toggle("active", a.dataset.nav === page);
  if (job) stopPolling = jobPage(job[1]);
  else if (kernel) stopPolling = kernelPage(decoded(kernel[1]));
  else stopPolling = { jobs: jobsPage, kernels: kernelsPage, workers: workersPage }[page]();
}

document.getElementById("sign-out").addEventListener("click", () => signIn());
window.addEventListener("hashchange", route);
window.addEventListener("resize", () => {
  for (const instance of charts.values()) instance.resize();
});
route();
