// The script of `runner site`'s pages (reports/site.h): trend charts drawn with uPlot, one point
// per run, the sortable, filterable table of runs, the search of tests. Its data is the JSON in
// the page's element #site-data (a script of type application/json): {"runs": [...],
// "lines": [...]} on a suite page, {"tests": [...]} on search.html, {} elsewhere.
//
// What it promises (tests/reports/browser/check_site_in_chromium.mjs relies on it): once it has
// initialised without error, <body> carries data-ready="1"; each chart is a
// <div class="chart" data-points="N"> (N: the runs it plots) whose uPlot instance is in
// window.devshimCharts in page order; a click on a chart opens the report of the run nearest the
// cursor; clicking a header of #runs-table sorts by that column (again: the other way), and
// #runs-filter hides the rows whose text lacks any of its words (case-insensitive); a chart's
// time axis spans its runs with a margin (a day on each side of a single run); Enter in
// #nav-search opens the site's search.html#q=<words>, where #test-search lists in #test-results
// the tests whose test, suite, status and tags hold every word (the first 200, each a link to its
// page), and #test-count says how many matched.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("site-data").textContent);
  var runs = data.runs || [];
  window.devshimCharts = [];

  var STATUS_COLORS = {
    passed: "#1a7f37", failed: "#cf222e", error: "#bc4c00", skipped: "#8c959f",
    xfailed: "#6e7781", xpassed: "#9a6700"
  };
  var STATUSES = ["passed", "failed", "error", "skipped", "xfailed", "xpassed"];

  function num(v) { return typeof v === "number" ? v : null; }

  function tooltipText(run) {
    return "run " + run.id + " · " + run.started_at + (run.commit ? " · " + run.commit : "") +
      " · " + run.mode + (run.policy ? " · policy " + run.policy : "") +
      (run.torch ? " · torch " + run.torch : "") + " · " + run.status;
  }

  // The time axis: the runs' span with 3% on each side, or a day on each side of a lone run (so
  // that one run does not sit at the edge of an axis of years). From the data itself: uPlot hands
  // a lone point's scale a span of 86,400,000 s (a day, counted in ms).
  function timeRange(u, min, max) {
    var xs = (u.data && u.data[0] || []).filter(function (x) { return x != null; });
    if (xs.length) {
      min = Math.min.apply(null, xs);
      max = Math.max.apply(null, xs);
    }
    if (min == null || max == null) return [min, max];
    var span = max - min;
    var pad = span < 2 * 86400 ? 86400 : span * 0.03;
    return [min - pad, max + pad];
  }

  // One uPlot chart of `series` ([{label, color, values, fill}]) over the runs of a line.
  function chart(parent, title, lineRuns, series, opts) {
    var box = document.createElement("div");
    box.className = "chart";
    box.setAttribute("data-points", String(lineRuns.length));
    box.setAttribute("data-title", title);
    var heading = document.createElement("h3");
    heading.textContent = title;
    box.appendChild(heading);
    var tip = document.createElement("div");
    tip.className = "chart-tip";
    tip.textContent = "hover a point: its run; click: its report";
    parent.appendChild(box);
    var xs = lineRuns.map(function (r) { return Date.parse(r.started_at) / 1000; });
    var uSeries = [{ label: "started", value: function (u, v) {
      return v == null ? "-" : new Date(v * 1000).toISOString().slice(0, 16).replace("T", " ");
    } }];
    series.forEach(function (s) {
      uSeries.push({
        label: s.label, stroke: s.color, width: 1.5,
        fill: s.fill ? s.color + "cc" : undefined,
        points: { show: true, size: 5 },
        value: s.shown ? function (u, v, si, i) { return i == null ? "-" : s.shown[i]; } : undefined
      });
    });
    var width = Math.max(320, Math.min(900, parent.clientWidth || 900));
    var u = new uPlot({
      width: width, height: 220, series: uSeries,
      scales: { x: { time: true, range: timeRange }, y: { range: opts && opts.percent
        ? function () { return [0, 100]; }
        : function (u, min, max) { return [0, max > 0 ? Math.ceil(max * 1.1) : 1]; } } },
      axes: [{}, { size: 60, values: opts && opts.percent
        ? function (u, vals) { return vals.map(function (v) { return v + "%"; }); } : undefined }],
      cursor: { drag: { x: false, y: false } },
      hooks: {
        setCursor: [function (u) {
          var i = u.cursor.idx;
          if (i != null && lineRuns[i]) tip.textContent = tooltipText(lineRuns[i]);
        }]
      }
    }, [xs].concat(series.map(function (s) { return s.values; })), box);
    u.over.addEventListener("click", function () {
      var i = u.cursor.idx;
      if (i != null && lineRuns[i] && lineRuns[i].href) window.location.href = lineRuns[i].href;
    });
    u.over.style.cursor = "pointer";
    box.appendChild(tip);
    window.devshimCharts.push(u);
    return u;
  }

  function drawLine(container, line) {
    var lineRuns = line.runs.map(function (i) { return runs[i]; });
    var section = document.createElement("section");
    section.className = "line";
    var h = document.createElement("h2");
    h.textContent = line.label + " (" + lineRuns.length + " run" +
      (lineRuns.length === 1 ? "" : "s") + ")";
    section.appendChild(h);
    container.appendChild(section);

    // Tests by status, stacked: each series is drawn as the sum of it and those below it; the
    // legend shows its own count.
    var cumulative = lineRuns.map(function () { return 0; });
    var stacked = STATUSES.map(function (status) {
      var own = lineRuns.map(function (r) { return (r.by_status && r.by_status[status]) || 0; });
      cumulative = cumulative.map(function (c, i) { return c + own[i]; });
      return { label: status, color: STATUS_COLORS[status], values: cumulative.slice(),
               shown: own, fill: true };
    }).filter(function (s) { return s.shown.some(function (v) { return v > 0; }); });
    chart(section, "Tests by status", lineRuns, stacked.reverse());

    chart(section, "Pass rate", lineRuns, [{ label: "pass rate", color: "#1a7f37",
      values: lineRuns.map(function (r) {
        return num(r.pass_rate) == null ? null : Math.round(r.pass_rate * 1000) / 10;
      }) }], { percent: true });
    if (lineRuns.some(function (r) { return num(r.unlocked) != null; })) {
      chart(section, "Against the baseline (shim off)", lineRuns, [
        { label: "unlocked", color: "#0969da", values: lineRuns.map(function (r) { return num(r.unlocked); }) },
        { label: "regressions", color: "#cf222e", values: lineRuns.map(function (r) { return num(r.regressions); }) },
        { label: "CUDA-branch failures", color: "#bf8700", values: lineRuns.map(function (r) { return num(r.cuda_branch_failures); }) }]);
    }
    chart(section, "Against the previous run", lineRuns, [
      { label: "new failures", color: "#cf222e", values: lineRuns.map(function (r) { return num(r.new_failures); }) },
      { label: "fixed", color: "#1a7f37", values: lineRuns.map(function (r) { return num(r.fixed); }) }]);
    chart(section, "Flaky tests", lineRuns, [{ label: "flaky", color: "#9a6700",
      values: lineRuns.map(function (r) { return num(r.flaky); }) }]);
    chart(section, "Wall time (s)", lineRuns, [{ label: "seconds", color: "#8250df",
      values: lineRuns.map(function (r) { return num(r.duration_s); }) }]);
    chart(section, "Gap-log entries seen", lineRuns, [{ label: "entries", color: "#bc4c00",
      values: lineRuns.map(function (r) { return num(r.gaps); }) }]);
  }

  var charts = document.getElementById("charts");
  if (charts && data.lines) data.lines.forEach(function (line) { drawLine(charts, line); });

  // The table: sort by a header's column (numbers as numbers), filter by words.
  var table = document.getElementById("runs-table");
  if (table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (other) {
          other.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var numeric = th.getAttribute("data-type") === "number";
        var sorted = rows.slice().sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-value");
          var y = b.cells[col].getAttribute("data-value");
          if (x === null) x = a.cells[col].textContent;
          if (y === null) y = b.cells[col].textContent;
          var d = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
          return ascending ? d : -d;
        });
        sorted.forEach(function (row) { body.appendChild(row); });
      });
    });
    var filter = document.getElementById("runs-filter");
    var count = document.getElementById("runs-count");
    var apply = function () {
      var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (row, i) {
        var ok = words.every(function (w) { return texts[i].indexOf(w) >= 0; });
        if (ok) { row.removeAttribute("hidden"); shown++; } else { row.setAttribute("hidden", ""); }
      });
      if (count) count.textContent = shown + " of " + rows.length + " runs";
    };
    if (filter) { filter.addEventListener("input", apply); apply(); }
  }
  // The search box of the navigation: Enter opens the search page with its words.
  var navSearch = document.getElementById("nav-search");
  if (navSearch) {
    navSearch.addEventListener("keydown", function (e) {
      if (e.key !== "Enter" || !navSearch.value.trim()) return;
      var root = navSearch.parentNode.getAttribute("data-root") || "";
      window.location.href = root + "search.html#q=" + encodeURIComponent(navSearch.value.trim());
    });
  }

  // The search page: every test with a page, matched by words.
  var search = document.getElementById("test-search");
  var results = document.getElementById("test-results");
  if (search && results && data.tests) {
    var tests = data.tests;
    var haystacks = tests.map(function (t) {
      return (t.test + " " + t.suite + " " + t.status + " " + t.tags).toLowerCase();
    });
    var testCount = document.getElementById("test-count");
    var find = function () {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var found = [];
      tests.forEach(function (t, i) {
        if (words.every(function (w) { return haystacks[i].indexOf(w) >= 0; })) found.push(t);
      });
      results.textContent = "";
      found.slice(0, 200).forEach(function (t) {
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.href = t.href;
        a.textContent = t.test;
        li.appendChild(a);
        var what = document.createElement("span");
        what.className = "hint";
        what.textContent = " " + t.suite + " · " + t.status + (t.tags ? " · " + t.tags.trim() : "");
        li.appendChild(what);
        results.appendChild(li);
      });
      if (testCount) {
        testCount.textContent = found.length + " of " + tests.length + " tests" +
          (found.length > 200 ? " (the first 200 shown)" : "");
      }
    };
    var hash = /^#q=(.*)$/.exec(window.location.hash);
    if (hash) search.value = decodeURIComponent(hash[1]);
    search.addEventListener("input", find);
    find();
  }
  document.body.setAttribute("data-ready", "1");
})();
