#!/usr/bin/env python3
"""Checks devshim's HTML report (reports/html.h) in real headless Chromium.

    check_report_in_chromium.py REPORT.html [--chromium PATH] [--filter TEXT]
    check_report_in_chromium.py --make MAKE_SAMPLE_REPORT [--keep] [--screenshot PNG]

Loads the report with `chromium --headless --dump-dom` twice, plain and with the URL hash
`#filter=<text>`, and checks the DOM that the page's script leaves behind:

- <body data-ready="1">: the script initialised without error, and Chromium's console shows no
  uncaught exception and no Content-Security-Policy refusal;
- the page is self-contained: exactly one <script> (so no test name injected another), no element
  loads anything (`src`, <link href>), and with --make the hostile test name is shown as text;
- plain, no failure row (<tr class="failure"> in #failures-table) is hidden; filtered, exactly the
  rows whose text contains every word of the filter (case-insensitive) are shown and the others
  carry the `hidden` attribute;
- every <a href> is an http(s) URL with a host, an #anchor naming an element of the page, or a
  relative path that exists on disk relative to the report's folder.

With --make, MAKE_SAMPLE_REPORT (tests/reports/browser/make_sample_report.cpp) first writes a
sample report and the files it links to into a temporary folder. Python standard library only.
Exit status: 0 all checks passed, 1 a check failed (each failure is printed), 77 no Chromium found
(the ctest SKIP_RETURN_CODE).
"""

import argparse
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

SKIP = 77
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
                  "chrome", "chrome-headless-shell", "headless_shell")
HOSTILE_NAME = "<script>alert(1)</script>"  # part of make_sample_report's hostile test name
CHROMIUM_TIMEOUT_S = 60


def find_chromium(explicit):
    """The Chromium to run: --chromium, else $CHROMIUM, else the first known name on PATH."""
    if explicit:
        return shutil.which(explicit) or (explicit if os.access(explicit, os.X_OK) else None)
    for name in ([os.environ["CHROMIUM"]] if os.environ.get("CHROMIUM") else []) + list(
            CHROMIUM_NAMES):
        path = shutil.which(name)
        if path:
            return path
    return None


class Dom(html.parser.HTMLParser):
    """What the checks need from a dumped DOM."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.body = None  # the <body> attributes
        self.ids = set()
        self.hrefs = []
        self.scripts = 0
        self.loads = []  # (tag, url) of everything that would load a resource
        self.rows = []  # failure rows: {"id", "hidden", "text", "name"}
        self._row = None
        self._in_name = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "body":
            self.body = a
        elif tag == "script":
            self.scripts += 1
            if "src" in a:
                self.loads.append((tag, a["src"]))
        elif tag == "link" and a.get("href") is not None:
            self.loads.append((tag, a["href"]))
        elif "src" in a:
            self.loads.append((tag, a["src"]))
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"])
        if tag == "tr" and "failure" in (a.get("class") or "").split():
            self._row = {"id": a.get("id"), "hidden": "hidden" in a, "text": "", "name": ""}
            self.rows.append(self._row)
        if tag == "span" and self._row is not None and (a.get("class") or "") == "name":
            self._in_name = True

    def handle_endtag(self, tag):
        if tag == "tr":
            self._row = None
        if tag == "span":
            self._in_name = False

    def handle_data(self, data):
        if self._row is not None:
            self._row["text"] += data
            if self._in_name:
                self._row["name"] += data


def dump_dom(chromium, url, profile):
    """(DOM text, console lines) of url after load, or raises RuntimeError."""
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0",
           "--user-data-dir=" + profile, "--dump-dom", url]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=CHROMIUM_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(
            "chromium did not finish within %d s: %s" % (CHROMIUM_TIMEOUT_S, url)) from None
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0 or "<html" not in out:
        raise RuntimeError("chromium exited %d without a DOM for %s:\n%s" %
                           (p.returncode, url, err[-2000:]))
    console = [line for line in err.splitlines() if ":CONSOLE" in line]
    return out, console


def parse(dom_text):
    dom = Dom()
    dom.feed(dom_text)
    dom.close()
    return dom


def filter_words(text):
    return text.lower().split()


def row_matches(row, words):
    text = row["text"].lower()
    return all(w in text for w in words)


def pick_filter(rows):
    """A test name shown in exactly one failure row; one with markup characters if possible."""
    names = [r["name"] for r in rows if r["name"]]
    unique = [n for n in names
              if sum(1 for r in rows if row_matches(r, filter_words(n))) == 1]
    for name in unique:
        if any(c in name for c in "<>\"'&"):
            return name
    return unique[0] if unique else (names[0] if names else None)


def check_page(dom, console, label, failures):
    if dom.body is None or dom.body.get("data-ready") != "1":
        failures.append("%s: <body> has no data-ready=\"1\": the page's script did not finish "
                        "(body attributes: %r)" % (label, dom.body))
    for line in console:
        if "Uncaught" in line or "Content Security Policy" in line or "Refused to" in line:
            failures.append("%s: console: %s" % (label, line.strip()))
    if dom.scripts != 1:
        failures.append("%s: %d <script> elements, expected the page's one (injected markup?)" %
                        (label, dom.scripts))
    for tag, url in dom.loads:
        if not url.startswith("data:"):
            failures.append("%s: <%s> loads %r: the report must be self-contained" %
                            (label, tag, url))


def check_links(dom, report_dir, failures):
    for href in dom.hrefs:
        if href.startswith("#"):
            target = urllib.parse.unquote(href[1:])
            if target and not target.startswith("filter=") and target not in dom.ids:
                failures.append("link %r: no element with id %r in the page" % (href, target))
            continue
        parts = urllib.parse.urlsplit(href)
        if parts.scheme:
            if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
                failures.append("link %r: only http(s) URLs and relative paths are allowed" % href)
            continue
        if href.startswith("//") or not parts.path:
            failures.append("link %r: not a relative path" % href)
            continue
        path = os.path.join(report_dir, urllib.parse.unquote(parts.path))
        if not os.path.exists(path):
            failures.append("link %r: %s does not exist" % (href, path))


def check_report(report, chromium, filter_text, expect_hostile, failures):
    report = os.path.abspath(report)
    url = "file://" + urllib.parse.quote(report)
    profile = tempfile.mkdtemp(prefix="devshim-chromium-")
    try:
        plain_text, console = dump_dom(chromium, url, profile)
        plain = parse(plain_text)
        check_page(plain, console, "plain", failures)
        check_links(plain, os.path.dirname(report), failures)
        if not plain.rows:
            failures.append("no failure row (<tr class=\"failure\">) in the page")
            return
        hidden = [r["id"] for r in plain.rows if r["hidden"]]
        if hidden:
            failures.append("plain: rows hidden without a filter: %s" % ", ".join(map(str, hidden)))
        if expect_hostile and not any(HOSTILE_NAME in r["name"] for r in plain.rows):
            failures.append("the hostile test name %r is not shown as text" % HOSTILE_NAME)

        text = filter_text if filter_text is not None else pick_filter(plain.rows)
        if not text:
            failures.append("no test name to filter on")
            return
        filtered_text, console = dump_dom(
            chromium, url + "#filter=" + urllib.parse.quote(text, safe=""), profile)
        filtered = parse(filtered_text)
        check_page(filtered, console, "filtered", failures)
        words = filter_words(text)
        if len(filtered.rows) != len(plain.rows):
            failures.append("filtered: %d failure rows, plain: %d" %
                            (len(filtered.rows), len(plain.rows)))
        shown = 0
        for row in filtered.rows:
            expected_shown = row_matches(row, words)
            shown += expected_shown
            if expected_shown == row["hidden"]:
                failures.append("filter %r: row %s is %s but should be %s" %
                                (text, row["id"], "hidden" if row["hidden"] else "shown",
                                 "shown" if expected_shown else "hidden"))
        if shown == 0:
            failures.append("filter %r matches no row" % text)
        print("checked %s: %d failure rows, %d links; filter %r shows %d" %
              (report, len(plain.rows), len(plain.hrefs), text, shown))
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(chromium, report, png):
    profile = tempfile.mkdtemp(prefix="devshim-chromium-")
    try:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--no-first-run", "--disable-dev-shm-usage", "--hide-scrollbars",
                        "--user-data-dir=" + profile, "--window-size=1280,1600",
                        "--screenshot=" + os.path.abspath(png),
                        "file://" + urllib.parse.quote(os.path.abspath(report))],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=CHROMIUM_TIMEOUT_S, check=True)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", nargs="?", help="the report.html to check")
    ap.add_argument("--make", metavar="EXE",
                    help="make_sample_report: write a sample report to a temporary folder first")
    ap.add_argument("--chromium", help="the Chromium binary (default: $CHROMIUM, then PATH)")
    ap.add_argument("--filter", help="text to filter on (default: a test name from the page)")
    ap.add_argument("--keep", action="store_true", help="keep --make's folder")
    ap.add_argument("--screenshot", metavar="PNG", help="also save a screenshot of the page")
    args = ap.parse_args()
    if bool(args.report) == bool(args.make):
        ap.error("give either REPORT.html or --make MAKE_SAMPLE_REPORT")

    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("SKIP: no Chromium found (tried %s; set --chromium or $CHROMIUM)" %
              ", ".join(CHROMIUM_NAMES))
        return SKIP

    workdir = None
    failures = []
    try:
        report = args.report
        if args.make:
            workdir = tempfile.mkdtemp(prefix="devshim-html-report-")
            p = subprocess.run([args.make, workdir], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=60, check=False)
            if p.returncode != 0:
                print("FAIL: %s exited %d:\n%s" % (args.make, p.returncode,
                                                   p.stdout.decode("utf-8", "replace")))
                return 1
            report = os.path.join(workdir, "report.html")
        if not os.path.isfile(report):
            print("FAIL: no report at %s" % report)
            return 1
        try:
            check_report(report, chromium, args.filter, bool(args.make), failures)
            if args.screenshot:
                screenshot(chromium, report, args.screenshot)
        except (RuntimeError, subprocess.SubprocessError, OSError) as e:
            failures.append(str(e))
    finally:
        if workdir and args.keep:
            print("kept %s" % workdir)
        elif workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    if failures:
        print("FAIL: %d check(s) of the HTML report in %s failed:" % (len(failures), chromium))
        for f in failures:
            print("  - " + f)
        return 1
    print("OK: the HTML report passed every check in %s" % chromium)
    return 0


if __name__ == "__main__":
    sys.exit(main())
