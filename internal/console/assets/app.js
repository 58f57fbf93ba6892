// Zoo's web console: plain JavaScript, no build step, nothing from
// elsewhere. Every text from the server goes into the page through
// textContent, never as HTML.
"use strict";

const $ = (sel) => document.querySelector(sel);
const api = "api/";

// h builds an element: h("a", {href: "#"}, "text", child...).
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

// ---- state --------------------------------------------------------------

const state = {
  me: { tree: true },     // who is logged in: {user, digestId, csrf, tree}
  path: "/",              // the node shown
  node: null,             // its last answer
  loads: 0,               // loadNode calls: the latest one's answer is shown
  answered: 0,            // loadNode calls answered, shown or not
  view: "text",           // data view: text, json, hex
  tab: "tree",
};

// ---- API ----------------------------------------------------------------

class APIError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : "HTTP " + status);
    this.status = status;
    this.code = body && body.code;
    this.name_ = body && body.name;
  }
  describe() {
    return this.name_ ? `${this.name_} (${this.code}): ${this.message}` : this.message;
  }
}

async function call(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  if (method !== "GET" && state.me.csrf) opts.headers["X-Zoo-CSRF"] = state.me.csrf;
  const resp = await fetch(api + path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { data = null; }
  if (!resp.ok) throw new APIError(resp.status, data);
  return data;
}

// ---- toast --------------------------------------------------------------

let toastTimer = 0;
function toast(msg, error) {
  const t = $("#toast");
  t.textContent = msg;
  t.className = error ? "error" : "";
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, error ? 6000 : 2500);
}
function report(err) {
  toast(err instanceof APIError ? err.describe() : String(err && err.message || err), true);
}

// ---- login --------------------------------------------------------------

function renderMe() {
  const me = state.me;
  const user = $("#user");
  user.textContent = me.user ? me.user : "read-only";
  user.title = me.user ? "digest " + me.digestId : "log in to make changes";
  user.classList.toggle("in", !!me.user);
  $("#login-btn").hidden = !!me.user;
  $("#logout-btn").hidden = !me.user;
  for (const b of document.querySelectorAll(".needs-login")) {
    b.disabled = !me.user;
    b.title = me.user ? "" : "log in to make changes";
  }
  if (state.node) renderActions();
}

async function loadMe() {
  try { state.me = await call("GET", "me"); } catch (e) { report(e); }
  renderMe();
}

function setupLogin() {
  const dlg = $("#login-dlg");
  $("#login-btn").addEventListener("click", () => { dlg.showModal(); $("#login-user").focus(); });
  $("#login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      state.me = await call("POST", "login", { user: $("#login-user").value, password: $("#login-pass").value });
      $("#login-pass").value = "";
      dlg.close();
      renderMe();
      toast("Logged in as " + state.me.user);
      refresh();
    } catch (e) { report(e); }
  });
  $("#logout-btn").addEventListener("click", async () => {
    try { state.me = await call("POST", "logout"); } catch (e) { report(e); }
    state.me.csrf = undefined;
    renderMe();
    refresh();
  });
  for (const b of document.querySelectorAll("dialog [data-close]")) {
    b.addEventListener("click", () => b.closest("dialog").close());
  }
}

// ---- tree ---------------------------------------------------------------

function join(parent, name) { return parent === "/" ? "/" + name : parent + "/" + name; }
function parentOf(p) { const i = p.lastIndexOf("/"); return i <= 0 ? "/" : p.slice(0, i); }

function b64bytes(b64) {
  if (!b64) return new Uint8Array(0);
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
function bytesB64(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}
function utf8(bytes) { return new TextDecoder("utf-8", { fatal: false }).decode(bytes); }
function hexdump(bytes) {
  const lines = [];
  for (let off = 0; off < bytes.length; off += 16) {
    const row = bytes.slice(off, off + 16);
    const hexs = Array.from(row, (b) => b.toString(16).padStart(2, "0"));
    const ascii = Array.from(row, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(off.toString(16).padStart(8, "0") + "  " + hexs.join(" ").padEnd(47) + "  " + ascii);
  }
  return lines.join("\n");
}
function parseHex(text) {
  const clean = text.replace(/\s+/g, "");
  if (clean.length % 2 || /[^0-9a-fA-F]/.test(clean)) throw new Error("hex data needs pairs of 0-9a-f");
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.substr(i * 2, 2), 16);
  return out;
}

function renderData() {
  const pre = $("#data");
  const n = state.node;
  pre.classList.remove("empty");
  if (n.errors && n.errors.data) {
    pre.textContent = "Not readable: " + n.errors.data;
    pre.classList.add("empty");
    return;
  }
  const bytes = b64bytes(n.data);
  $("#data-len").textContent = bytes.length + " bytes";
  if (bytes.length === 0) {
    pre.textContent = "(no data)";
    pre.classList.add("empty");
    return;
  }
  if (state.view === "hex") { pre.textContent = hexdump(bytes); return; }
  const text = utf8(bytes);
  if (state.view === "json") {
    try { pre.textContent = JSON.stringify(JSON.parse(text), null, 2); }
    catch (e) { pre.textContent = "Not JSON: " + e.message + "\n\n" + text; }
    return;
  }
  pre.textContent = text;
}

function fmtTime(ms) { return ms ? new Date(ms).toISOString().replace("T", " ").replace(".000Z", "Z") : "0"; }

function renderNode() {
  const n = state.node;
  $("#node-path").textContent = n.path;
  $("#goto-path").value = n.path;
  // breadcrumbs
  const crumbs = $("#crumbs");
  crumbs.replaceChildren(h("a", { href: "#/tree?path=/" }, "/"));
  let acc = "";
  n.path.split("/").filter(Boolean).forEach((part, i) => {
    acc += "/" + part;
    if (i > 0) crumbs.append(h("span", { class: "sep" }, "/"));
    crumbs.append(h("a", { href: "#/tree?path=" + encodeURIComponent(acc) }, part));
  });
  // children
  const ul = $("#children");
  ul.replaceChildren();
  if (n.errors && n.errors.children) ul.append(h("li", { class: "note" }, "Not readable: " + n.errors.children));
  else if (n.children.length === 0) ul.append(h("li", { class: "note" }, "No children"));
  for (const c of n.children) {
    ul.append(h("li", {}, h("a", { href: "#/tree?path=" + encodeURIComponent(join(n.path, c)) }, c)));
  }
  if (n.truncated) ul.append(h("li", { class: "note" }, "… more not listed"));
  $("#child-count").textContent = String(n.stat.numChildren);
  renderData();
  // stat
  const s = n.stat;
  const rows = [["czxid", s.czxid], ["ctime", fmtTime(s.ctime)], ["mzxid", s.mzxid], ["mtime", fmtTime(s.mtime)],
    ["pzxid", s.pzxid], ["cversion", s.cversion], ["dataVersion", s.version], ["aclVersion", s.aversion],
    ["ephemeralOwner", s.ephemeralOwner], ["dataLength", s.dataLength], ["numChildren", s.numChildren]];
  $("#stat").replaceChildren(...rows.map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, v))));
  // acl
  const tb = $("#acl tbody");
  tb.replaceChildren();
  if (n.errors && n.errors.acl) tb.append(h("tr", {}, h("td", { colspan: "3" }, "Not readable: " + n.errors.acl)));
  for (const a of n.acl) tb.append(h("tr", {}, h("td", {}, a.scheme), h("td", {}, a.id), h("td", {}, a.perms)));
  renderActions();
}

function renderActions() {
  const root = state.node && (state.node.path === "/" || state.node.path === "/zookeeper" || state.node.path.startsWith("/zookeeper/"));
  $("#act-delete").disabled = !state.me.user || root;
}

async function loadNode(path) {
  state.path = path;
  // Answers can come back out of order: only the latest load's is shown,
  // or a slow answer for the node left behind would replace the one asked
  // for since.
  const seq = ++state.loads;
  try {
    const node = await call("GET", "node?path=" + encodeURIComponent(path));
    if (seq !== state.loads) return;
    state.node = node;
    renderNode();
  } catch (e) {
    if (seq !== state.loads) return;
    report(e);
    if (e.status === 404 && path !== "/") location.hash = "#/tree?path=" + encodeURIComponent(parentOf(path));
  } finally {
    state.answered++;
  }
}

async function runSearch(q) {
  const box = $("#search-results");
  box.replaceChildren(h("div", { class: "note" }, "Searching…"));
  box.hidden = false;
  try {
    const r = await call("GET", "search?path=" + encodeURIComponent(state.path) + "&q=" + encodeURIComponent(q));
    box.replaceChildren();
    if (r.paths.length === 0) box.append(h("div", { class: "note" }, "No path under " + state.path + " contains “" + q + "”"));
    for (const p of r.paths) box.append(h("a", { class: "hit", href: "#/tree?path=" + encodeURIComponent(p) }, p));
    const note = `${r.paths.length} found, ${r.visited} nodes looked at` + (r.complete ? "" : " (stopped early)") +
      (r.unreadable ? `, ${r.unreadable} not readable` : "");
    box.append(h("div", { class: "note" }, note));
  } catch (e) { box.hidden = true; report(e); }
}

// The edit dialog serves three actions: create a child, edit data.
let editing = null;
function openEditor(kind) {
  const n = state.node;
  editing = kind;
  $("#edit-title").textContent = kind === "create" ? "New child of " + n.path : "Edit " + n.path;
  $("#edit-name-row").hidden = kind !== "create";
  $("#edit-mode-row").hidden = kind !== "create";
  $("#edit-acl-row").hidden = kind !== "create";
  $("#edit-name").value = "";
  const bytes = kind === "create" ? new Uint8Array(0) : b64bytes(n.data);
  const text = utf8(bytes);
  const binary = kind !== "create" && bytesB64(new TextEncoder().encode(text)) !== (n.data || "");
  $("#edit-enc").value = binary ? "hex" : "text";
  $("#edit-data").value = binary ? hexdump(bytes).split("\n").map((l) => l.slice(10, 57)).join("\n") : text;
  $("#edit-submit").textContent = kind === "create" ? "Create" : "Save";
  $("#edit-dlg").showModal();
  (kind === "create" ? $("#edit-name") : $("#edit-data")).focus();
}

function editedData() {
  const raw = $("#edit-data").value;
  if ($("#edit-enc").value === "hex") return { data: bytesB64(parseHex(raw)), encoding: "base64" };
  return { data: raw, encoding: "text" };
}

async function submitEdit(ev) {
  ev.preventDefault();
  const n = state.node;
  try {
    const d = editedData();
    if (editing === "create") {
      const name = $("#edit-name").value.trim();
      if (!name || name.includes("/")) throw new Error("a name is needed, without '/'");
      const r = await call("POST", "node", { path: join(n.path, name), ...d, mode: $("#edit-mode").value, acl: $("#edit-acl").value });
      $("#edit-dlg").close();
      toast("Created " + r.path);
      location.hash = "#/tree?path=" + encodeURIComponent(r.path);
    } else {
      await call("PUT", "node", { path: n.path, ...d, version: n.stat.version });
      $("#edit-dlg").close();
      toast("Saved " + n.path);
      loadNode(n.path);
    }
  } catch (e) { report(e); }
}

async function deleteNode() {
  const n = state.node;
  if (!confirm("Delete " + n.path + "?")) return;
  try {
    await call("DELETE", "node?path=" + encodeURIComponent(n.path) + "&version=" + n.stat.version);
    toast("Deleted " + n.path);
    location.hash = "#/tree?path=" + encodeURIComponent(parentOf(n.path));
  } catch (e) { report(e); }
}

function setupTree() {
  $("#goto").addEventListener("submit", (ev) => {
    ev.preventDefault();
    let p = $("#goto-path").value.trim() || "/";
    if (!p.startsWith("/")) p = "/" + p;
    location.hash = "#/tree?path=" + encodeURIComponent(p);
  });
  $("#search").addEventListener("submit", (ev) => { ev.preventDefault(); runSearch($("#search-q").value.trim()); });
  for (const b of document.querySelectorAll("#data-view button")) {
    b.addEventListener("click", () => {
      state.view = b.dataset.view;
      for (const o of document.querySelectorAll("#data-view button")) o.classList.toggle("on", o === b);
      if (state.node) renderData();
    });
  }
  $("#act-create").addEventListener("click", () => openEditor("create"));
  $("#act-edit").addEventListener("click", () => openEditor("edit"));
  $("#act-delete").addEventListener("click", deleteNode);
  $("#edit-form").addEventListener("submit", submitEdit);
}

// ---- sessions -----------------------------------------------------------

async function loadSessions() {
  try {
    const v = await call("GET", "sessions");
    $("#sess-count").textContent = "(" + v.sessions.length + ")";
    $("#sessions tbody").replaceChildren(...(v.sessions.length ? v.sessions.map((s) => h("tr", {},
      h("td", {}, s.id), h("td", {}, s.remote || "elsewhere"), h("td", {}, s.timeout ? s.timeout + " ms" : "—"),
      h("td", {}, s.ephemerals.length ? s.ephemerals.join("\n") : "—"), h("td", {}, s.watches),
      h("td", {}, s.remote ? s.queued : "—"), h("td", {}, s.lastOp || "—"))) :
      [h("tr", {}, h("td", { colspan: "7" }, "No sessions"))]));
    $("#watch-count").textContent = "(" + v.watches.length + ")";
    $("#watches tbody").replaceChildren(...(v.watches.length ? v.watches.map((w) => h("tr", {},
      h("td", {}, h("a", { href: "#/tree?path=" + encodeURIComponent(w.path) }, w.path)), h("td", {}, w.sessions.join(" ")))) :
      [h("tr", {}, h("td", { colspan: "2" }, "No watches on this server"))]));
  } catch (e) { report(e); }
}

// ---- ensemble -----------------------------------------------------------

function tile(k, v) { return h("div", { class: "tile" }, h("div", { class: "k" }, k), h("div", { class: "v" }, v)); }

async function loadEnsemble() {
  try {
    const e = await call("GET", "ensemble");
    renderMode(e);
    $("#ens-tiles").replaceChildren(
      tile("mode", e.mode || "—"),
      tile("server id", e.standalone ? "standalone" : e.myId),
      tile("leader", e.standalone ? "itself" : e.leaderId || "none"),
      tile("term", e.standalone ? "—" : e.term),
      tile("last zxid", "0x" + Number(e.zxid).toString(16)),
      tile("version", (e.version || "").split(",")[0] || "—"));
    $("#members tbody").replaceChildren(...e.members.map((m) => h("tr", {},
      h("td", {}, m.self ? m.id + " (this)" : m.id),
      h("td", {}, h("span", { class: "pill " + (m.role === "leader" ? "lead" : "ok") }, m.role)),
      h("td", {}, m.quorumAddr || "—"), h("td", {}, m.clientAddr || "—"),
      h("td", {}, m.match >= 0 ? "0x" + m.match.toString(16) : "—"), h("td", {}, m.lag >= 0 ? m.lag : "—"),
      h("td", {}, h("span", { class: "pill " + (m.live ? "ok" : "bad") }, m.self ? "self" : m.live ? "up" : "down")))));
  } catch (e) { report(e); }
}

function renderMode(e) {
  const b = $("#mode");
  b.textContent = e.serving ? e.mode : "not serving";
  b.classList.toggle("bad", !e.serving);
}

// ---- charts -------------------------------------------------------------

const COLORS = ["#1f9d7a", "#3b6fd8", "#e0832d", "#c0392b"];
const HISTORY = 120;
const samples = [];
const series = { rate: [[], []], lat: [[], [], [], []], fsync: [[], []], queue: [[], []] };
const seriesNames = {
  rate: ["reads", "writes"],
  lat: ["read p50", "read p99", "write p50", "write p99"],
  fsync: ["p50", "p99"],
  queue: ["outstanding requests", "max follower lag"],
};

// histQuantile estimates the q-quantile of the samples added between two
// cumulative histograms: the upper bound of the bucket it falls in.
function histQuantile(a, b, q) {
  if (!a || !b || b.counts.length !== a.counts.length || !b.counts.length) return 0;
  const total = b.count - a.count;
  if (total <= 0) return 0;
  const want = q * total;
  for (let i = 0; i < b.counts.length; i++) {
    if (b.counts[i] - a.counts[i] >= want) return b.bounds[i];
  }
  return b.bounds[b.bounds.length - 1];
}

function push(arr, v) { arr.push(v); if (arr.length > HISTORY) arr.shift(); }

function addSample(s) {
  const prev = samples[samples.length - 1];
  samples.push(s);
  if (samples.length > 2) samples.shift();
  if (!prev) return;
  const dt = Math.max((s.time - prev.time) / 1000, 0.001);
  push(series.rate[0], Math.max(0, (s.reads - prev.reads) / dt));
  push(series.rate[1], Math.max(0, (s.writes - prev.writes) / dt));
  push(series.lat[0], s.readLatency[0] || 0);
  push(series.lat[1], s.readLatency[2] || 0);
  push(series.lat[2], s.writeLatency[0] || 0);
  push(series.lat[3], s.writeLatency[2] || 0);
  push(series.fsync[0], histQuantile(prev.fsync, s.fsync, 0.5) * 1000);
  push(series.fsync[1], histQuantile(prev.fsync, s.fsync, 0.99) * 1000);
  push(series.queue[0], s.outstanding);
  push(series.queue[1], s.lag);
}

function fmtNum(v) {
  if (v >= 1000) return (v / 1000).toFixed(1) + "k";
  if (v >= 10 || v === 0) return v.toFixed(0);
  return v.toFixed(v >= 1 ? 1 : 2);
}

function draw(id, lines) {
  const cv = document.getElementById("ch-" + id);
  const w = cv.clientWidth, ht = cv.clientHeight;
  if (!w || !ht) return;
  const dpr = window.devicePixelRatio || 1;
  if (cv.width !== Math.round(w * dpr)) { cv.width = Math.round(w * dpr); cv.height = Math.round(ht * dpr); }
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, ht);
  const css = getComputedStyle(document.documentElement);
  const muted = css.getPropertyValue("--muted").trim(), line = css.getPropertyValue("--line").trim();
  let top = 0;
  for (const l of lines) for (const v of l) top = Math.max(top, v);
  top = top <= 0 ? 1 : top * 1.15;
  const left = 40, bottom = ht - 18;
  ctx.font = "11px system-ui, sans-serif";
  ctx.fillStyle = muted;
  ctx.strokeStyle = line;
  ctx.lineWidth = 1;
  for (let i = 0; i <= 3; i++) {
    const y = 6 + (bottom - 6) * i / 3;
    ctx.beginPath(); ctx.moveTo(left, y + 0.5); ctx.lineTo(w, y + 0.5); ctx.stroke();
    ctx.fillText(fmtNum(top * (3 - i) / 3), 2, y + 4);
  }
  ctx.fillText(HISTORY + " s", left, ht - 4);
  ctx.fillText("now", w - 22, ht - 4);
  lines.forEach((l, k) => {
    if (l.length < 2) return;
    ctx.strokeStyle = COLORS[k];
    ctx.lineWidth = 1.8;
    ctx.beginPath();
    l.forEach((v, i) => {
      const x = left + (w - left) * (HISTORY - l.length + i) / (HISTORY - 1);
      const y = bottom - (bottom - 6) * v / top;
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
  });
  const lg = document.getElementById("lg-" + id);
  lg.replaceChildren(...lines.map((l, k) => h("span", {}, h("i", { class: "c" + k }), seriesNames[id][k] + " ",
    h("b", {}, l.length ? fmtNum(l[l.length - 1]) : "—"))));
}

function drawCharts() {
  for (const id of Object.keys(series)) draw(id, series[id]);
}

async function pollStats() {
  if (document.hidden) return;
  try {
    addSample(await call("GET", "stats"));
    if (state.tab === "charts") drawCharts();
  } catch (e) { /* the next tick tries again; a down server shows in the badge */ }
}

// ---- routing ------------------------------------------------------------

function route() {
  const hash = location.hash || "#/tree";
  const [tabPart, query] = hash.slice(2).split("?");
  const tab = ["tree", "sessions", "ensemble", "charts"].includes(tabPart) ? tabPart : "tree";
  if (tab !== state.tab) $("#toast").hidden = true;
  state.tab = tab;
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + tab;
  for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("on", a.dataset.tab === tab);
  if (tab === "tree") {
    const p = new URLSearchParams(query || "").get("path") || "/";
    $("#search-results").hidden = true;
    loadNode(p);
    return;
  }
  refresh();
}

function refresh() {
  if (state.tab === "tree" && state.node) loadNode(state.path);
  if (state.tab === "sessions") loadSessions();
  if (state.tab === "ensemble") loadEnsemble();
  if (state.tab === "charts") drawCharts();
}

async function init() {
  setupLogin();
  setupTree();
  $("#toast").addEventListener("click", () => { $("#toast").hidden = true; });
  await loadMe();
  call("GET", "ensemble").then(renderMode).catch(() => {});
  window.addEventListener("hashchange", route);
  window.addEventListener("resize", () => { if (state.tab === "charts") drawCharts(); });
  route();
  pollStats();
  setInterval(pollStats, 1000);
  // Sessions and the ensemble change on their own: keep them current.
  setInterval(() => {
    if (document.hidden) return;
    if (state.tab === "sessions") loadSessions();
    if (state.tab === "ensemble") loadEnsemble();
  }, 2000);
}

document.addEventListener("DOMContentLoaded", init);
