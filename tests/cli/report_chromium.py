#!/usr/bin/env python3
"""Every chart of every kind of report renders in a real browser.

`relaysim report` writes report.html with its charts inline (gnuplot's and Graphviz's SVG). This
test makes a report of each kind — a webhook run with faults, an SMS run, an outbox run and a
sweep — opens each page in headless Chromium through ChromeDriver (the W3C WebDriver protocol,
spoken here over plain HTTP), and asks the browser, not the file, whether each chart was drawn:
every heading of a chart is followed by a figure whose SVG has a size on the page, and whose
plotted data (gnuplot's `gnuplot_plot_N` groups; Graphviz's nodes and edges) has shapes with a
size. A chart that gnuplot wrote but the browser cannot lay out, an empty plot, or a page that
does not parse fails.

usage: report_chromium.py RELAYSIM PROJECT_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "live"))
from livetest import free_port  # noqa: E402  (the live tests' helper: a loopback port nobody holds)

# What the browser reports of each chart: its size on the page, and how many of its data
# shapes (a line of more than three points, a box, a node or an edge) have a size.
MEASURE = r"""
const charts = [];
for (const h of document.querySelectorAll('h2[id]')) {
  const figure = h.nextElementSibling;
  if (!figure || figure.tagName !== 'FIGURE') continue;
  const svg = figure.querySelector('svg');
  if (!svg) { charts.push({id: h.id, svg: false}); continue; }
  const box = svg.getBoundingClientRect();
  let data = 0;
  // A plot's key sample is a short line or one box: a line of more than three points, or any box
  // past the first, is data.
  for (const g of svg.querySelectorAll('g[id^="gnuplot_plot_"]')) {
    for (const p of g.querySelectorAll('path')) {
      const points = (p.getAttribute('d') || '').match(/[MLml]/g) || [];
      const b = p.getBBox();
      if (points.length > 3 && (b.width > 0 || b.height > 0)) data++;
    }
    let boxes = 0;
    for (const p of g.querySelectorAll('polygon')) {
      const b = p.getBBox();
      if (b.width > 0 && b.height > 0) boxes++;
    }
    data += Math.max(0, boxes - 1);
  }
  for (const s of svg.querySelectorAll('g.node > *, g.edge > path')) {
    if (s.tagName === 'title') continue;
    const b = s.getBBox();
    if (b.width > 0 || b.height > 0) data++;
  }
  charts.push({id: h.id, svg: true, width: box.width, height: box.height, data: data});
}
return {title: document.title, charts: charts, headings: document.querySelectorAll('h2[id]').length};
"""


class WebDriver:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port
        self.session = None

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            raise RuntimeError("%s %s: %s" % (method, path, e.read().decode(errors="replace")))

    def start(self, chromium):
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": chromium,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1600"]}}}}
        self.session = self.call("POST", "/session", caps)["sessionId"]

    def open(self, url):
        self.call("POST", "/session/%s/url" % self.session, {"url": url})

    def run(self, script):
        return self.call("POST", "/session/%s/execute/sync" % self.session, {"script": script, "args": []})

    def quit(self):
        if self.session:
            try:
                self.call("DELETE", "/session/%s" % self.session)
            except Exception:
                pass


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode not in (0, 1):  # 1: a run's verdict FAIL still writes its directory
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stdout))
    return r.stdout


def main():
    relaysim, project, work = sys.argv[1], sys.argv[2], sys.argv[3]
    chromium = shutil.which("chromium")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        sys.exit("needs Debian's chromium and chromium-driver (./relaysim build installs them)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    scenarios = os.path.join(project, "scenarios")
    reports = {}
    for name, scenario in [("webhook", "pod-crash-restart.yaml"), ("sms", "sms-provider-outage-failover.yaml"),
                           ("outbox", "outbox-quickstart.yaml")]:
        out = os.path.join(work, name)
        run([relaysim, "run", "-q", os.path.join(scenarios, scenario), "--timeseries", out])
        reports[name] = out
    sweep = os.path.join(work, "sweep")
    run([relaysim, "sweep", "-q", os.path.join(scenarios, "quickstart.yaml"), "--set", "duration=5m",
         "--vary", "webhook.platform.pods=1..3", "-r", "2", "--out", sweep])
    reports["sweep"] = sweep
    expected = {}
    for name, d in reports.items():
        said = run([relaysim, "report", d])
        # "report: DIR/report.html and report.md, with N charts"
        expected[name] = int(said.rsplit("with", 1)[1].split()[0])

    port = free_port()
    log = open(os.path.join(work, "chromedriver.log"), "w")
    driver_proc = subprocess.Popen([chromedriver, "--port=%d" % port], stdout=log, stderr=subprocess.STDOUT)
    driver = WebDriver(port)
    problems = []
    try:
        for _ in range(100):
            try:
                if driver.call("GET", "/status").get("ready"):
                    break
            except (urllib.error.URLError, ConnectionError, RuntimeError):
                pass
            time.sleep(0.1)
        driver.start(chromium)
        for name, d in reports.items():
            page = os.path.abspath(os.path.join(d, "report.html"))
            driver.open("file://" + page)
            seen = driver.run(MEASURE)
            charts = seen["charts"]
            drawn = [c for c in charts if c["svg"] and c["width"] > 200 and c["height"] > 100 and c["data"] > 0]
            for c in charts:
                if c not in drawn:
                    problems.append("%s: the chart '%s' is not drawn: %s" % (name, c["id"], c))
            if len(charts) < expected[name]:
                problems.append("%s: %d charts in the page, the report said %d" % (name, len(charts), expected[name]))
            print("%-8s %s: %d charts, each drawn (%s)" % (name, seen["title"], len(drawn),
                                                            ", ".join("%s %d" % (c["id"], c["data"]) for c in charts)))
    finally:
        driver.quit()
        driver_proc.terminate()
        try:
            driver_proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            driver_proc.kill()
    if problems:
        sys.exit("\n".join(problems))


if __name__ == "__main__":
    main()
