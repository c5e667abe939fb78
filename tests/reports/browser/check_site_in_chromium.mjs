#!/usr/bin/env node
// Checks `runner site`'s pages (reports/site.h) in real headless Chromium, driven by
// playwright-core (package.json):
//
//   node check_site_in_chromium.mjs MAKE_SAMPLE_SITE [--keep]
//
// MAKE_SAMPLE_SITE (make_sample_site.cpp) writes a site of 12 nights of "sample" (baseline and
// shim runs) and 3 of "other" into a temporary folder. Then, on the suite page and the index:
// the script initialises (<body data-ready="1">) with no console error, page error or refused
// request; every chart plots one point per run of its line; a click on a chart's point opens
// that run's report; the runs table sorts by a clicked header (both ways) and filters by words;
// and after the whole site is moved to another folder the pages and the links between them
// still work. Exit status: 0 all passed, 1 a check failed (each is printed), 77 no Chromium or
// no playwright-core (the ctest SKIP_RETURN_CODE).
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
  check(all.length === 27, `${label}: 27 runs in the table (${all.length})`);
  await page.click("#runs-table th:nth-child(1)");
  const up = await ids();
  check(up.every((v, i) => i === 0 || up[i - 1] < v), `${label}: sorted by run, ascending`);
  await page.click("#runs-table th:nth-child(1)");
  const down = await ids();
  check(down.every((v, i) => i === 0 || down[i - 1] > v), `${label}: again: descending`);
  await page.click("#runs-table th:nth-child(11)");  // pass rate, as numbers
  const rates = await page.$$eval("#runs-table tbody tr", (rows) =>
    rows.map((r) => Number(r.cells[10].getAttribute("data-value"))));
  check(rates.every((v, i) => i === 0 || rates[i - 1] <= v), `${label}: sorted by pass rate`);
  await page.fill("#runs-filter", "other shim");
  const other = await page.$$eval("#runs-table tbody tr:not([hidden])",
    (rows) => rows.map((r) => r.cells[1].textContent + " " + r.cells[2].textContent));
  check(other.length === 3 && other.every((t) => t === "other shim"),
        `${label}: filter "other shim" leaves the 3 runs of other: ${other}`);
  check((await page.textContent("#runs-count")) === "3 of 27 runs", `${label}: the count says so`);
  check(problems.length === 0, `${label}: no console error ${JSON.stringify(problems)}`);
  // Every link of the index leads to a page of the site.
  const hrefs = await page.$$eval("a", (as) => as.map((a) => a.getAttribute("href")));
  const missing = hrefs.filter((h) => !fs.existsSync(path.join(root, h)));
  check(missing.length === 0, `${label}: every link of the index exists (${missing.slice(0, 3)})`);
}

try {
  await checkSuitePage(site, "site");
  await checkIndex(site, "site");
  const moved = path.join(tmp, "moved", "elsewhere");
  fs.mkdirSync(path.dirname(moved), { recursive: true });
  fs.renameSync(site, moved);
  await checkSuitePage(moved, "moved site");
  await checkIndex(moved, "moved site");
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
