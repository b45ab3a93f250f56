"use strict";
// fcorr report.html: inflates the embedded cases and shows them as a filterable, virtualised
// list. Test data only ever reaches the page through textContent: never parsed as markup.
// The view state lives in the URL fragment (#status=failed&q=...&case=ID), so a link reproduces it.
(function () {
  // Columns of a case row; must match CaseRow in src/report/html/data.rs.
  const SUITE = 0, ID = 1, NAME = 2, CLASS = 3, FILE = 4, LINE = 5, STATUS = 6, DUR = 7, MSG = 8, DETAILS = 9, OUT = 10, EXTRA = 11;
  const STATUSES = ["failed", "error", "timeout", "flaky", "skipped", "passed"];
  const ROW_H = 28;
  const OVERSCAN = 8;
  const $ = (id) => document.getElementById(id);
  const state = { status: "all", q: "", sort: "status", group: "none", case: null };
  let data = null, cases = [], hay = null, byId = new Map(), counts = null;
  let rows = [];        // display rows: a case index, or {group, n}
  let selected = -1;    // case index
  let resolveReady;
  window.fcorrReady = new Promise((resolve) => { resolveReady = resolve; });

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function fmtDuration(ms) {
    if (ms === null || ms === undefined) return "";
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
    if (selected >= 0) p.set("case", cases[selected][ID]);
    const text = p.toString();
    history.replaceState(null, "", text ? "#" + text : location.pathname + location.search);
  }

  async function load() {
    const text = $("fcorr-data").textContent.trim();
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

  // Lower-case search text per case, built on the first search only.
  function haystack(i) {
    if (!hay) hay = new Array(cases.length);
    let h = hay[i];
    if (h === undefined) {
      const c = cases[i];
      h = [c[NAME], c[CLASS] || "", c[FILE] || "", c[MSG] || "", data.suites[c[SUITE]].name].join("\n").toLowerCase();
      hay[i] = h;
    }
    return h;
  }

  function groupKey(c) {
    const extra = c[EXTRA] || {};
    switch (state.group) {
      case "suite": return data.suites[c[SUITE]].name;
      case "file": return c[FILE] || "(no file)";
      case "category": return (extra.tags && extra.tags.category) || "(no category)";
      case "tag": {
        const tags = extra.tags || {};
        const keys = Object.keys(tags).sort();
        return keys.length ? keys.map((k) => k + "=" + tags[k]).join(", ") : "(no tags)";
      }
      default: return "";
    }
  }

  // Case indices in each sort order, computed once per order: a filter is then one pass that
  // keeps the order, instead of a sort of up to 100,000 rows on every keystroke.
  const orders = {};
  function order(sort) {
    if (orders[sort]) return orders[sort];
    const o = Array.from(cases, (_, i) => i);
    if (sort === "duration") o.sort((a, b) => (cases[b][DUR] || 0) - (cases[a][DUR] || 0) || a - b);
    else if (sort === "name") o.sort((a, b) => (cases[a][NAME] < cases[b][NAME] ? -1 : cases[a][NAME] > cases[b][NAME] ? 1 : a - b));
    else o.sort((a, b) => cases[a][STATUS] - cases[b][STATUS] || a - b);
    orders[sort] = o;
    return o;
  }

  function apply() {
    const t0 = performance.now();
    const q = state.q.trim().toLowerCase();
    const want = STATUSES.indexOf(state.status);
    const view = [];
    for (const i of order(state.sort)) {
      if (want >= 0 && cases[i][STATUS] !== want) continue;
      if (q && haystack(i).indexOf(q) < 0) continue;
      view.push(i);
    }
    if (state.group === "none") {
      rows = view;
    } else {
      const groups = new Map();
      for (const i of view) {
        const key = groupKey(cases[i]);
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(i);
      }
      rows = [];
      for (const key of [...groups.keys()].sort()) {
        const members = groups.get(key);
        rows.push({ group: key, n: members.length });
        for (const i of members) rows.push(i);
      }
    }
    $("shown-count").textContent = String(view.length);
    $("spacer").style.height = rows.length * ROW_H + "px";
    paintChips();
    paint();
    document.body.dataset.filterMs = (performance.now() - t0).toFixed(1);
    document.body.dataset.shown = String(view.length);
  }

  function paintChips() {
    if (!counts) {
      counts = new Array(STATUSES.length).fill(0);
      for (const c of cases) counts[c[STATUS]]++;
    }
    const chips = $("chips");
    chips.replaceChildren();
    const add = (key, label, n) => {
      const b = el("button", "chip", label + " " + n);
      b.type = "button";
      b.dataset.status = key;
      b.setAttribute("aria-pressed", String(state.status === key));
      b.addEventListener("click", () => { state.status = key; apply(); writeHash(); });
      chips.appendChild(b);
    };
    add("all", "All", cases.length);
    STATUSES.forEach((s, i) => { if (counts[i] > 0) add(s, s, counts[i]); });
  }

  function rowElement(r) {
    if (typeof r === "object") {
      const g = el("div", "group", r.group + " (" + r.n + ")");
      g.setAttribute("role", "presentation");
      return g;
    }
    const c = cases[r];
    const status = STATUSES[c[STATUS]];
    const row = el("div", "row " + status + (r === selected ? " sel" : ""));
    row.setAttribute("role", "option");
    row.setAttribute("aria-selected", String(r === selected));
    row.dataset.id = c[ID];
    row.dataset.status = status;
    row.appendChild(el("span", "dot")).title = status;
    row.appendChild(el("span", "name", c[NAME]));
    const where = data.suites[c[SUITE]].name + (c[FILE] ? " · " + c[FILE] + (c[LINE] ? ":" + c[LINE] : "") : "");
    row.appendChild(el("span", "where", where));
    const extra = c[EXTRA];
    if (extra && extra.change) row.appendChild(el("span", "badge", extra.change.replace(/-/g, " ")));
    row.appendChild(el("span", "dur", fmtDuration(c[DUR])));
    row.addEventListener("click", () => select(r, false));
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

  function showDetail(i) {
    const pane = $("detail");
    pane.replaceChildren();
    if (i < 0) { pane.appendChild(el("p", "muted", "Select a test to see its details.")); return; }
    const c = cases[i];
    const extra = c[EXTRA] || {};
    const status = STATUSES[c[STATUS]];
    pane.appendChild(el("h2", null, c[NAME]));
    const dl = el("dl");
    const item = (k, v) => { if (v === null || v === undefined || v === "") return; dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", null, v)); };
    dl.appendChild(el("dt", null, "status"));
    dl.appendChild(el("dd")).appendChild(el("span", "st " + status, status));
    item("suite", data.suites[c[SUITE]].name);
    item("class", c[CLASS]);
    const where = c[FILE] ? c[FILE] + (c[LINE] ? ":" + c[LINE] : "") : null;
    // extra.url is an https link to the code built by fcorr (report::links); href set as a property, never as HTML.
    if (where && extra.url && /^https?:\/\//.test(extra.url)) { const a = el("a", null, where); a.href = extra.url; dl.appendChild(el("dt", null, "file")); dl.appendChild(el("dd")).appendChild(a); }
    else item("file", where);
    item("duration", fmtDuration(c[DUR]));
    if (extra.change) item("vs baseline", extra.change.replace(/-/g, " ") + (data.baseline ? " (" + data.baseline.slice(0, 12) + ")" : ""));
    if (extra.retries) item("retries", extra.retries);
    if (extra.score !== undefined) item("score", extra.score);
    if (extra.critical) item("critical", "yes");
    if (extra.expectation) item("expectation", extra.expectation);
    if (extra.usage) item("usage", extra.usage.tokens + " tokens, " + extra.usage.llm_calls + " calls" + (extra.usage.cost_usd ? ", $" + extra.usage.cost_usd : ""));
    if (extra.tags) item("tags", Object.keys(extra.tags).sort().map((k) => k + "=" + extra.tags[k]).join(", "));
    item("id", c[ID]);
    pane.appendChild(dl);
    section(pane, "Message", c[MSG]);
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
    section(pane, "Details", c[DETAILS]);
    section(pane, "Output", c[OUT]);
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

  function step(delta) {
    let k = rows.indexOf(selected);
    for (let n = 0; n < rows.length; n++) {
      k = k < 0 ? (delta > 0 ? 0 : rows.length - 1) : k + delta;
      if (k < 0 || k >= rows.length) return;
      if (typeof rows[k] === "number") { select(rows[k], true); return; }
    }
  }

  function wire() {
    let timer = 0;
    const search = $("search");
    search.value = state.q;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.q = search.value; apply(); writeHash(); }, 60);
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
      const before = selected >= 0 ? cases[selected][ID] : null;
      readHash();
      search.value = state.q;
      $("sort").value = state.sort;
      $("group").value = state.group;
      apply();
      if (state.case && state.case !== before) openCase(state.case);
    });
  }

  // Opens a case named by a link, clearing filters that would hide it.
  function openCase(id) {
    const i = byId.get(id);
    if (i === undefined) return;
    if (rows.indexOf(i) < 0) {
      state.status = "all"; state.q = ""; $("search").value = "";
      apply();
    }
    select(i, true);
  }

  // Builds the search text in small slices after the page is shown, so the first search does not
  // pay for 100,000 cases at once and scrolling stays smooth meanwhile.
  function warmUp(from) {
    if (!cases.length || from >= cases.length) return;
    const to = Math.min(cases.length, from + 5000);
    for (let i = from; i < to; i++) haystack(i);
    setTimeout(() => warmUp(to), 0);
  }

  async function main() {
    const tests = $("tests");
    try {
      if (typeof DecompressionStream === "undefined") throw new Error("this browser cannot unpack the data (DecompressionStream is missing: use Chrome 80+, Firefox 113+ or Safari 16.4+)");
      data = await load();
      cases = data.cases;
      cases.forEach((c, i) => byId.set(c[ID], i));
      readHash();
      tests.hidden = false;
      wire();
      apply();
      if (state.case) openCase(state.case);
      if (data.omitted_output > 0) {
        tests.insertBefore(el("p", "muted", "Captured output of " + data.omitted_output + " passing tests is left out of this page to keep it small; results.json has it."), tests.firstChild);
      }
    } catch (err) {
      tests.hidden = false;
      tests.replaceChildren(el("p", "s-failed", "The test list could not be shown: " + err.message));
    }
    document.body.dataset.readyMs = performance.now().toFixed(0);
    warmUp(0);
    document.body.dataset.ready = "1";
    resolveReady();
  }

  main();
})();
