// Run by scripts/browser/drive.mjs inside a paged report.html (one with report-files/) once its
// data is shown: first paint, readiness, then opening a passed case that lives in the last
// sibling file (a #case= link on the open page) and loading every sibling file (the "passed" chip).
// benches/html/paged.sh puts the case's id in place of __CASE__.
const $ = (id) => document.getElementById(id);
const wait = async (done, ms = 300000) => { const t0 = performance.now(); while (!done() && performance.now() - t0 < ms) await new Promise((r) => setTimeout(r, 20)); return done(); };
const paint = performance.getEntriesByType("paint");
const fcp = paint.find((p) => p.name === "first-contentful-paint");
const ready = Number(document.body.dataset.readyMs);
const loadedFirst = Number($("shown-count").textContent);
const siblings = () => [...document.scripts].filter((s) => s.src).length;
await new Promise((r) => setTimeout(r, 1000));
const id = "__CASE__";
let t0 = performance.now();
location.hash = "case=" + id;
const opened = await wait(() => document.querySelector("#rows .row.sel")?.dataset.id === id && !/Loading details|Looking for/.test($("detail").textContent));
const open_ms = performance.now() - t0;
const filesForCase = siblings();
t0 = performance.now();
$("chips").querySelector('button[data-status="passed"]').click();
const loaded = await wait(() => $("paged").hidden);
const load_all_ms = performance.now() - t0;
return {
  first_contentful_paint_ms: fcp ? Math.round(fcp.startTime) : null,
  ready_ms: ready,
  shown_at_ready: loadedFirst,
  open_paged_case: { ok: opened, ms: Math.round(open_ms), files_read: filesForCase },
  load_all: { ok: loaded, ms: Math.round(load_all_ms), files_read: siblings(), passed_shown: Number($("shown-count").textContent) },
  cases: Number($("chips").querySelector('button[data-status="all"]').textContent.split(" ").pop()),
};
