// For pages without fcorr's script (the previous static report.html, Allure's single file):
// first contentful paint, and when the page's own content stops changing (its list is drawn).
const paint = performance.getEntriesByType("paint").find((p) => p.name === "first-contentful-paint");
let last = document.body ? document.body.innerHTML.length : 0, stable = 0;
const t0 = performance.now();
while (stable < 5 && performance.now() - t0 < 60000) {
  await new Promise((r) => setTimeout(r, 100));
  const now = document.body ? document.body.innerHTML.length : 0;
  stable = now === last ? stable + 1 : 0;
  last = now;
}
return { first_contentful_paint_ms: paint ? Math.round(paint.startTime) : null, ready_ms: Math.round(performance.now() - 500) };
