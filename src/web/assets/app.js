// The page of `gpusched serve`: everything it shows comes from the JSON API (docs/json.md),
// first from the documents the server wrote into the page (where the request could read
// them), and every text a user wrote (commands, labels, output) goes in as text, never as
// markup.
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

const two = (number) => String(number).padStart(2, "0");

// "14:05" or "14:05:09", in 24 hours whatever the browser's locale, as the CLI writes times.
function clock(date, withSeconds) {
  return two(date.getHours()) + ":" + two(date.getMinutes()) + (withSeconds ? ":" + two(date.getSeconds()) : "");
}

// An instant as the CLI writes it: "14:05:09" today, "2026-11-30 14:05:09" another day.
function time(seconds) {
  if (seconds == null) return "";
  const date = new Date(seconds * 1000);
  if (new Date().toDateString() === date.toDateString()) return clock(date, true);
  return date.getFullYear() + "-" + two(date.getMonth() + 1) + "-" + two(date.getDate()) + " " + clock(date, true);
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

// A job as the CLI names it ("job 12 [train-a]"): its id, a link to its page, and its label.
function jobName(job) {
  const name = el("span", { class: "job-name" }, jobLink(job.id));
  if (job.name) name.append(" ", el("span", { class: "job-label" }, job.name));
  return name;
}

// What a waiting job waits for, each job a link: "jobs 3, 4 to end; job 5 to succeed".
function waitsFor(job) {
  const parts = [[job.after || [], " to end"], [job.after_ok || [], " to succeed"]].filter(([ids]) => ids.length);
  if (!parts.length) return null;
  const said = el("span", {});
  parts.forEach(([ids, what], index) => {
    said.append(index ? "; " : "", ids.length > 1 ? "jobs " : "job ");
    ids.forEach((id, at) => said.append(at ? ", " : "", jobLink(id)));
    said.append(what);
  });
  return said;
}

// The last cell of a row, shown where the page may act (the column is hidden elsewhere).
function actionCell(button) {
  return el("td", { class: "action" }, button || "");
}

// --- The overview ---------------------------------------------------------------------

// Who serves, for every view: the host in the header, and whether the page may act.
function noteServer(status) {
  state.status = status;
  document.getElementById("host").textContent = status.server.host;
  document.body.classList.toggle("can-act", Boolean(status.server.allow_actions));
}

// A GPU's memory cell: "used / total MiB", what gpusched's jobs were promised of it, and two
// bars over its total: in use (by anyone), and promised to gpusched's jobs. Not one bar of
// the two stacked: what the jobs use is part of both, and the page cannot tell how much.
function memoryCell(gpu, device) {
  const used = device.memory_used_mib, total = device.memory_total_mib;
  const reserved = gpu.memory_reserved_mib;
  const cell = el("td", { class: "memory" },
    used != null ? used + " / " + total + " MiB" : total != null ? "n/a / " + total + " MiB" : "n/a");
  if (reserved != null) cell.append(el("div", { class: "note" }, reserved + " MiB promised"));
  if (total) {
    // Widths through the CSSOM: the page's policy refuses style attributes.
    const bar = (name, mib) => {
      const fill = el("span", { class: name });
      fill.style.width = Math.max(0, Math.min(100, 100 * mib / total)).toFixed(1) + "%";
      return fill;
    };
    cell.append(el("div", { class: "memory-bars", role: "img",
      "aria-label": (used != null ? used + " MiB in use" : "use unknown") +
        (reserved != null ? ", " + reserved + " MiB promised" : "") + " of " + total + " MiB" },
    bar("in-use", used != null ? used : 0), bar("promised", reserved != null ? reserved : 0)));
  }
  return cell;
}

function showStatus(status) {
  noteServer(status);
  document.title = status.server.host + " · gpusched";
  const rows = [];
  for (const gpu of status.gpus) {
    const device = gpu.device || {};
    const model = el("td", {}, device.name || "n/a");
    if (device.uuid) model.append(el("div", { class: "note" }, device.uuid));
    const common = [el("td", {}, gpu.id), model, memoryCell(gpu, device),
      el("td", {}, device.utilization_percent != null ? device.utilization_percent + " %" : "n/a"),
      el("td", {}, device.temperature_celsius != null ? device.temperature_celsius + " °C" : "n/a"),
      el("td", { class: "state-" + gpu.state }, gpu.state + (gpu.mig_instances_leased ? " (" + gpu.mig_instances_leased + " MIG leased)" : ""))];
    if (gpu.state === "shared") {
      // Jobs of one or more processes share it by memory: a row per process.
      gpu.memory_shares.forEach((shares, index) => {
        const cells = index === 0 ? common : common.map(() => el("td", {}));
        rows.push(el("tr", { "data-gpu": gpu.id }, ...cells, el("td", {}, shares.user || "?"),
          el("td", {}, shares.pid), el("td", {}, ""), el("td", { class: "command" },
            "(" + shares.jobs + (shares.jobs === 1 ? " job" : " jobs") + " sharing it by memory, " +
            shares.memory_reserved_mib + " MiB promised)")));
      });
      continue;
    }
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
      if (queued) commandCell.prepend(el("span", {}, "job ", jobName(queued), ": "));
      if (job && job.memory_reserved_mib != null) {
        commandCell.append(el("div", { class: "note" }, job.memory_reserved_mib + " MiB promised"));
      }
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
  document.getElementById("queue-where").textContent = queue.where || "";
  document.getElementById("queue-error").textContent = queue.error || "";
  if (queue.gone) {
    // Its database was removed: no job of the last look is the queue's now.
    document.getElementById("queue-counts").textContent = "";
    document.getElementById("queue-actions").replaceChildren();
    document.getElementById("queued-range").textContent = "";
    document.getElementById("waiting-range").textContent = "";
    for (const table of ["#running", "#queued", "#waiting", "#ended", "#workers"]) fill(table, [], "no queue");
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
  fill("#running", queue.running.map((job) => el("tr", { "data-job": job.id }, el("td", {}, jobName(job)),
    el("td", {}, (job.gpus || []).join(",")), el("td", {}, hostOf(job.worker)), el("td", {}, job.user || ""),
    el("td", {}, time(job.started)), el("td", { class: "command" }, job.command),
    actionCell(own(job) && actionButton("Cancel", "/api/jobs/" + job.id + "/cancel", "Stop job " + job.id + "?")))),
    "no job runs");
  const waiting = queue.waiting_jobs || [];
  fill("#waiting", waiting.map((job) => el("tr", { "data-job": job.id }, el("td", {}, jobName(job)),
    el("td", {}, waitsFor(job) || ""), el("td", {}, job.user || ""), el("td", {}, time(job.submitted)),
    el("td", { class: "command" }, job.command),
    actionCell(own(job) && actionButton("Cancel", "/api/jobs/" + job.id + "/cancel")))),
    "no job waits for another");
  document.getElementById("waiting-range").textContent =
    queue.waiting > waiting.length ? "(the first " + waiting.length + " of " + queue.waiting + ")" : "";
  const ended = queue.recent.slice().sort((a, b) => (a.state === "succeeded") - (b.state === "succeeded"));
  fill("#ended", ended.map((job) => el("tr", { "data-job": job.id }, el("td", {}, jobName(job)),
    el("td", { class: "state-" + job.state }, job.state), el("td", {}, job.exit_code != null ? job.exit_code : job.signal || ""),
    el("td", {}, (job.gpus || []).join(",")), el("td", {}, time(job.ended)), el("td", {}, duration(job.runtime_seconds)),
    el("td", { class: "command" }, job.command),
    actionCell(own(job) && job.state !== "succeeded" && actionButton("Retry", "/api/jobs/" + job.id + "/retry")))),
    "no job has ended");
  fill("#workers", queue.workers.map((worker) => el("tr", {}, el("td", {}, worker.id), el("td", {}, worker.host),
    el("td", {}, worker.user || ""), el("td", {}, (worker.gpus || []).join(",")), el("td", {}, worker.running),
    el("td", {}, time(worker.since)),
    actionCell(actionsAllowed() && worker.user === state.status.server.user &&
      actionButton("Stop", "/api/workers/" + encodeURIComponent(worker.id) + "/stop", "Stop worker " + worker.id + " once its jobs end?")))),
    "no worker serves this queue");
  if (state.from === 0) showQueued(queue);
  else loadQueuedPage();
}

function showQueued(page) {
  state.page = page;
  const own = (job) => actionsAllowed() && job.user === state.status.server.user;
  fill("#queued", page.next.map((job) => el("tr", { "data-job": job.id }, el("td", {}, job.position), el("td", {}, jobName(job)),
    el("td", {}, job.user || ""), el("td", {}, time(job.submitted)),
    el("td", { class: "command" }, job.command),
    actionCell(own(job) && actionButton("Cancel", "/api/jobs/" + job.id + "/cancel")))), "nothing is queued");
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

// The axis's step for a window of `span` seconds: a label every 10 minutes over an hour,
// every hour over 6, every 3 hours over 24.
function axisStep(span) {
  return span <= 3600 ? 600 : span <= 6 * 3600 ? 3600 : 3 * 3600;
}

// One row per GPU: each job a bar from its start to its end (or now), coloured by user; the
// GPU's utilisation over it as a line, where NVML gave it. The axis is labelled at round
// times of the browser's clock, each label inside the picture.
function drawTimeline(timeline) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = (tag, attributes, text) => {
    const node = document.createElementNS(ns, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    if (text != null) node.textContent = text;
    return node;
  };
  const width = 1000, left = 74, right = 10, row = 28, top = 20, half = 16;
  const height = top + row * Math.max(1, timeline.gpus.length) + 6;
  const span = Math.max(1, timeline.to - timeline.from);
  const x = (t) => left + ((t - timeline.from) / span) * (width - left - right);
  const jobs = timeline.gpus.reduce((count, gpu) => count + gpu.spans.length, 0);
  const failed = timeline.gpus.reduce((count, gpu) => count + gpu.spans.filter((bar) => bar.state === "failed").length, 0);
  const from = new Date(timeline.from * 1000), to = new Date(timeline.to * 1000);
  const picture = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img",
    "aria-label": "What ran on each GPU from " + clock(from) + " to " + clock(to) + ": " + jobs + (jobs === 1 ? " job" : " jobs") +
      (failed ? ", " + failed + " failed" : "") + " (each listed above, and by pointing at its bar)" });
  const colours = {};
  const palette = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f"];
  const step = axisStep(span);
  const zone = -from.getTimezoneOffset() * 60;
  for (let t = Math.ceil((timeline.from + zone) / step) * step - zone; t <= timeline.to; t += step) {
    const at = x(t);
    // A label near an end is anchored to it, so that it is drawn whole.
    const anchor = at + half > width ? "end" : at - half < left ? "start" : "middle";
    picture.append(svg("line", { x1: at, x2: at, y1: top, y2: height - 6, class: "tick" }));
    picture.append(svg("text", { x: anchor === "end" ? width - 1 : at, y: 12, "text-anchor": anchor, class: "axis" },
      clock(new Date(t * 1000))));
  }
  timeline.gpus.forEach((gpu, index) => {
    const y = top + index * row;
    const name = svg("text", { x: 4, y: y + 17, class: "gpu" }, "GPU " + (gpu.id.length > 7 ? gpu.id.slice(0, 6) + "…" : gpu.id));
    name.append(svg("title", {}, "GPU " + gpu.id));
    picture.append(name);
    for (const bar of gpu.spans) {
      const user = bar.user || "?";
      colours[user] = colours[user] || palette[Object.keys(colours).length % palette.length];
      const start = Math.max(bar.start, timeline.from), end = bar.end == null ? timeline.to : bar.end;
      const drawn = svg("rect", { x: x(start), y: y + 4, width: Math.max(1, x(end) - x(start)), height: row - 8,
        fill: bar.state === "failed" ? "#c0362c" : colours[user], "fill-opacity": 0.8, "data-job": bar.job_id == null ? "" : bar.job_id });
      drawn.append(svg("title", {}, user + ": " + bar.command + (bar.job_id != null ? " (job " + bar.job_id + ", " + bar.state + ")" : "")));
      picture.append(drawn);
    }
    if (gpu.utilization.length > 1) {
      const points = gpu.utilization.map((sample) => x(sample.at) + "," + (y + row - 4 - (sample.percent / 100) * (row - 8))).join(" ");
      picture.append(svg("polyline", { points, class: "utilization" }));
    }
  });
  document.getElementById("timeline").replaceChildren(picture);
}

// --- A job's page -----------------------------------------------------------------------

// How far each stream was read; one read at a time of each (the timer and the queue's news
// both ask), and a stream refused (the output is its submitter's) not asked for again.
const follow = { stdout: 0, stderr: 0, reading: new Set(), refused: new Set() };

// What a job's page shows of one job: cleared when the id names no job now, or another job
// (the queue's database made anew), so that nothing of one job is shown under another's.
function clearJob() {
  state.job = null;
  follow.stdout = 0;
  follow.stderr = 0;
  follow.refused.clear();
  fill("#job-fields", [], "");
  document.getElementById("job-label").textContent = "";
  document.getElementById("job-actions").replaceChildren();
  for (const stream of ["stdout", "stderr"]) document.getElementById("job-" + stream).textContent = "";
}

// "job 12 · train-a · gpusched": its label, else the start of its command.
function jobTitle(job) {
  const what = job.name || (job.command.length > 48 ? job.command.slice(0, 47) + "…" : job.command);
  return "job " + job.id + " · " + what + " · gpusched";
}

// Job `id`'s page, from `found` (what /api/jobs/ID answered, the server's own copy in the
// page first) or else asked for now.
async function showJob(id, found) {
  if (!found) {
    try { found = await api("/api/jobs/" + id); } catch (error) { found = { error: error.message }; }
  }
  if (!isNew("job", found)) {
    // The same as shown: only its output may have grown.
    if (found.job) await Promise.all(["stdout", "stderr"].map((stream) => readOutput(found.job.id, stream)));
    return;
  }
  if (found.error) {
    say(found.error);
    clearJob();
    document.getElementById("job-id").textContent = id;
    document.title = "job " + id + " · gpusched";
    const stateText = document.getElementById("job-state");
    stateText.textContent = found.error;
    stateText.className = "state";
    return;
  }
  const job = found.job;
  if (state.job && (state.job.submitted !== job.submitted || state.job.command !== job.command)) clearJob();
  state.job = job;
  document.title = jobTitle(job);
  document.getElementById("job-id").textContent = job.id;
  document.getElementById("job-label").textContent = job.name || "";
  const stateText = document.getElementById("job-state");
  stateText.textContent = job.state;
  stateText.className = "state state-" + job.state;
  const fields = [["Command", job.command], ["Directory", job.directory], ["Label", job.name], ["Submitted by", job.user ? job.user + (job.submitted_from ? "@" + job.submitted_from : "") : ""],
    ["Queue", job.queue], ["Batch", job.batch], ["Priority", job.priority], ["Waits for", waitsFor(job)], ["GPUs", (job.gpus || []).join(",")], ["Worker", job.worker],
    ["Submitted", time(job.submitted)], ["Started", time(job.started)], ["Ended", time(job.ended)], ["Runtime", duration(job.runtime_seconds)],
    ["Exit code", job.exit_code], ["Signal", job.signal], ["Note", job.note]];
  fill("#job-fields", fields.filter(([, value]) => value != null && value !== "").map(([name, value]) =>
    el("tr", {}, el("th", { scope: "row" }, name), el("td", { class: name === "Command" ? "command" : "" }, value))), "");
  const actions = document.getElementById("job-actions");
  actions.replaceChildren();
  if (actionsAllowed() && job.user === state.status.server.user) {
    if (["queued", "waiting", "running"].includes(job.state)) actions.append(actionButton("Cancel", "/api/jobs/" + job.id + "/cancel", "Cancel job " + job.id + "?"));
    else if (job.state !== "succeeded") actions.append(actionButton("Retry", "/api/jobs/" + job.id + "/retry"));
  }
  await Promise.all(["stdout", "stderr"].map((stream) => readOutput(job.id, stream)));
}

async function readOutput(id, stream) {
  if (follow.refused.has(stream) || follow.reading.has(stream)) return;
  follow.reading.add(stream);
  try { await readOutputOnce(id, stream); } finally { follow.reading.delete(stream); }
}

async function readOutputOnce(id, stream) {
  const box = document.getElementById("job-" + stream);
  const first = follow[stream] === 0 && box.textContent === "";
  let read;
  try { read = await api("/api/jobs/" + id + "/output?stream=" + stream + (first ? "" : "&from=" + follow[stream])); } catch (error) {
    // Refused (the output is its submitter's, shown with the token): said once, as text.
    if (first) {
      box.textContent = "(" + error.message + ")";
      follow.refused.add(stream);
    }
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

// The documents the server wrote into the page (the ones its requests answer), so that the
// first paint shows them; none where the request could not read them (beyond loopback, the
// token is in the address's fragment): the script asks for them at once.
function initialState() {
  const block = document.getElementById("initial-state");
  if (!block) return {};
  try { return JSON.parse(block.textContent) || {}; } catch (error) { return {}; }
}

// The last document of each kind shown, as text: one that the event stream sends again (the
// first it sends is the one the page came with) draws nothing anew, so that no button under
// the pointer is replaced by its copy.
const shown = {};
function isNew(kind, value) {
  const text = JSON.stringify(value);
  if (shown[kind] === text) return false;
  shown[kind] = text;
  return true;
}

function start() {
  takeToken();
  const initial = initialState();
  for (const kind of ["status", "queue"]) if (initial[kind]) isNew(kind, initial[kind]);
  const match = window.location.pathname.match(/^\/jobs\/(\d+)$/);
  if (match) {
    document.getElementById("overview").hidden = true;
    document.getElementById("job-page").hidden = false;
    const id = match[1];
    if (initial.status) noteServer(initial.status);
    showJob(id, initial.job);
    connect((status) => { if (isNew("status", status)) noteServer(status); }, (queue) => { if (isNew("queue", queue)) showJob(id); });
    // A running job's output grows without a change to the queue: followed every second.
    setInterval(() => { if (state.job && state.job.state === "running") Promise.all(["stdout", "stderr"].map((stream) => readOutput(id, stream))); }, 1000);
    return;
  }
  document.getElementById("page-previous").addEventListener("click", () => { state.from = Math.max(0, state.from - PAGE); loadQueuedPage(); });
  document.getElementById("page-next").addEventListener("click", () => { state.from += PAGE; loadQueuedPage(); });
  document.getElementById("timeline-hours").addEventListener("change", loadTimeline);
  if (initial.queue) state.queue = initial.queue;
  if (initial.status) {
    showStatus(initial.status);
    if (state.queue) showQueue(state.queue);
  }
  // The server's is of 6 hours: another choice (a reload keeps the one made) is asked for.
  const hours = Number(document.getElementById("timeline-hours").value);
  if (initial.timeline && Math.round((initial.timeline.to - initial.timeline.from) / 3600) === hours) drawTimeline(initial.timeline);
  else loadTimeline();
  let timelineDue = null;
  const timelineSoon = () => { if (!timelineDue) timelineDue = setTimeout(() => { timelineDue = null; loadTimeline(); }, 1000); };
  connect((status) => {
    if (!isNew("status", status)) return;
    showStatus(status);
    if (state.queue) showQueue(state.queue);
    timelineSoon();
  }, (queue) => {
    if (!isNew("queue", queue)) return;
    if (state.status) { showQueue(queue); showStatus(state.status); } else state.queue = queue;
    timelineSoon();
  });
  setInterval(loadTimeline, 60000);
}

// Deferred: the document is parsed when this runs, and what it draws is in the first paint.
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
