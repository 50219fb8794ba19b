// The page of `gpusched serve`: everything it shows comes from the JSON API (docs/json.md),
// and every text a user wrote (commands, names, output) goes in as text, never as markup.
"use strict";

const PAGE = 50;
const state = { status: null, queue: null, from: 0, page: null, job: null, token: null };

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name === "class") node.className = value;
    else if (name === "onclick") node.addEventListener("click", value);
    else node.setAttribute(name, value);
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(child == null ? "" : String(child)));
  }
  return node;
}

function time(seconds) {
  if (seconds == null) return "";
  const date = new Date(seconds * 1000);
  const today = new Date().toDateString() === date.toDateString();
  return today ? date.toLocaleTimeString() : date.toLocaleString();
}

function duration(seconds) {
  if (seconds == null) return "";
  if (seconds < 60) return seconds.toFixed(1) + " s";
  if (seconds < 3600) return Math.floor(seconds / 60) + " min " + Math.round(seconds % 60) + " s";
  return Math.floor(seconds / 3600) + " h " + Math.round((seconds % 3600) / 60) + " min";
}

function fill(table, rows, empty) {
  const body = document.querySelector(table + " tbody");
  body.replaceChildren(...rows);
  if (rows.length === 0) {
    const columns = document.querySelectorAll(table + " thead th").length || 1;
    body.append(el("tr", {}, el("td", { class: "empty", colspan: columns }, empty)));
  }
}

function say(text) {
  document.getElementById("message").textContent = text;
}

// --- The token ---------------------------------------------------------------------------

// The printed address carries the token in its fragment (#token=), which no browser sends to
// any server, nor in a Referer; an older version's address in its query. It is kept in this
// tab's sessionStorage, which only pages of this very origin (scheme, host and port) read:
// not a cookie, which the browser would send to every server on this host whatever its port.
// sessionStorage rather than localStorage: it survives a reload and links followed in the tab,
// and ends with the tab, so a token never waits on disk for whatever later listens on this
// port (another ssh -L) to read it.
const TOKEN_KEY = "gpusched_token";

function takeToken() {
  const url = new URL(window.location.href);
  const given = new URLSearchParams(url.hash.slice(1)).get("token") || url.searchParams.get("token");
  if (!given) return;
  try { window.sessionStorage.setItem(TOKEN_KEY, given); } catch (error) { state.token = given; }
  url.searchParams.delete("token");
  window.history.replaceState(null, "", url.pathname + url.search);
}

function token() {
  try { return window.sessionStorage.getItem(TOKEN_KEY) || state.token; } catch (error) { return state.token; }
}

// Every request of the page carries the token as a header, which no page of another origin
// can make the browser send here. No cookie: the page needs none, and this host's cookies are
// every local server's.
function request(path, options) {
  const headers = {};
  const held = token();
  if (held) headers.Authorization = "Bearer " + held;
  return fetch(path, Object.assign({ credentials: "omit", cache: "no-store", headers }, options || {}));
}

async function api(path, options) {
  const response = await request(path, options);
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function actionsAllowed() {
  return state.status && state.status.server.allow_actions;
}

function actionButton(label, path, confirmText) {
  return el("button", { type: "button", onclick: async () => {
    if (confirmText && !window.confirm(confirmText)) return;
    try { say((await api(path, { method: "POST" })).done); } catch (error) { say(error.message); }
  } }, label);
}

// The host a worker runs on, from the queue's list of workers.
function hostOf(worker) {
  const found = state.queue && state.queue.workers.find((listed) => listed.id === worker);
  return found ? found.host : "";
}

function jobLink(id) {
  return el("a", { href: "/jobs/" + id }, String(id));
}

// --- The overview ---------------------------------------------------------------------

function showStatus(status) {
  state.status = status;
  document.getElementById("host").textContent = status.server.host;
  document.title = "gpusched: " + status.server.host;
  const rows = [];
  for (const gpu of status.gpus) {
    const device = gpu.device || {};
    const memory = device.memory_used_mib != null ? device.memory_used_mib + " / " + device.memory_total_mib + " MiB"
      : device.memory_total_mib != null ? "n/a / " + device.memory_total_mib + " MiB" : "n/a";
    const model = el("td", {}, device.name || "n/a");
    if (device.uuid) model.append(el("div", { class: "note" }, device.uuid));
    const common = [el("td", {}, gpu.id), model, el("td", {}, memory),
      el("td", {}, device.utilization_percent != null ? device.utilization_percent + " %" : "n/a"),
      el("td", {}, device.temperature_celsius != null ? device.temperature_celsius + " °C" : "n/a"),
      el("td", { class: "state-" + gpu.state }, gpu.state + (gpu.mig_instances_leased ? " (" + gpu.mig_instances_leased + " MIG leased)" : ""))];
    const record = gpu.record;
    const jobs = record && record.jobs.length ? record.jobs : [null];
    jobs.forEach((job, index) => {
      const cells = index === 0 ? common : common.map(() => el("td", {}));
      const user = record && record.user ? record.user : gpu.holder ? gpu.holder.user : "";
      const pid = job ? job.pid : gpu.holder ? gpu.holder.pid : "";
      let command = job ? job.command : gpu.state === "leased" ? (record ? "(between jobs)" : "(no record)") : "";
      if (record && record.check === "unverified" && job) command = "(unverified) " + command;
      // A job of the queue served here is named by its id, found by its GPU and command.
      const queued = job && state.queue && state.queue.running ? state.queue.running.find((running) =>
        (running.gpus || []).includes(gpu.id) && running.command === job.command) : null;
      const commandCell = el("td", { class: "command" }, command);
      if (queued) commandCell.prepend(el("span", {}, "job ", jobLink(queued.id), ": "));
      rows.push(el("tr", { "data-gpu": gpu.id }, ...cells, el("td", {}, user), el("td", {}, pid),
        el("td", {}, job ? time(job.started) : ""), commandCell));
    });
  }
  fill("#gpus", rows, "no GPU found: give --gpus");
  document.getElementById("usage-note").textContent = status.server.usage_problem
    ? "Utilisation, memory in use and temperature: n/a (" + status.server.usage_problem + ")" : "";
  fill("#waiters", status.waiters.map((wait) => el("tr", {}, el("td", {}, wait.user || "?"), el("td", {}, wait.pid),
    el("td", {}, time(wait.since)), el("td", {}, wait.gpu_count))), "nobody waits");
  fill("#fair-share", status.fair_share.map((user) => el("tr", {}, el("td", {}, user.user), el("td", {}, user.runs),
    el("td", {}, user.gpus_held), el("td", {}, user.gpus_waited_for), el("td", {}, duration(user.used_gpu_seconds)),
    el("td", {}, user.share))), "no GPU is held or waited for");
  document.getElementById("queue-section").hidden = !status.server.queue;
}

function showQueue(queue) {
  state.queue = queue;
  document.getElementById("queue-where").textContent = queue.where ? "(" + queue.where + ")" : "";
  document.getElementById("queue-error").textContent = queue.error || "";
  if (queue.gone) {
    // Its database was removed: no job of the last look is the queue's now.
    document.getElementById("queue-counts").textContent = "";
    document.getElementById("queue-actions").replaceChildren();
    document.getElementById("queued-range").textContent = "";
    for (const table of ["#running", "#queued", "#ended", "#workers"]) fill(table, [], "no queue");
    return;
  }
  if (queue.error && queue.queued == null) return;
  const paused = queue.paused || [];
  document.getElementById("queue-counts").textContent =
    queue.queued + " queued" + (queue.waiting ? ", " + queue.waiting + " waiting for other jobs" : "") +
    ", " + queue.running.length + " running; ended: " + queue.succeeded + " succeeded, " + queue.failed +
    " failed, " + queue.cancelled + " cancelled" + (paused.includes("") ? ". Paused: nothing new starts." :
    paused.length ? ". Paused on GPU " + paused.join(", ") : "");
  const actions = document.getElementById("queue-actions");
  actions.replaceChildren();
  if (actionsAllowed()) {
    actions.append(paused.includes("") ? actionButton("Resume the queue", "/api/queue/resume")
      : actionButton("Pause the queue", "/api/queue/pause"));
  }
  const own = (job) => actionsAllowed() && job.user === state.status.server.user;
  fill("#running", queue.running.map((job) => el("tr", { "data-job": job.id }, el("td", {}, jobLink(job.id)),
    el("td", {}, (job.gpus || []).join(",")), el("td", {}, hostOf(job.worker)), el("td", {}, job.user || ""),
    el("td", {}, time(job.started)), el("td", { class: "command" }, job.command),
    el("td", {}, own(job) ? actionButton("Cancel", "/api/jobs/" + job.id + "/cancel", "Stop job " + job.id + "?") : ""))),
    "no job runs");
  const ended = queue.recent.slice().sort((a, b) => (a.state === "succeeded") - (b.state === "succeeded"));
  fill("#ended", ended.map((job) => el("tr", { "data-job": job.id }, el("td", {}, jobLink(job.id)),
    el("td", { class: "state-" + job.state }, job.state), el("td", {}, job.exit_code != null ? job.exit_code : job.signal || ""),
    el("td", {}, (job.gpus || []).join(",")), el("td", {}, time(job.ended)), el("td", {}, duration(job.runtime_seconds)),
    el("td", { class: "command" }, job.command),
    el("td", {}, own(job) && job.state !== "succeeded" ? actionButton("Retry", "/api/jobs/" + job.id + "/retry") : ""))),
    "no job has ended");
  fill("#workers", queue.workers.map((worker) => el("tr", {}, el("td", {}, worker.id), el("td", {}, worker.host),
    el("td", {}, worker.user || ""), el("td", {}, (worker.gpus || []).join(",")), el("td", {}, worker.running),
    el("td", {}, time(worker.since)),
    el("td", {}, actionsAllowed() && worker.user === state.status.server.user
      ? actionButton("Stop", "/api/workers/" + encodeURIComponent(worker.id) + "/stop", "Stop worker " + worker.id + " once its jobs end?") : ""))),
    "no worker serves this queue");
  if (state.from === 0) showQueued(queue);
  else loadQueuedPage();
}

function showQueued(page) {
  state.page = page;
  const own = (job) => actionsAllowed() && job.user === state.status.server.user;
  fill("#queued", page.next.map((job) => el("tr", { "data-job": job.id }, el("td", {}, job.position), el("td", {}, jobLink(job.id)),
    el("td", {}, job.user || ""), el("td", {}, time(job.submitted)),
    el("td", { class: "command" }, job.command),
    el("td", {}, own(job) ? actionButton("Cancel", "/api/jobs/" + job.id + "/cancel") : ""))), "nothing is queued");
  const first = page.next.length ? state.from + 1 : 0;
  document.getElementById("queued-range").textContent =
    page.queued ? "(" + first + "–" + (state.from + page.next.length) + " of " + page.queued + ")" : "";
  document.getElementById("page-previous").disabled = state.from === 0;
  document.getElementById("page-next").disabled = state.from + PAGE >= page.queued;
}

async function loadQueuedPage() {
  try { showQueued(await api("/api/queue?from=" + state.from + "&count=" + PAGE)); } catch (error) { say(error.message); }
}

async function loadTimeline() {
  const hours = Number(document.getElementById("timeline-hours").value);
  let timeline;
  try { timeline = await api("/api/timeline?hours=" + hours); } catch (error) { say(error.message); return; }
  drawTimeline(timeline);
}

// One row per GPU: each job a bar from its start to its end (or now), coloured by user; the
// GPU's utilisation over it as a line, where NVML gave it.
function drawTimeline(timeline) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = (tag, attributes, text) => {
    const node = document.createElementNS(ns, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    if (text != null) node.textContent = text;
    return node;
  };
  const width = 1000, left = 70, row = 28, top = 18;
  const height = top + row * Math.max(1, timeline.gpus.length) + 10;
  const x = (t) => left + ((t - timeline.from) / (timeline.to - timeline.from)) * (width - left - 10);
  const picture = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img" });
  const colours = {};
  const palette = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f"];
  for (let hour = 0; hour <= (timeline.to - timeline.from) / 3600; hour++) {
    const t = timeline.to - hour * 3600;
    picture.append(svg("text", { x: x(t) - 20, y: 12, "font-size": 10, fill: "#667085" }, new Date(t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })));
  }
  timeline.gpus.forEach((gpu, index) => {
    const y = top + index * row;
    picture.append(svg("text", { x: 4, y: y + 17, "font-size": 12 }, "GPU " + gpu.id));
    for (const span of gpu.spans) {
      const user = span.user || "?";
      colours[user] = colours[user] || palette[Object.keys(colours).length % palette.length];
      const start = Math.max(span.start, timeline.from), end = span.end == null ? timeline.to : span.end;
      const bar = svg("rect", { x: x(start), y: y + 4, width: Math.max(1, x(end) - x(start)), height: row - 8,
        fill: span.state === "failed" ? "#c0362c" : colours[user], "fill-opacity": 0.8, "data-job": span.job_id == null ? "" : span.job_id });
      bar.append(svg("title", {}, user + ": " + span.command + (span.job_id != null ? " (job " + span.job_id + ", " + span.state + ")" : "")));
      picture.append(bar);
    }
    if (gpu.utilization.length > 1) {
      const points = gpu.utilization.map((sample) => x(sample.at) + "," + (y + row - 4 - (sample.percent / 100) * (row - 8))).join(" ");
      picture.append(svg("polyline", { points, class: "utilization" }));
    }
  });
  document.getElementById("timeline").replaceChildren(picture);
}

// --- A job's page -----------------------------------------------------------------------

const follow = { stdout: 0, stderr: 0, timer: null };

// What a job's page shows of one job: cleared when the id names no job now, or another job
// (the queue's database made anew), so that nothing of one job is shown under another's.
function clearJob() {
  state.job = null;
  follow.stdout = 0;
  follow.stderr = 0;
  fill("#job-fields", [], "");
  document.getElementById("job-actions").replaceChildren();
  for (const stream of ["stdout", "stderr"]) document.getElementById("job-" + stream).textContent = "";
}

async function showJob(id) {
  let found;
  try { found = await api("/api/jobs/" + id); } catch (error) {
    say(error.message);
    clearJob();
    const stateText = document.getElementById("job-state");
    stateText.textContent = error.message;
    stateText.className = "state";
    return;
  }
  const job = found.job;
  if (state.job && (state.job.submitted !== job.submitted || state.job.command !== job.command)) clearJob();
  state.job = job;
  document.getElementById("job-id").textContent = job.id;
  const stateText = document.getElementById("job-state");
  stateText.textContent = job.state;
  stateText.className = "state state-" + job.state;
  const fields = [["Command", job.command], ["Directory", job.directory], ["Name", job.name], ["Submitted by", job.user ? job.user + (job.submitted_from ? "@" + job.submitted_from : "") : ""],
    ["Queue", job.queue], ["Batch", job.batch], ["Priority", job.priority], ["GPUs", (job.gpus || []).join(",")], ["Worker", job.worker],
    ["Submitted", time(job.submitted)], ["Started", time(job.started)], ["Ended", time(job.ended)], ["Runtime", duration(job.runtime_seconds)],
    ["Exit code", job.exit_code], ["Signal", job.signal], ["Note", job.note]];
  fill("#job-fields", fields.filter(([, value]) => value != null && value !== "").map(([name, value]) =>
    el("tr", {}, el("th", {}, name), el("td", { class: name === "Command" ? "command" : "" }, value))), "");
  const actions = document.getElementById("job-actions");
  actions.replaceChildren();
  if (actionsAllowed() && job.user === state.status.server.user) {
    if (["queued", "waiting", "running"].includes(job.state)) actions.append(actionButton("Cancel", "/api/jobs/" + job.id + "/cancel", "Cancel job " + job.id + "?"));
    else if (job.state !== "succeeded") actions.append(actionButton("Retry", "/api/jobs/" + job.id + "/retry"));
  }
  await Promise.all(["stdout", "stderr"].map((stream) => readOutput(job.id, stream)));
}

async function readOutput(id, stream) {
  const box = document.getElementById("job-" + stream);
  const first = follow[stream] === 0 && box.textContent === "";
  let read;
  try { read = await api("/api/jobs/" + id + "/output?stream=" + stream + (first ? "" : "&from=" + follow[stream])); } catch (error) {
    // Refused (the output is its submitter's, shown with the token): said once, as text.
    if (first) box.textContent = "(" + error.message + ")";
    return;
  }
  if (first && read.from > 0) box.append("… (" + read.from + " bytes before)\n");
  box.append(read.text);
  follow[stream] = read.next;
  if (read.text) box.scrollTop = box.scrollHeight;
}

// --- Live -------------------------------------------------------------------------------

// One Server-Sent Event ("event: NAME", "data: ..." lines) to its handler.
function dispatch(block, handlers) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  if (data.length && handlers[name]) handlers[name](JSON.parse(data.join("\n")));
}

// The event stream, read with fetch rather than EventSource, which sends no header: beyond
// loopback the stream needs the token, and a token in its address would be one more place to
// keep it from. A stream that ends or fails is asked for again a second later.
async function connect(onStatus, onQueue) {
  const live = document.getElementById("live");
  const handlers = { status: onStatus, queue: onQueue };
  for (;;) {
    try {
      const response = await request("/api/events");
      if (!response.ok) {
        const body = await response.json().catch(() => ({ error: response.statusText }));
        say(body.error || response.statusText);
        throw new Error(body.error);
      }
      live.textContent = "live";
      live.className = "live";
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
          dispatch(buffered.slice(0, end), handlers);
          buffered = buffered.slice(end + 2);
        }
      }
    } catch (error) {
      // The server gone or refusing (said above): asked again below.
    }
    live.textContent = "reconnecting";
    live.className = "live off";
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function start() {
  takeToken();
  const match = window.location.pathname.match(/^\/jobs\/(\d+)$/);
  if (match) {
    document.getElementById("overview").hidden = true;
    document.getElementById("job-page").hidden = false;
    const id = match[1];
    connect((status) => { state.status = status; document.getElementById("host").textContent = status.server.host; },
      () => showJob(id));
    // A running job's output grows without a change to the queue: followed every second.
    setInterval(() => { if (state.job && state.job.state === "running") Promise.all(["stdout", "stderr"].map((stream) => readOutput(id, stream))); }, 1000);
    return;
  }
  document.getElementById("page-previous").addEventListener("click", () => { state.from = Math.max(0, state.from - PAGE); loadQueuedPage(); });
  document.getElementById("page-next").addEventListener("click", () => { state.from += PAGE; loadQueuedPage(); });
  document.getElementById("timeline-hours").addEventListener("change", loadTimeline);
  let timelineDue = null;
  const timelineSoon = () => { if (!timelineDue) timelineDue = setTimeout(() => { timelineDue = null; loadTimeline(); }, 1000); };
  connect((status) => { showStatus(status); if (state.queue) showQueue(state.queue); timelineSoon(); },
    (queue) => { if (state.status) { showQueue(queue); showStatus(state.status); } else state.queue = queue; timelineSoon(); });
  setInterval(loadTimeline, 60000);
}

document.addEventListener("DOMContentLoaded", start);
