"use strict";
// fcorr report.html: inflates the embedded case list and shows it as a filterable, virtualised
// list; a case's trace and output are inflated only when it is opened. Test data only ever
// reaches the page through textContent: never parsed as markup. The view state lives in the URL
// fragment (#status=failed&q=...&case=ID), so a link reproduces it.
(function () {
  // The cases come in parts (see src/report/html/data.rs): the index block names them; part 0
  // holds the failing and flaky cases, the others the rest in run order, each in the page or, past
  // the page's size cap, in a sibling file report-files/page-K.js loaded on demand. A part's list
  // block is columns, one entry per case; a detail block row is [details, output, extra] or null.
  const STATUSES = ["failed", "error", "timeout", "flaky", "skipped", "passed"];
  const ROW_H = 28;
  const OVERSCAN = 8;
  const $ = (id) => document.getElementById(id);
  const state = { status: "all", q: "", sort: "status", group: "none", case: null };
  let IX = null;        // the index block
  let L = null, n = 0;  // the loaded cases as columns, and how many
  let status = new Uint8Array(0), suiteOf = new Int32Array(0), dur = new Float64Array(0), line = new Uint32Array(0);
  let counts = null;
  let rows = [];        // display rows: a case index, or {group, n}
  let selected = -1;    // case index
  let resolveReady;
  window.fcorrReady = new Promise((resolve) => { resolveReady = resolve; });
  // The detail blocks follow the script in the page; they are read once the parser is done.
  const parsed = new Promise((resolve) => {
    if (document.readyState !== "loading") resolve();
    else document.addEventListener("DOMContentLoaded", () => resolve());
  });

  // A dictionary column: idx[i] indexes dict, -1 for none; an empty idx means none at all.
  const dictAt = (column, i) => { const k = column.idx.length ? column.idx[i] : -1; return k < 0 ? null : column.dict[k]; };
  let msg = [];         // message per case (the list block stores only the cases that have one)
  const suiteName = (i) => L.suites[suiteOf[i]].name;
  const cls = (i) => dictAt(L.class, i);
  const file = (i) => dictAt(L.file, i);
  const change = (i) => dictAt(L.change, i);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function fmtDuration(ms) {
    if (ms === null || ms === undefined || Number.isNaN(ms)) return "";
    if (ms < 1000) return Math.round(ms) + "ms";
    if (ms < 60000) return (ms / 1000).toFixed(1) + "s";
    return Math.floor(ms / 60000) + "m" + Math.round((ms % 60000) / 1000) + "s";
  }

  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    state.status = p.get("status") || "all";
    state.q = p.get("q") || "";
    state.sort = p.get("sort") || "status";
    state.group = p.get("group") || "none";
    state.case = p.get("case");
  }

  function writeHash() {
    const p = new URLSearchParams();
    if (state.status !== "all") p.set("status", state.status);
    if (state.q) p.set("q", state.q);
    if (state.sort !== "status") p.set("sort", state.sort);
    if (state.group !== "none") p.set("group", state.group);
    if (selected >= 0) p.set("case", L.id[selected]);
    const text = p.toString();
    history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }

  // One embedded block: base64 → zlib → JSON.
  async function inflate(id) {
    const block = $(id);
    if (!block) throw new Error("the page has no data block " + id + " (was it cut short?)");
    return inflateText(block.textContent.trim());
  }
  async function inflateText(text) {
    let bytes;
    if (typeof Uint8Array.fromBase64 === "function") {
      bytes = Uint8Array.fromBase64(text);
    } else {
      const binary = atob(text);
      bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return JSON.parse(await new Response(stream).text());
  }

  // Parts: {n, file, start (first case index once loaded), blocks, detail sources, promise}.
  const parts = [];
  const loadedStarts = [], loadedParts = [];   // in load order, so starts increase
  const last = (starts, i) => {
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= i) lo = mid; else hi = mid - 1; }
    return lo;
  };
  const grow = (Type, have, add) => { const out = new Type(have.length + add.length); out.set(have); out.set(add, have.length); return out; };
  const dictColumn = () => ({ dict: [], idx: new Int32Array(0), map: new Map() });
  function addDict(column, part, m) {
    const remap = part.dict.map((d) => {
      let k = column.map.get(d);
      if (k === undefined) { k = column.dict.length; column.dict.push(d); column.map.set(d, k); }
      return k;
    });
    const add = new Int32Array(m).fill(-1);
    if (part.idx.length) for (let i = 0; i < m; i++) { const k = part.idx[i]; if (k >= 0) add[i] = remap[k]; }
    column.idx = grow(Int32Array, column.idx, add);
  }
  // Appends part k's cases (its inflated list block P) to the columns; `detail` says where each
  // of its detail blocks is: {id} of an element in the page, or {text} from a sibling file.
  function addPart(k, P, detail) {
    const m = P.n, start = n;
    for (let i = 0; i < m; i++) { L.id.push(P.id[i]); L.name.push(P.name[i]); msg.push(null); }
    P.msg.at.forEach((i, j) => { msg[start + i] = P.msg.text[j]; });
    status = grow(Uint8Array, status, P.status);
    suiteOf = grow(Int32Array, suiteOf, P.suite);
    line = grow(Uint32Array, line, P.line);
    dur = grow(Float64Array, dur, Float64Array.from(P.dur, (d) => (d === null ? NaN : d)));
    for (const c of ["class", "file", "change", "category", "tags"]) addDict(L[c], P[c], m);
    n += m;
    Object.assign(parts[k], { start, blocks: P.blocks, detail, cache: new Map(), loaded: true });
    loadedStarts.push(start); loadedParts.push(k);
    // Everything computed over the cases is computed again, now over more of them.
    counts = null; searchIndex = null; lastQuery = null; lastMask = null;
    for (const key of Object.keys(orders)) delete orders[key];
  }
  // Detail block b of part p, inflated on first use and kept.
  function locate(i) {
    const p = parts[loadedParts[last(loadedStarts, i)]];
    const b = last(p.blocks, i - p.start);
    return { p, b, row: i - p.start - p.blocks[b] };
  }
  function loadBlock(p, b) {
    let entry = p.cache.get(b);
    if (!entry) {
      entry = { rows: null, error: null, promise: null };
      const source = p.detail[b];
      entry.promise = parsed.then(() => (source.id ? inflate(source.id) : inflateText(source.text))).then(
        (r) => { entry.rows = r; },
        (e) => { entry.error = e.message; });
      p.cache.set(b, entry);
    }
    return entry;
  }

  // Sibling files: `fetch` cannot read them from disk, a script element with a src can; each calls
  // fcorrPart(k, token, list, details), and a token from another page is refused.
  const waiting = new Map();
  window.fcorrPart = (k, token, list, details) => {
    const w = waiting.get(k);
    if (!w) return;
    waiting.delete(k);
    if (token !== IX.token) w.reject(new Error(IX.parts[k].file + " belongs to another report: copy report.html together with its report-files folder"));
    else w.resolve({ list, details });
  };
  function loadPart(k) {
    const part = parts[k];
    if (part.promise) return part.promise;
    const file = IX.parts[k].file;
    part.promise = new Promise((resolve, reject) => {
      if (!/^report-files\/page-[0-9]+\.js$/.test(file)) { reject(new Error("unexpected part file " + file)); return; }
      waiting.set(k, { resolve, reject });
      const script = document.createElement("script");
      script.src = file;
      script.onerror = () => { waiting.delete(k); reject(new Error("could not read " + file + ": keep the report-files folder beside report.html")); };
      script.onload = () => { if (waiting.delete(k)) reject(new Error(file + " did not hand over its cases")); };
      document.head.appendChild(script);
    }).then(async ({ list, details }) => {
      const P = await inflateText(list);
      if (P.n !== part.n) throw new Error(file + " holds " + P.n + " cases, the page expected " + part.n);
      addPart(k, P, details.map((text) => ({ text })));
    });
    part.promise.catch((e) => { part.error = e.message; paintPaged(); });
    return part.promise;
  }
  const pendingParts = () => parts.map((p, k) => k).filter((k) => !parts[k].loaded);
  function pendingCounts() {
    const c = new Array(STATUSES.length).fill(0);
    for (const k of pendingParts()) IX.parts[k].counts.forEach((x, s) => { c[s] += x; });
    return c;
  }
  // Loads every sibling file, one after another, saying how far it got.
  let loadingAll = null;
  function loadAll() {
    if (!loadingAll) {
      loadingAll = (async () => {
        const todo = pendingParts();
        for (let j = 0; j < todo.length; j++) {
          paintPaged("Loading the other cases: file " + (j + 1) + " of " + todo.length + "…");
          await loadPart(todo[j]);
        }
      })().finally(() => { loadingAll = null; apply(); });
    }
    return loadingAll;
  }
  // Says what is not loaded yet, with a button to load it.
  function paintPaged(note) {
    const box = $("paged");
    const todo = pendingParts();
    const failed = parts.find((p) => p.error);
    box.hidden = todo.length === 0 && !failed;
    box.replaceChildren();
    if (box.hidden) return;
    if (failed) { box.appendChild(el("span", "s-failed", "Some cases could not be loaded: " + failed.error)); return; }
    if (note) { box.appendChild(el("span", null, note)); return; }
    const c = pendingCounts();
    const what = STATUSES.map((s, i) => (c[i] ? c[i] + " " + s : null)).filter(Boolean).join(", ");
    box.appendChild(el("span", null, "Not loaded yet: " + what + " (" + todo.length + (todo.length === 1 ? " file" : " files") + " in report-files/ beside this page; the list and search cover the loaded cases). "));
    const b = el("button", "load", "Load them");
    b.type = "button";
    b.addEventListener("click", () => { loadAll().catch(() => {}); });
    box.appendChild(b);
  }

  // Search: each text column is joined into one lower-cased string with row offsets, so a query
  // is a few native indexOf scans instead of 100,000 per-row tests; repeated strings (class, file,
  // suite) are searched once in their dictionary. Built once, right after the list is shown.
  let searchIndex = null;
  function textColumn(values) {
    const raw = values.join("\u0000");
    let text = raw.toLowerCase();
    let lengths = values;
    // Lower-casing may lengthen a few characters (İ → i̇); then offsets come from each value.
    if (text.length !== raw.length) {
      lengths = values.map((v) => (v == null ? "" : String(v).toLowerCase()));
      text = lengths.join("\u0000");
    }
    const starts = new Int32Array(values.length + 1);
    let p = 0;
    for (let i = 0; i < values.length; i++) { starts[i] = p; const v = lengths[i]; p += (v == null ? 0 : v.length) + 1; }
    starts[values.length] = p;
    return { text, starts };
  }
  function buildSearch() {
    if (!searchIndex) {
      const lower = (dict) => dict.map((d) => String(d).toLowerCase());
      searchIndex = {
        columns: [textColumn(L.name), textColumn(msg)],
        dicts: [
          { dict: lower(L.class.dict), idx: L.class.idx },
          { dict: lower(L.file.dict), idx: L.file.idx },
          { dict: lower(L.suites.map((s) => s.name)), idx: suiteOf },
        ],
      };
    }
    return searchIndex;
  }
  let lastQuery = null, lastMask = null;
  function matches(q) {
    if (q === lastQuery) return lastMask;
    const index = buildSearch();
    const mask = new Uint8Array(n);
    for (const { text, starts } of index.columns) {
      let p = text.indexOf(q);
      while (p >= 0) {
        let lo = 0, hi = n - 1;
        while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= p) lo = mid; else hi = mid - 1; }
        if (p + q.length < starts[lo + 1]) { mask[lo] = 1; p = text.indexOf(q, starts[lo + 1]); }
        else p = text.indexOf(q, p + 1);   // ran into the next row: not a match for this one
      }
    }
    for (const { dict, idx } of index.dicts) {
      const hit = dict.map((d) => d.includes(q));
      if (!hit.some(Boolean)) continue;
      for (let i = 0; i < idx.length; i++) { const k = idx[i]; if (k >= 0 && hit[k]) mask[i] = 1; }
    }
    lastQuery = q; lastMask = mask;
    return mask;
  }

  function groupKey(i) {
    switch (state.group) {
      case "suite": return suiteName(i);
      case "file": return file(i) || "(no file)";
      case "category": return dictAt(L.category, i) || "(no category)";
      case "tag": return dictAt(L.tags, i) || "(no tags)";
      default: return "";
    }
  }

  // Case indices in each sort order, computed once per order: a filter is then one pass that
  // keeps the order, instead of a sort of up to 100,000 rows on every keystroke.
  const orders = {};
  function order(sort) {
    if (orders[sort]) return orders[sort];
    const o = new Int32Array(n);
    if (sort === "status") {
      // Counting sort: stable, one pass, no comparisons (this order is the first one shown).
      const at = new Int32Array(STATUSES.length);
      for (let s = 1, c = countStatuses(); s < STATUSES.length; s++) at[s] = at[s - 1] + c[s - 1];
      for (let i = 0; i < n; i++) o[at[status[i]]++] = i;
    } else {
      for (let i = 0; i < n; i++) o[i] = i;
      const names = L.name;
      if (sort === "duration") o.sort((a, b) => (dur[b] || 0) - (dur[a] || 0) || a - b);
      else o.sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : a - b));
    }
    orders[sort] = o;
    return o;
  }

  function countStatuses() {
    if (!counts) {
      counts = new Array(STATUSES.length).fill(0);
      for (let i = 0; i < n; i++) counts[status[i]]++;
    }
    return counts;
  }

  function apply() {
    const t0 = performance.now();
    const q = state.q.trim().toLowerCase();
    const want = STATUSES.indexOf(state.status);
    const mask = q ? matches(q) : null;
    const o = order(state.sort);
    const picked = new Int32Array(n);
    let shown = 0;
    for (let j = 0; j < n; j++) {
      const i = o[j];
      if (want >= 0 && status[i] !== want) continue;
      if (mask && !mask[i]) continue;
      picked[shown++] = i;
    }
    const view = picked.subarray(0, shown);
    if (state.group === "none") {
      rows = view;
    } else {
      const groups = new Map();
      for (const i of view) {
        const key = groupKey(i);
        let members = groups.get(key);
        if (!members) groups.set(key, (members = []));
        members.push(i);
      }
      rows = [];
      for (const key of [...groups.keys()].sort()) {
        const members = groups.get(key);
        rows.push({ group: key, n: members.length });
        for (const i of members) rows.push(i);
      }
    }
    $("shown-count").textContent = String(shown);
    if (!loadingAll) paintPaged();
    $("spacer").style.height = rows.length * ROW_H + "px";
    paintChips();
    paint();
    document.body.dataset.filterMs = (performance.now() - t0).toFixed(1);
    document.body.dataset.shown = String(shown);
  }

  function paintChips() {
    const loaded = countStatuses(), later = pendingCounts();
    const c = loaded.map((x, s) => x + later[s]);
    const chips = $("chips");
    chips.replaceChildren();
    const add = (key, label, count) => {
      const b = el("button", "chip", label + " " + count);
      b.type = "button";
      b.dataset.status = key;
      b.setAttribute("aria-pressed", String(state.status === key));
      b.addEventListener("click", () => {
        state.status = key; apply(); writeHash();
        // Cases of this status only in sibling files: load them (not for "all": that is everything).
        const s = STATUSES.indexOf(key);
        if (s >= 0 && pendingCounts()[s] > 0) loadAll().catch(() => {});
      });
      chips.appendChild(b);
    };
    add("all", "All", c.reduce((a, b) => a + b, 0));
    STATUSES.forEach((s, i) => { if (c[i] > 0) add(s, s, c[i]); });
  }

  function location_(i) {
    const f = file(i);
    return f ? f + (line[i] ? ":" + line[i] : "") : null;
  }

  function rowElement(r) {
    if (typeof r === "object") {
      const g = el("div", "group", r.group + " (" + r.n + ")");
      g.setAttribute("role", "presentation");
      return g;
    }
    const st = STATUSES[status[r]];
    const row = el("div", "row " + st + (r === selected ? " sel" : ""));
    row.setAttribute("role", "option");
    row.setAttribute("aria-selected", String(r === selected));
    row.dataset.id = L.id[r];
    row.dataset.status = st;
    row.appendChild(el("span", "dot")).title = st;
    row.appendChild(el("span", "name", L.name[r]));
    const where = location_(r);
    row.appendChild(el("span", "where", suiteName(r) + (where ? " · " + where : "")));
    const ch = change(r);
    if (ch) row.appendChild(el("span", "badge", ch.replace(/-/g, " ")));
    row.appendChild(el("span", "dur", fmtDuration(dur[r])));
    row.addEventListener("click", () => { select(r, false); revealDetail(); });
    return row;
  }

  function paint() {
    const list = $("list");
    const first = Math.max(0, Math.floor(list.scrollTop / ROW_H) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW_H) + OVERSCAN);
    const box = $("rows");
    box.style.transform = "translateY(" + first * ROW_H + "px)";
    const fragment = document.createDocumentFragment();
    for (let k = first; k < last; k++) fragment.appendChild(rowElement(rows[k]));
    box.replaceChildren(fragment);
  }

  function section(parent, title, text) {
    if (text === null || text === undefined || text === "") return;
    parent.appendChild(el("h3", null, title));
    parent.appendChild(el("pre", null, typeof text === "string" ? text : JSON.stringify(text, null, 2)));
  }

  // The detail pane: what the list knows at once, the rest when the case's block is inflated.
  function showDetail(i) {
    const pane = $("detail");
    pane.replaceChildren();
    if (i < 0) { pane.appendChild(el("p", "muted", "Select a test to see its details.")); return; }
    // On a narrow screen the pane is under the list: a way back up (hidden by CSS elsewhere).
    const back = el("button", "back", "↑ Back to the list");
    back.type = "button";
    back.addEventListener("click", () => $("tests").scrollIntoView({ block: "start" }));
    pane.appendChild(back);
    const at = locate(i);
    const block = loadBlock(at.p, at.b);
    if (!block.rows && !block.error) block.promise.then(() => { if (selected === i) showDetail(i); });
    const more = (block.rows && block.rows[at.row]) || [null, null, null];
    const extra = more[2] || {};
    const st = STATUSES[status[i]];
    pane.appendChild(el("h2", null, L.name[i]));
    const dl = el("dl");
    const item = (k, v) => { if (v === null || v === undefined || v === "") return; dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", null, v)); };
    dl.appendChild(el("dt", null, "status"));
    dl.appendChild(el("dd")).appendChild(el("span", "st " + st, st));
    item("suite", suiteName(i));
    item("class", cls(i));
    const where = location_(i);
    // extra.url is an https link to the code built by fcorr (report::links); href set as a property, never as HTML.
    if (where && extra.url && /^https?:\/\//.test(extra.url)) { const a = el("a", null, where); a.href = extra.url; dl.appendChild(el("dt", null, "file")); dl.appendChild(el("dd")).appendChild(a); }
    else item("file", where);
    item("duration", fmtDuration(dur[i]));
    const ch = change(i);
    if (ch) item("vs baseline", ch.replace(/-/g, " ") + (L.baseline ? " (" + L.baseline.slice(0, 12) + ")" : ""));
    if (extra.retries) item("retries", extra.retries);
    if (extra.score !== undefined) item("score", extra.score);
    if (extra.critical) item("critical", "yes");
    if (extra.expectation) item("expectation", extra.expectation);
    if (extra.usage) item("usage", extra.usage.tokens + " tokens, " + extra.usage.llm_calls + " calls" + (extra.usage.cost_usd ? ", $" + extra.usage.cost_usd : ""));
    item("tags", dictAt(L.tags, i));
    item("id", L.id[i]);
    pane.appendChild(dl);
    section(pane, "Message", msg[i]);
    if (block.error) { pane.appendChild(el("p", "s-failed", "The details of this test could not be read: " + block.error)); return; }
    if (!block.rows) { pane.appendChild(el("p", "muted", "Loading details…")); return; }
    if (extra.reasons && extra.reasons.length) {
      pane.appendChild(el("h3", null, "Reasons"));
      const ul = el("ul");
      for (const r of extra.reasons) {
        const parts = [r.code];
        if (r.expected !== undefined) parts.push("expected " + JSON.stringify(r.expected));
        if (r.actual !== undefined) parts.push("actual " + JSON.stringify(r.actual));
        if (r.message) parts.push(r.message);
        ul.appendChild(el("li", null, parts.join(" · ")));
      }
      pane.appendChild(ul);
    }
    section(pane, "Details", more[0]);
    section(pane, "Output", more[1]);
    if (extra.output_omitted) pane.appendChild(el("p", "muted", "Captured output left out of this page to keep it small: see results.json."));
    if (extra.attempts && extra.attempts.length) {
      pane.appendChild(el("h3", null, "Attempts"));
      const ol = el("ol");
      for (const a of extra.attempts) ol.appendChild(el("li", null, a.status + (a.duration_ms ? " in " + fmtDuration(a.duration_ms) : "") + (a.message ? ": " + a.message : "")));
      pane.appendChild(ol);
    }
  }

  function select(i, scroll) {
    selected = i;
    showDetail(i);
    if (scroll) {
      const k = rows.indexOf(i);
      const list = $("list");
      if (k >= 0 && (k * ROW_H < list.scrollTop || (k + 1) * ROW_H > list.scrollTop + list.clientHeight)) {
        list.scrollTop = Math.max(0, k * ROW_H - list.clientHeight / 2);
      }
    }
    paint();
    writeHash();
  }

  // When the detail pane is below the list (a phone), a tapped case's details are scrolled into
  // view rather than opened off screen.
  function revealDetail() {
    const pane = $("detail");
    const box = pane.getBoundingClientRect();
    if (box.top >= window.innerHeight - 40 || box.bottom <= 0) pane.scrollIntoView({ block: "start" });
  }

  // The start time as the reader's own clock says it (the page writes it in UTC).
  function localTimes() {
    for (const t of document.querySelectorAll("footer time[datetime]")) {
      const at = new Date(t.getAttribute("datetime"));
      if (Number.isNaN(at.getTime())) continue;
      try {
        const local = at.toLocaleString(undefined, {
          year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short",
        });
        t.title = t.textContent;
        t.textContent = local;
      } catch { /* an old browser: the UTC time stays */ }
    }
  }

  function step(delta) {
    let k = rows.indexOf(selected);
    for (let m = 0; m < rows.length; m++) {
      k = k < 0 ? (delta > 0 ? 0 : rows.length - 1) : k + delta;
      if (k < 0 || k >= rows.length) return;
      if (typeof rows[k] === "number") { select(rows[k], true); return; }
    }
  }

  function wire() {
    const search = $("search");
    search.value = state.q;
    // Each keystroke filters (a search takes milliseconds); keystrokes within one frame filter once.
    let pending = false;
    search.addEventListener("input", () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => { pending = false; state.q = search.value; apply(); writeHash(); });
    });
    $("sort").value = state.sort;
    $("group").value = state.group;
    $("sort").addEventListener("change", (e) => { state.sort = e.target.value; apply(); writeHash(); });
    $("group").addEventListener("change", (e) => { state.group = e.target.value; apply(); writeHash(); });
    $("list").addEventListener("scroll", () => requestAnimationFrame(paint), { passive: true });
    window.addEventListener("resize", () => requestAnimationFrame(paint));
    document.addEventListener("keydown", (e) => {
      const typing = e.target === search;
      if (e.key === "/" && !typing) { e.preventDefault(); search.focus(); return; }
      if (e.key === "Escape" && typing) { search.value = ""; state.q = ""; apply(); writeHash(); search.blur(); return; }
      if (typing || e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.key === "ArrowDown" || e.key === "j") { e.preventDefault(); step(1); }
      else if (e.key === "ArrowUp" || e.key === "k") { e.preventDefault(); step(-1); }
    });
    window.addEventListener("hashchange", () => {
      const before = selected >= 0 ? L.id[selected] : null;
      readHash();
      search.value = state.q;
      $("sort").value = state.sort;
      $("group").value = state.group;
      apply();
      if (state.case && state.case !== before) openCase(state.case);
    });
  }

  // Opens a case named by a link, clearing filters that would hide it; a case in a sibling file
  // is looked for there, file by file.
  // Whether part k's sibling file may hold case `id`, by its id filter (data.rs `id_filter`: three
  // probes, hex digits 0-4, 5-9 and 10-14 of the id); true when it cannot tell.
  function mayHold(k, id) {
    const f = IX.parts[k].ids;
    if (!f || !/^[0-9a-f]{16}/.test(id)) return true;
    if (!parts[k].ids) parts[k].ids = Uint8Array.from(atob(f), (c) => c.charCodeAt(0));
    const bits = parts[k].ids.length * 8;
    for (let p = 0; p < 3; p++) {
      const b = parseInt(id.slice(5 * p, 5 * p + 5), 16) & (bits - 1);
      if (!(parts[k].ids[b >> 3] & (1 << (b & 7)))) return false;
    }
    return true;
  }

  async function openCase(id) {
    let i = L.id.indexOf(id);
    // Only the files that may hold it: a file whose filter says no does not hold it.
    const todo = pendingParts().filter((k) => mayHold(k, id));
    for (let j = 0; i < 0 && j < todo.length; j++) {
      paintPaged("Looking for the linked case in the other files: " + (j + 1) + " of " + todo.length + "…");
      try { await loadPart(todo[j]); } catch { break; }
      i = L.id.indexOf(id, n - parts[todo[j]].n);
    }
    if (todo.length) apply();
    if (i < 0) return null;
    if (rows.indexOf(i) < 0) {
      state.status = "all"; state.q = ""; $("search").value = "";
      apply();
    }
    select(i, true);
    const at = locate(i);
    return loadBlock(at.p, at.b).promise;
  }

  async function main() {
    const tests = $("tests");
    localTimes();
    try {
      if (typeof DecompressionStream === "undefined") throw new Error("this browser cannot unpack the data (DecompressionStream is missing: use Chrome 80+, Firefox 113+ or Safari 16.4+)");
      IX = await inflate("fcorr-index");
      L = { suites: IX.suites, baseline: IX.baseline, omitted_output: IX.omitted_output, id: [], name: [],
            class: dictColumn(), file: dictColumn(), change: dictColumn(), category: dictColumn(), tags: dictColumn() };
      for (const p of IX.parts) parts.push({ n: p.n, file: p.file || null, loaded: false, promise: null, error: null, ids: null });
      const inline = IX.parts.map((p, k) => k).filter((k) => !IX.parts[k].file);
      const lists = await Promise.all(inline.map((k) => inflate("fcorr-p" + k)));
      inline.forEach((k, j) => addPart(k, lists[j], lists[j].blocks.map((_, b) => ({ id: "fcorr-p" + k + "-d" + b }))));
      readHash();
      tests.hidden = false;
      wire();
      apply();
      // A linked case is shown with its details before the page says it is ready.
      if (state.case) await openCase(state.case);
      if (L.omitted_output > 0) {
        tests.insertBefore(el("p", "muted", "Captured output of " + L.omitted_output + " passing tests is left out of this page to keep it small; results.json has it."), tests.firstChild);
      }
    } catch (err) {
      tests.hidden = false;
      tests.replaceChildren(el("p", "s-failed", "The test list could not be shown: " + err.message));
    }
    document.body.dataset.readyMs = performance.now().toFixed(0);
    document.body.dataset.ready = "1";
    resolveReady();
    // The search index, built while the reader looks at the page rather than on the first key.
    if (L) setTimeout(buildSearch, 0);
  }

  main();
})();
