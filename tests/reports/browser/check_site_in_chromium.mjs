#!/usr/bin/env node
// Checks `runner site`'s pages (reports/site.h) in real headless Chromium, driven by
// playwright-core (package.json):
//
//   node check_site_in_chromium.mjs MAKE_SAMPLE_SITE [SCREENSHOT_DIR] [--keep]
//
// MAKE_SAMPLE_SITE (make_sample_site.cpp) writes a site of 12 nights of "sample" (baseline and
// shim runs, a flaky test), 3 of "other" and one of "single" into a temporary folder, with the
// logs and sources its pages link to copied in. Then, on the suite page and the index: the
// script initialises (<body data-ready="1">) with no console error, page error or refused
// request; every chart plots one point per run of its line; a click on a chart's point opens
// that run's report; the runs table sorts by a clicked header (both ways) and filters by words.
// At 480 and 1400 px wide, each kind of page (index, suite, a one-run suite, a test's page,
// search, gap log, a run's report) loads without console error, nothing overlaps (the
// rectangles of its headings, cells, links, badges and strips compared pairwise), no table cell
// is squeezed to a column of letters, the page does not scroll sideways as a whole, and a
// screenshot is kept in SCREENSHOT_DIR (default: the temporary folder). The search box finds a
// test and opens its page; the one-run suite's time axis spans days, not years; a test's page
// says how often it was flaky and since when it fails. After the whole site is moved to another
// folder the pages work and every link of every page checked leads to a file in the moved copy.
// Exit status: 0 all passed, 1 a check failed (each is printed), 77 no Chromium or no
// playwright-core (the ctest SKIP_RETURN_CODE).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const SKIP = 77;
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch (e) {
  console.log(`SKIP: playwright-core not installed (./setup.sh runs npm ci): ${e.message}`);
  process.exit(SKIP);
}
const executable = ["/usr/bin/chromium", "/usr/bin/chromium-browser", process.env.CHROMIUM]
  .filter(Boolean).find((p) => fs.existsSync(p));
if (!executable) {
  console.log("SKIP: no Chromium (Debian's chromium, installed by setup.sh)");
  process.exit(SKIP);
}

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "devshim-site-"));
const shots = process.argv[3] && !process.argv[3].startsWith("--") ? path.resolve(process.argv[3])
  : path.join(tmp, "screenshots");
fs.mkdirSync(shots, { recursive: true });
execFileSync(process.argv[2], [tmp], { stdio: "inherit" });
const site = path.join(tmp, "site");
const url = (p) => pathToFileURL(p).href;

const browser = await chromium.launch({ executablePath: executable, args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
const problems = [];
page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));

async function open(file) {
  problems.length = 0;
  await page.goto(url(file));
  await page.waitForSelector("body[data-ready='1']", { timeout: 15000 });
}

async function checkSuitePage(root, label) {
  await open(path.join(root, "suites/sample/index.html"));
  const data = JSON.parse(await page.textContent("#site-data"));
  const lines = data.lines;
  check(lines.length === 2 && lines[0].label === "shim · policy default" &&
        lines[0].runs.length === 12 && lines[1].runs.length === 12,
        `${label}: two lines of 12 runs each (${lines.map((l) => l.label).join(", ")})`);
  const charts = await page.$$eval("div.chart", (els) => els.map((e) => ({
    title: e.getAttribute("data-title"), points: Number(e.getAttribute("data-points")) })));
  const plotted = await page.evaluate(() => window.devshimCharts.map((u) => u.data[0].length));
  check(charts.length >= 12 && charts.every((c, i) => c.points === plotted[i] &&
        (c.points === 12)), `${label}: ${charts.length} charts, each with one point per run`);
  check(problems.length === 0, `${label}: no console error ${JSON.stringify(problems)}`);

  // Hover and click the 4th point of the first chart: the shim line's 4th run.
  const target = data.runs[lines[0].runs[3]];
  const where = await page.evaluate(() => {
    const u = window.devshimCharts[0];
    const box = u.over.getBoundingClientRect();
    const i = 3;
    return { x: box.left + u.valToPos(u.data[0][i], "x"), y: box.top + u.valToPos(u.data[1][i], "y") };
  });
  await page.mouse.move(where.x, where.y);
  const tip = await page.textContent("div.chart .chart-tip");
  check(tip.startsWith(`run ${target.id} · `), `${label}: hover names run ${target.id}: "${tip}"`);
  await Promise.all([page.waitForURL(`**/runs/${target.id}/report.html`), page.mouse.click(where.x, where.y)]);
  check(page.url().endsWith(`/runs/${target.id}/report.html`), `${label}: click opens ${page.url()}`);
  await page.waitForSelector("body[data-ready='1']");
  // The report links to its baseline's and previous run's pages in the site, and forward to the
  // next night's shim run, which is compared with it.
  const hrefs = await page.$$eval("a", (as) => as.map((a) => a.getAttribute("href")));
  const inSite = hrefs.filter((h) => /^\.\.\/\d+\/report\.html$/.test(h));
  check(inSite.length === 3, `${label}: the report links its baseline, previous and next run: ${inSite}`);
  const next = data.runs[lines[0].runs[4]];
  const later = await page.$$eval("dd.later-runs a", (as) => as.map((a) => a.getAttribute("href")));
  check(later.length === 1 && later[0] === `../${next.id}/report.html`,
        `${label}: the report links forward to run ${next.id}: ${later}`);
  for (const h of inSite) {
    check(fs.existsSync(path.join(root, "runs", String(target.id), h)), `${label}: ${h} exists`);
  }
}

async function checkIndex(root, label) {
  await open(path.join(root, "index.html"));
  const ids = () => page.$$eval("#runs-table tbody tr:not([hidden])",
    (rows) => rows.map((r) => Number(r.getAttribute("data-run"))));
  const all = await ids();
  check(all.length === 28, `${label}: 28 runs in the table (${all.length})`);
  await page.click("#runs-table th:nth-child(1)");
  const up = await ids();
  check(up.every((v, i) => i === 0 || up[i - 1] < v), `${label}: sorted by run, ascending`);
  await page.click("#runs-table th:nth-child(1)");
  const down = await ids();
  check(down.every((v, i) => i === 0 || down[i - 1] > v), `${label}: again: descending`);
  await page.click("#runs-table th:nth-child(12)");  // pass rate, as numbers
  const rates = await page.$$eval("#runs-table tbody tr", (rows) =>
    rows.map((r) => Number(r.cells[11].getAttribute("data-value"))));
  check(rates.every((v, i) => i === 0 || rates[i - 1] <= v), `${label}: sorted by pass rate`);
  await page.fill("#runs-filter", "other shim");
  const other = await page.$$eval("#runs-table tbody tr:not([hidden])",
    (rows) => rows.map((r) => r.cells[1].textContent + " " + r.cells[2].textContent));
  check(other.length === 3 && other.every((t) => t === "other shim"),
        `${label}: filter "other shim" leaves the 3 runs of other: ${other}`);
  check((await page.textContent("#runs-count")) === "3 of 28 runs", `${label}: the count says so`);
  check(problems.length === 0, `${label}: no console error ${JSON.stringify(problems)}`);
  await checkLinks(root, "index.html", label);
}

// Every link of the page open now that is not a web link leads to a file inside root.
async function checkLinks(root, file, label) {
  const hrefs = await page.$$eval("a[href]", (as) => as.map((a) => a.getAttribute("href")));
  const dir = path.dirname(path.join(root, file));
  const bad = [];
  for (const h of hrefs) {
    if (/^https?:/.test(h) || h.startsWith("#")) continue;
    const target = path.resolve(dir, decodeURIComponent(h.split("#")[0]));
    if (!target.startsWith(root + path.sep) || !fs.existsSync(target)) bad.push(h);
  }
  check(bad.length === 0 && hrefs.length > 0,
        `${label}: ${file}: each of ${hrefs.length} links leads to a file in the site (${bad.slice(0, 3)})`);
}

// In the page: pairs of visible boxes that overlap, cells squeezed to a column of letters, and
// whether the page scrolls sideways as a whole.
function layoutProblems() {
  const boxes = [...document.querySelectorAll(
    "h1, h2, h3, p, th, td, a, input, .status, .cell, li, svg, div.chart, pre, dt, dd")]
    .filter((e) => !(e.closest(".chart") && !e.matches("div.chart")))
    // Not drawn (inside a closed <details>, hidden): nothing to overlap.
    .filter((e) => e.checkVisibility({ contentVisibilityAuto: true, visibilityProperty: true }))
    .map((e) => ({ e, r: e.getBoundingClientRect() }))
    .filter(({ r }) => r.width > 0 && r.height > 0 && r.top < 3 * window.innerHeight)
    .slice(0, 800);
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.className && typeof e.className === "string" ? "." + e.className.split(" ")[0] : "") +
    ` "${(e.textContent || "").trim().slice(0, 20)}"`;
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.e.contains(b.e) || b.e.contains(a.e)) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 1 && h > 1) overlaps.push(`${name(a.e)} / ${name(b.e)}`);
    }
  }
  const squeezed = [];
  for (const cell of document.querySelectorAll(".scroll td, .scroll th")) {
    const style = getComputedStyle(cell);
    const line = parseFloat(style.lineHeight) || 1.5 * parseFloat(style.fontSize);
    const r = cell.getBoundingClientRect();
    if (r.height > 0 && r.height > 3.5 * line && r.width < 6 * parseFloat(style.fontSize)) {
      squeezed.push(name(cell));
    }
  }
  const sideways = document.documentElement.scrollWidth > window.innerWidth + 1;
  return { overlaps: overlaps.slice(0, 5), count: overlaps.length, squeezed: squeezed.slice(0, 5),
           sideways, width: document.documentElement.scrollWidth };
}

// Each kind of page at width: no console error, no overlap, no squeezed cell, a screenshot.
async function checkLayouts(root, width, pages) {
  await page.setViewportSize({ width, height: 900 });
  for (const [name, file] of pages) {
    await open(path.join(root, file));
    const p = await page.evaluate(layoutProblems);
    check(p.count === 0, `${width}px ${name}: no overlapping boxes (${p.count}: ${p.overlaps.join("; ")})`);
    check(p.squeezed.length === 0, `${width}px ${name}: no squeezed cell (${p.squeezed})`);
    check(!p.sideways, `${width}px ${name}: the page does not scroll sideways (${p.width}px)`);
    check(problems.length === 0, `${width}px ${name}: no console error ${JSON.stringify(problems)}`);
    await page.screenshot({ path: path.join(shots, `${width}-${name}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1200, height: 900 });
}

// The search box of the navigation finds a test, and its result opens the test's page.
async function checkSearch(root, label, wanted) {
  await open(path.join(root, "index.html"));
  await page.fill("#nav-search", wanted);
  await Promise.all([page.waitForURL("**/search.html#q=*"), page.press("#nav-search", "Enter")]);
  await page.waitForSelector("body[data-ready='1']");
  const found = await page.$$eval("#test-results a", (as) => as.map((a) => a.textContent));
  check(found.length >= 1 && found.every((t) => t.includes(wanted)),
        `${label}: search "${wanted}" finds ${found.length} test(s): ${found.slice(0, 2)}`);
  await Promise.all([page.waitForURL("**/tests/**.html"), page.click("#test-results a")]);
  await page.waitForSelector("body[data-ready='1']");
  const title = await page.textContent("h1");
  check(title === found[0], `${label}: its result opens the test's page: "${title}"`);
  return page.url();
}

// A test's page: a strip per line of runs, its flaky rate and since when it fails.
async function checkTestPages(root, label) {
  await open(path.join(root, "search.html"));
  await page.fill("#test-search", "flaky sample");
  const flaky = await page.$$eval("#test-results a", (as) => as.map((a) => a.getAttribute("href")));
  check(flaky.length === 1, `${label}: one flaky test of sample (${flaky})`);
  await open(path.join(root, flaky[0]));
  const rows = await page.$$eval("#test-lines tbody tr", (trs) => trs.map((tr) =>
    [...tr.cells].map((c) => c.textContent)));
  check(rows.length === 2 && rows[0][0] === "shim · policy default" && rows[0][4].startsWith("4 of 12"),
        `${label}: the flaky test was flaky in 4 of the 12 shim runs: ${JSON.stringify(rows[0])}`);
  const cells = await page.$$eval(".test-strip", (ss) => ss.map((s) => s.querySelectorAll(".cell").length));
  check(cells.length === 2 && cells.every((n) => n === 12), `${label}: two strips of 12 runs (${cells})`);
  await checkLinks(root, flaky[0], label);

  await page.fill("#nav-search", "tests.test_0000.T.test_000");
  await Promise.all([page.waitForURL("**/search.html#q=*"), page.press("#nav-search", "Enter")]);
  await page.waitForSelector("body[data-ready='1']");
  await page.fill("#test-search", "tests.test_0000.T.test_000 sample");
  const first = await page.$$eval("#test-results a", (as) => as.map((a) => a.getAttribute("href")));
  check(first.length === 1, `${label}: the first test of sample has a page (${first})`);
  await open(path.join(root, first[0]));
  const since = await page.$$eval("#test-lines tbody tr", (trs) => trs.map((tr) => tr.cells[2].textContent));
  check(since[0].startsWith("run 2 "), `${label}: it fails since the first shim run: ${since}`);
  return first[0];
}

// A one-run suite's time axis spans a few days around its run.
async function checkOneRunAxis(root, label) {
  await open(path.join(root, "suites/single/index.html"));
  const spans = await page.evaluate(() => window.devshimCharts.map((u) => u.scales.x.max - u.scales.x.min));
  check(spans.length > 0 && spans.every((s) => s > 0 && s <= 3 * 86400),
        `${label}: the one run's axis spans ${spans.map((s) => (s / 86400).toFixed(1))} days`);
}

try {
  await checkSuitePage(site, "site");
  await checkIndex(site, "site");
  await checkOneRunAxis(site, "site");
  const testPage = await checkTestPages(site, "site");
  await checkSearch(site, "site", "tests.test_0004.T.test_000");
  const newest = JSON.parse(await fs.promises.readFile(path.join(site, "site.json"), "utf8"));
  const shimRun = Math.max(...Object.entries(newest.runs)
    .filter(([, r]) => r.summary.baseline_run).map(([id]) => Number(id)));
  const pages = [["index", "index.html"], ["suite", "suites/sample/index.html"],
    ["one-run-suite", "suites/single/index.html"], ["test", testPage],
    ["search", "search.html"], ["gaps", "gaps.html"], ["report", `runs/${shimRun}/report.html`]];
  const moved = path.join(tmp, "moved", "elsewhere");
  fs.mkdirSync(path.dirname(moved), { recursive: true });
  fs.renameSync(site, moved);
  await checkSuitePage(moved, "moved site");
  await checkIndex(moved, "moved site");
  await checkTestPages(moved, "moved site");
  for (const [name, file] of pages) {
    await open(path.join(moved, file));
    await checkLinks(moved, file, `moved site ${name}`);
  }
  const history = await page.$$eval("a", (as) => as.filter((a) => a.textContent === "history").length);
  check(history > 0, `moved site: the report links its failing tests' pages (${history})`);
  for (const width of [480, 1400]) await checkLayouts(moved, width, pages);
  console.log(`screenshots: ${shots}`);
} catch (e) {
  failures.push(`exception: ${e.stack || e}`);
  console.log(`FAIL exception: ${e.stack || e}`);
} finally {
  await browser.close();
  if (!process.argv.includes("--keep")) fs.rmSync(tmp, { recursive: true, force: true });
}
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log("all checks passed");
