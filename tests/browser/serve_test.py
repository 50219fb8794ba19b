#!/usr/bin/env python3
"""`gpusched serve` in a real browser (headless Chromium, driven by Selenium through
chromedriver), against real runs, a real local queue and a real redis-server.

Run by ctest: serve_test.py GPUSCHED [TEST ...]. Exits 77 (skipped) where Chromium, its driver
or Selenium is not installed: apt-get install chromium chromium-driver python3-selenium.
The accessibility tests run axe-core (the version tests/browser/package-lock.json pins) in
the page, and fail where it is not installed: npm ci --prefix tests/browser.
With GPUSCHED_SCREENSHOT=PATH, the overview test saves the page as PNG there (the README's).
"""
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

try:
    from selenium import webdriver
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
except ImportError:
    webdriver = None

GPUSCHED = None
HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "docs", "json-schema.json")
AXE = os.path.join(HERE, "node_modules", "axe-core", "axe.min.js")
# How the last look written into the page begins (src/core/web_page.cpp).
DATA_BLOCK = b'<script type="application/json" id="initial-state">'
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def eventually(check, seconds=10.0, every=0.05):
    """check()'s first true value within `seconds`, else its last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every)


def schema_errors(body):
    """Where an API answer differs from docs/json-schema.json ([] without python3-jsonschema)."""
    try:
        import jsonschema
    except ImportError:
        return []
    with open(SCHEMA, encoding="utf-8") as schema:
        validator = jsonschema.Draft202012Validator(json.load(schema))
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
            for error in validator.iter_errors(json.loads(body))]


class Machine:
    """A lease space, a local queue and the processes a test starts, all removed at its end."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="gpusched-serve-")
        self.env = dict(os.environ)
        self.env["XDG_STATE_HOME"] = os.path.join(self.dir, "state")
        self.env["GPUSCHED_LOCK_DIR"] = os.path.join(self.dir, "locks")
        self.env.pop("GPUSCHED_GPUS", None)
        self.processes = []

    def start(self, args, stdin_text=None, **kwargs):
        process = subprocess.Popen([GPUSCHED] + args, cwd=self.dir, env=self.env,
                                   stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True, **kwargs)
        if stdin_text is not None:
            process.stdin.write(stdin_text)
            process.stdin.close()
        self.processes.append(process)
        return process

    def run(self, args, stdin_text=""):
        done = subprocess.run([GPUSCHED] + args, cwd=self.dir, env=self.env, input=stdin_text,
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise AssertionError(f"gpusched {' '.join(args)}: {done.returncode}: {done.stderr}")
        return done.stdout

    def submit(self, command, *options):
        out = self.run(["submit", "--json", *options, "--", *command])
        return json.loads(out)["ids"][0]

    def close(self):
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            for stream in (process.stdout, process.stderr):
                if stream:
                    stream.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Server:
    """`gpusched serve ARGS`, and the address it printed."""

    def __init__(self, machine, *args):
        self.process = machine.start(["serve", "--listen", "127.0.0.1:0", *args])
        line = self.process.stdout.readline().strip()
        if not line.startswith("http://"):
            raise AssertionError(f"serve printed {line!r}: {self.process.stderr.read()}")
        self.url_with_token = line
        self.base, self.token = split_address(line)
        self.port = int(self.base.rsplit(":", 1)[1])

    def get(self, path, headers=None):
        return request("GET", self.port, path, headers)

    def post(self, path, headers=None):
        return request("POST", self.port, path, headers)


def split_address(line):
    """The base and the token of the address serve printed (#token=; ?token= before)."""
    match = re.fullmatch(r"(http://[^/]+)/[#?]token=([0-9a-f]+)", line)
    if not match:
        raise AssertionError(f"serve printed {line!r}")
    return match.group(1), match.group(2)


def request(method, port, path, headers=None, host="127.0.0.1"):
    connection = http.client.HTTPConnection(host, port, timeout=10)
    connection.request(method, path, headers=headers or {})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


# Another local user's web server (a notebook, a TensorBoard) on another port of 127.0.0.1:
# it records every request the browser sends it, and its page tries what such a page can to
# obtain the token of the gpusched server named by ?target=, reporting what it could read.
RECORDER = r"""
import http.server, json, sys, threading
page = sys.argv[1].encode()
recorded, lock = [], threading.Lock()

class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, kind, data):
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self):
        length = int(self.headers.get("Content-Length") or 0)
        with lock:
            recorded.append({"method": self.command, "path": self.path,
                             "headers": list(self.headers.items()),
                             "body": self.rfile.read(length).decode("utf-8", "replace")})

    def do_GET(self):
        if self.path == "/recorded":
            with lock:
                return self.answer("application/json", json.dumps(recorded).encode())
        self.record()
        self.answer("text/html", page if self.path.startswith("/?") else b"")

    def do_POST(self):
        self.record()
        self.answer("text/plain", b"")

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""

RECORDER_PAGE = """<!doctype html><title>another local server</title>
<img src="/image.png"><iframe src="/frame"></iframe>
<script>
const target = new URLSearchParams(location.search).get("target");
const seen = { cookie: document.cookie, referrer: document.referrer, href: location.href,
  session: JSON.stringify(Object.entries(sessionStorage)), local: JSON.stringify(Object.entries(localStorage)) };
const frame = document.createElement("iframe");
frame.src = target + "/";
document.body.append(frame);
fetch(target + "/api/status", { mode: "no-cors", credentials: "include" }).catch(() => {});
fetch("/fetched", { credentials: "include" })
  .then(() => fetch("/report", { method: "POST", credentials: "include", body: JSON.stringify(seen) }))
  .then(() => { document.title = "reported"; });
</script>"""


def second_account():
    """The account another local user's server runs as (as the integration tests'), or None
    where the tests do not run as root."""
    if os.geteuid() != 0:
        return None
    for _ in range(20):
        try:
            return pwd.getpwnam("gpusched-test").pw_name
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                            "gpusched-test"], capture_output=True)
            time.sleep(0.1)
    return None


class Browser:
    def __init__(self):
        options = Options()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                         "--disable-gpu", "--window-size=1400,1100"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # Chromium's own temporary files (its profile's singleton socket) in a directory of the
        # test's, removed with it: a browser that is killed leaves nothing in /tmp.
        self.temporary = tempfile.TemporaryDirectory(prefix="gpusched-browser-")
        service = Service(CHROMEDRIVER, env=dict(os.environ, TMPDIR=self.temporary.name))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_script_timeout(60)

    def open(self, url):
        self.driver.get(url)

    def text(self, selector):
        return self.driver.execute_script(
            "const node = document.querySelector(arguments[0]); return node ? node.innerText : '';",
            selector)

    def shows(self, selector, text, seconds=10.0):
        return eventually(lambda: text in self.text(selector), seconds)

    def console_errors(self):
        """What the console said as errors since the last call (a resource not found, a script
        error, a Content-Security-Policy refusal)."""
        return [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]

    def block_api(self):
        """From now on, every request of the API fails: what the page shows is what the server
        wrote into it."""
        self.driver.execute_cdp_cmd("Network.enable", {})
        self.driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/*"]})

    def unblock_api(self):
        self.driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})

    def accessibility_violations(self):
        """What axe-core finds in the page as it is now, with its default rules (WCAG 2 A and AA,
        WCAG 2.1 and 2.2 AA, best practices), none disabled: one line per violation, with its
        rule, impact and the elements it concerns."""
        with open(AXE, encoding="utf-8") as script:
            self.driver.execute_script(script.read())
        found = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            axe.run(document, { resultTypes: ["violations"] })
              .then((results) => done({ violations: results.violations }), (error) => done({ error: String(error) }));""")
        if "error" in found:
            raise AssertionError("axe-core could not run: " + found["error"])
        return [f"{violation['id']} ({violation['impact']}): {violation['help']}: " +
                "; ".join(" ".join(map(str, node["target"])) for node in violation["nodes"])
                for violation in found["violations"]]

    def close(self):
        try:
            self.driver.quit()
        finally:
            self.temporary.cleanup()


class ServeTest(unittest.TestCase):
    def setUp(self):
        self.machine = Machine()
        self.browser = None

    def tearDown(self):
        if self.browser:
            self.browser.close()
        self.machine.close()

    def on_fake_driver(self, description):
        """The machine's gpusched on the tests' fake NVML, describing `description`; the
        file's path, for the test to write again. Skips where no fake driver is named."""
        fake_driver = os.environ.get("GPUSCHED_FAKE_DRIVER")
        if not fake_driver:
            self.skipTest("GPUSCHED_FAKE_DRIVER names no fake driver")
        config = os.path.join(self.machine.dir, "machine")
        with open(config, "w") as file:
            file.write(description)
        self.machine.env.update(LD_LIBRARY_PATH=fake_driver, GPUSCHED_FAKE_GPUS=config)
        return config

    def open_browser(self):
        self.browser = Browser()
        return self.browser

    def hold_gpu(self, gpu, command):
        """A run that holds `gpu`'s lease while `command` runs."""
        return self.machine.start(["--gpus", gpu], stdin_text=command + "\n")

    def assert_accessible(self, browser, view):
        if not os.path.exists(AXE):
            self.fail(f"axe-core is not installed ({AXE} is missing): run `npm ci --prefix tests/browser`, "
                      "as the README's test command does")
        violations = browser.accessibility_violations()
        if violations:
            self.fail(f"axe-core finds in {view}:\n  " + "\n  ".join(violations))

    def busy_machine(self):
        """A server's day: GPU 1 leased by a run and waited for by another; a queue served by a
        worker on GPU 0 with a job that failed, a labelled job that runs, one that waits for it
        (--after) and one queued behind it. The ids, by what they are."""
        machine = self.machine
        holder = self.hold_gpu("1", "sleep 300 # train resnet")
        self.assertTrue(eventually(lambda: "sleep 300" in machine.run(["status", "--gpus", "1"])))
        waiter = self.hold_gpu("1", "true # waits for GPU 1")
        self.assertTrue(eventually(lambda: "waiting:" in machine.run(["status", "--gpus", "1"])))
        self.marker = os.path.join(machine.dir, "go")
        jobs = {"holder": holder.pid, "waiter": waiter.pid}
        jobs["failed"] = machine.submit(["sh", "-c", "echo oops >&2; exit 3"], "--name", "broken", "--no-start")
        jobs["running"] = machine.submit(["sh", "-c", f"echo started; while [ ! -e {self.marker} ]; do sleep 0.05; done"],
                                         "--name", "train-a", "--no-start")
        jobs["waiting"] = machine.submit(["python", "evaluate.py", "--checkpoint", "runs/7"], "--name", "eval-a",
                                         "--after", str(jobs["running"]), "--no-start")
        jobs["queued"] = machine.submit(["python", "train.py", "--lr", "0.01", "--bs", "64"], "--no-start")
        machine.start(["worker", "--gpus", "0"])
        listing = lambda: json.loads(machine.run(["queue", "--json"]))
        self.assertTrue(eventually(lambda: [job["id"] for job in listing()["running"]] == [jobs["running"]]
                                   and listing()["failed"] == 1, 20), listing())
        return jobs

    def test_the_page_shows_holders_waiters_and_the_queue_as_they_are_and_escapes_them(self):
        machine = self.machine
        holder = self.hold_gpu("0", "sleep 300 # train resnet")
        self.assertTrue(eventually(lambda: "sleep 300" in machine.run(["status", "--gpus", "0"])))
        waiter = self.hold_gpu("0", "true # waits for GPU 0")
        self.assertTrue(eventually(lambda: "waiting:" in machine.run(["status", "--gpus", "0"])))
        first = machine.submit("python train.py --lr 0.1 --bs 64".split(), "--name", "lr-0.1", "--no-start")
        machine.submit("python train.py --lr 0.01 --bs 64".split(), "--name", "lr-0.01", "--no-start")
        machine.submit("python evaluate.py --checkpoint runs/7".split(), "--name", "eval", "--after", str(first), "--no-start")
        hostile = "echo '<img src=x onerror=alert(1)><script>alert(2)</script>'"
        queued = machine.submit(["sh", "-c", hostile], "--no-start")
        server = Server(machine, "--gpus", "0,1")
        browser = self.open_browser()
        browser.open(server.base + "/")
        self.assertTrue(browser.shows("#gpus", "sleep 300 # train resnet"), browser.text("#gpus"))
        gpu0 = browser.text('#gpus tr[data-gpu="0"]')
        self.assertIn("leased", gpu0)
        self.assertIn(str(holder.pid), browser.text("#gpus") + machine.run(["status", "--json"]))
        self.assertIn("free", browser.text('#gpus tr[data-gpu="1"]'))
        self.assertTrue(browser.shows("#waiters", str(waiter.pid)), browser.text("#waiters"))
        self.assertTrue(browser.shows("#fair-share", "root"))
        self.assertTrue(browser.shows("#queued", "<img src=x onerror=alert(1)>"), browser.text("#queued"))
        self.assertTrue(browser.shows("#queued", str(queued)))
        # Shown as text: no element was made of it, and nothing ran.
        self.assertEqual(browser.driver.execute_script("return document.querySelectorAll('#queued img, #queued script').length"), 0)
        # The server wrote it into the page too, where it ended nothing: the page's script and
        # the one data block are its only scripts.
        self.assertEqual(browser.driver.execute_script("return [...document.scripts].map((script) => script.type || script.src)"),
                         [server.base + "/assets/app.js", "application/json"])
        self.assertIn(f"job {first} to end", browser.text("#waiting"))
        with self.assertRaises(NoAlertPresentException):
            browser.driver.switch_to.alert.text
        self.assertIn("n/a", gpu0, "no NVML here: utilisation and temperature are n/a")
        # The timeline draws the holder's job, named when pointed at.
        self.assertTrue(eventually(lambda: browser.driver.execute_script(
            "return [...document.querySelectorAll('#timeline rect title')].some("
            "(title) => title.textContent.includes('sleep 300'))")), browser.text("#timeline"))
        screenshot = os.environ.get("GPUSCHED_SCREENSHOT")
        if screenshot:
            browser.driver.execute_script("window.scrollTo(0, 0)")
            browser.driver.save_screenshot(screenshot)

    def test_the_page_and_a_jobs_page_pass_axe_core_idle_and_busy(self):
        machine = self.machine
        server = Server(machine, "--gpus", "0,1", "--allow-actions")
        browser = self.open_browser()
        # Idle: no lease, no job, nothing ended; the page that may act.
        browser.open(server.url_with_token)
        self.assertTrue(browser.shows("#live", "live"), browser.text("body"))
        self.assertTrue(browser.shows("#running", "no job runs"))
        time.sleep(1.5)  # the timeline is drawn again a second after the event stream's first news
        self.assert_accessible(browser, "the idle page")
        self.assertEqual(browser.console_errors(), [])
        browser.open(f"{server.base}/jobs/1")
        self.assertTrue(browser.shows("#job-state", "no job 1"), browser.text("#job-page"))
        self.assert_accessible(browser, "the page of a job that is not there")
        browser.console_errors()  # its own request for the job was answered 404, as it says
        # Busy: leases held and waited for, jobs running, failed, waiting and queued.
        jobs = self.busy_machine()
        browser.open(server.base + "/")
        self.assertTrue(browser.shows("#live", "live"))
        self.assertTrue(browser.shows("#running", "train-a"), browser.text("#running"))
        self.assertTrue(browser.shows("#waiters", str(jobs["waiter"])), browser.text("#waiters"))
        self.assertIn("eval-a", browser.text("#waiting"))
        self.assertIn("failed", browser.text("#ended"))
        self.assertTrue(eventually(lambda: browser.driver.find_elements(By.CSS_SELECTOR, "#running button")),
                        "the buttons of the page that may act")
        time.sleep(1.5)
        self.assert_accessible(browser, "the busy page")
        self.assertEqual(browser.console_errors(), [])
        for job, shown in ((jobs["running"], "started"), (jobs["failed"], "oops"), (jobs["waiting"], ""),
                           (jobs["queued"], "")):
            browser.open(f"{server.base}/jobs/{job}")
            self.assertTrue(browser.shows("#job-fields", "Command"), browser.text("#job-page"))
            self.assertTrue(browser.shows("#job-page", shown), browser.text("#job-page"))
            self.assert_accessible(browser, f"job {job}'s page")
            self.assertEqual(browser.console_errors(), [], f"job {job}'s page")
        # The page of a read-only server, opened without the token: no action column, and a
        # job's output refused.
        read_only = Server(machine, "--gpus", "0,1")
        browser.close()
        browser = self.open_browser()
        browser.open(read_only.base + "/")
        self.assertTrue(browser.shows("#running", "train-a"), browser.text("#running"))
        time.sleep(1.5)
        self.assert_accessible(browser, "the read-only page")
        browser.open(f"{read_only.base}/jobs/{jobs['running']}")
        self.assertTrue(browser.shows("#job-stdout", "its submitter's"), browser.text("#job-page"))
        self.assert_accessible(browser, "a job's page without the token")
        self.assertEqual(len(browser.console_errors()), 2, "stdout and stderr, each refused once")
        time.sleep(2)
        self.assertEqual(browser.console_errors(), [], "and not asked for again while the job runs")

    def test_the_first_paint_shows_the_last_look_before_any_request_of_the_api(self):
        machine = self.machine
        jobs = self.busy_machine()
        server = Server(machine, "--gpus", "0,1")
        host = json.loads(server.get("/api/status")[1])["server"]["host"]
        self.assertTrue(eventually(lambda: [job["id"] for job in json.loads(server.get("/api/queue")[1])["running"]]
                                   == [jobs["running"]]))
        self.assertTrue(eventually(lambda: b"sleep 300" in server.get("/api/status")[1]))
        browser = self.open_browser()
        browser.block_api()
        browser.open(server.base + "/")
        # Read as soon as the page has loaded: no request of the API was answered, so all of it
        # is what the server wrote into the page.
        read = lambda selector: browser.text(selector)
        self.assertEqual(browser.driver.title, f"{host} · gpusched")
        self.assertIn("sleep 300 # train resnet", read('#gpus tr[data-gpu="1"]'))
        self.assertIn(str(jobs["waiter"]), read("#waiters"))
        running = read(f'#running tr[data-job="{jobs["running"]}"]')
        self.assertIn("train-a", running, read("#running"))
        # The GPU's row names the queue's job that holds it, by its id and label.
        self.assertIn(f"job {jobs['running']} train-a:", read('#gpus tr[data-gpu="0"]'))
        waiting = read(f'#waiting tr[data-job="{jobs["waiting"]}"]')
        self.assertIn("eval-a", waiting)
        self.assertIn(f"job {jobs['running']} to end", waiting)
        self.assertEqual(browser.driver.find_element(By.CSS_SELECTOR, f'#waiting tr[data-job="{jobs["waiting"]}"] td:nth-child(2) a')
                         .get_attribute("href"), f"{server.base}/jobs/{jobs['running']}")
        self.assertIn("broken", read(f'#ended tr[data-job="{jobs["failed"]}"]'))
        self.assertIn(str(jobs["queued"]), read("#queued"))
        self.assertTrue(browser.driver.execute_script(
            f"return document.querySelectorAll('#timeline rect[data-job=\"{jobs['running']}\"]').length > 0"),
            browser.driver.execute_script("return document.getElementById('timeline').innerHTML"))
        # Times in 24 hours, as the CLI writes them, whatever the browser's locale.
        started = browser.driver.find_element(By.CSS_SELECTOR, f'#running tr[data-job="{jobs["running"]}"] td:nth-child(5)').text
        self.assertRegex(started, r"^\d\d:\d\d:\d\d$")
        self.assertRegex(browser.driver.find_element(By.CSS_SELECTOR, '#gpus tr[data-gpu="1"] td:nth-child(9)').text,
                         r"^\d\d:\d\d:\d\d$")
        # A job's page: titled with its id and label, else the start of its command.
        browser.open(f"{server.base}/jobs/{jobs['running']}")
        self.assertEqual(browser.driver.title, f"job {jobs['running']} · train-a · gpusched")
        self.assertIn("running", read("#job-state"))
        browser.open(f"{server.base}/jobs/{jobs['waiting']}")
        self.assertEqual(browser.driver.title, f"job {jobs['waiting']} · eval-a · gpusched")
        self.assertIn(f"Waits for\tjob {jobs['running']} to end", read("#job-fields"))
        browser.open(f"{server.base}/jobs/{jobs['queued']}")
        self.assertEqual(browser.driver.title, f"job {jobs['queued']} · python train.py --lr 0.01 --bs 64 · gpusched")
        # With the API back, the page goes live from there.
        browser.unblock_api()
        browser.console_errors()  # the requests refused above
        browser.open(server.base + "/")
        self.assertTrue(browser.shows("#live", "live"))
        open(self.marker, "w").close()
        self.assertTrue(browser.shows(f'#ended tr[data-job="{jobs["running"]}"]', "succeeded"), browser.text("#ended"))
        self.assertTrue(browser.shows("#ended", "eval-a"), browser.text("#queue-section"))
        self.assertEqual(browser.console_errors(), [], "no favicon missing, no script error")
        status, body = server.get("/favicon.ico")
        self.assertEqual(status, 200)
        self.assertIn(b"<svg", body)

    def test_the_timelines_axis_is_in_24_hours_and_each_label_is_drawn_whole(self):
        server = Server(self.machine, "--gpus", "0")
        browser = self.open_browser()
        browser.open(server.base + "/")
        self.assertTrue(browser.shows("#live", "live"))
        # What the server answers, for each choice of hours.
        for hours in ("1", "24", "6"):
            browser.driver.execute_script("window.drawnBefore = document.querySelector('#timeline svg')")
            Select(browser.driver.find_element(By.ID, "timeline-hours")).select_by_value(hours)
            self.assertTrue(eventually(lambda: browser.driver.execute_script(
                "return document.querySelector('#timeline svg') !== window.drawnBefore")), hours)
            labels = browser.driver.execute_script(
                "return [...document.querySelectorAll('#timeline text.axis')].map((label) => label.textContent)")
            self.assertGreaterEqual(len(labels), 2, hours)
            for label in labels:
                self.assertRegex(label, r"^\d\d:\d\d$")
        # Drawn at every moment of a few hours, for each window: every label inside the
        # picture, none over another.
        problems = browser.driver.execute_script("""
            const problems = [];
            const now = Math.floor(Date.now() / 1000);
            for (const hours of [1, 6, 24]) {
              for (let k = 0; k < 120; k++) {
                const to = now + k * 97;
                drawTimeline({ from: to - hours * 3600, to, seen_since: to - hours * 3600,
                               gpus: [{ id: "0", spans: [], utilization: [] }] });
                const svg = document.querySelector("#timeline svg");
                const width = svg.viewBox.baseVal.width;
                const boxes = [...svg.querySelectorAll("text.axis")].map((label) => [label.textContent, label.getBBox()]);
                boxes.forEach(([text, box], index) => {
                  if (box.x < 0 || box.x + box.width > width) problems.push(hours + " h, " + to + ": " + text + " at " + box.x + "+" + box.width);
                  if (index && boxes[index - 1][1].x + boxes[index - 1][1].width > box.x) problems.push(hours + " h, " + to + ": " + text + " overlaps");
                });
              }
            }
            return problems;""")
        self.assertEqual(problems, [])

    def test_each_gpu_shows_its_memory_utilisation_and_temperature_from_nvml(self):
        machine = self.machine
        gpu = "gpu GPU-aaaaaaaa-1111-2222-3333-444444444444 00000000:41:00.0 81559 1000 Fake H100\n"
        config = self.on_fake_driver(gpu + "busy 0 37 64\n")
        server = Server(machine, "--gpus", "0", "--sample-every", "0.2")
        browser = self.open_browser()
        browser.open(server.base + "/")
        row = '#gpus tr[data-gpu="0"]'
        self.assertTrue(browser.shows(row, "37 %"), browser.text("#gpus"))
        self.assertIn("64 °C", browser.text(row))
        self.assertIn("1000 / 81559 MiB", browser.text(row))
        with open(config, "w") as file:
            file.write(gpu + "busy 0 90 71\n")
        # Sampled every 0.2 s by a probe child, which takes longer under the sanitizers.
        self.assertTrue(browser.shows(row, "90 %", 15), browser.text(row))
        timeline = json.loads(server.get("/api/timeline?hours=1")[1])
        percents = {sample["percent"] for sample in timeline["gpus"][0]["utilization"]}
        self.assertTrue({37, 90} <= percents, timeline)
        self.assertTrue(eventually(lambda: browser.driver.find_elements(By.CSS_SELECTOR, "#timeline polyline")))
        self.assert_accessible(browser, "the page with NVML's readings")

    def test_a_gpu_shared_by_memory_shows_what_was_promised_beside_what_is_in_use(self):
        machine = self.machine
        self.on_fake_driver("gpu GPU-aaaaaaaa-1111-2222-3333-444444444444 00000000:41:00.0 81920 8192 Fake H100\n")
        marker = os.path.join(machine.dir, "go")
        hold = f"while [ ! -e {marker} ]; do sleep 0.05; done\n"
        run = machine.start(["--gpus", "0", "--mem", "20G"], hold * 2)
        server = Server(machine, "--gpus", "0", "--sample-every", "0.2")
        browser = self.open_browser()
        browser.open(server.base + "/")
        row = '#gpus tr[data-gpu="0"]'
        self.assertTrue(browser.shows(row, "40960 MiB promised", 15), browser.text("#gpus"))
        self.assertIn("shared", browser.text(row))
        self.assertIn("8192 / 81920 MiB", browser.text(row))
        self.assertIn("2 jobs sharing it by memory", browser.text(row))
        widths = browser.driver.execute_script("""
            const bar = document.querySelector('#gpus tr[data-gpu="0"] .memory-bars');
            return [...bar.children].map((span) => span.getBoundingClientRect().width / bar.getBoundingClientRect().width);""")
        # 8192 of 81920 MiB in use (by the driver), and 40960 promised to the two jobs.
        self.assertAlmostEqual(widths[0], 0.1, delta=0.02)
        self.assertAlmostEqual(widths[1], 0.5, delta=0.02)
        self.assert_accessible(browser, "the page with a GPU shared by memory")
        open(marker, "w").close()
        self.assertEqual(run.wait(30), 0, run.stderr.read())
        self.assertTrue(browser.shows(row, "free", 15), browser.text(row))
        self.assertNotIn("promised", browser.text(row))

    def test_a_job_started_or_ended_appears_within_a_second_without_a_reload(self):
        machine = self.machine
        server = Server(machine, "--gpus", "0")
        browser = self.open_browser()
        browser.open(server.base + "/")
        self.assertTrue(browser.shows("#live", "live"))
        browser.driver.execute_script("window.loadedOnce = true")
        marker = os.path.join(machine.dir, "go")
        job = machine.submit(["sh", "-c", f"while [ ! -e {marker} ]; do sleep 0.05; done"], "--no-start")
        submitted = time.monotonic()
        self.assertTrue(browser.shows("#queued", str(job), 10))
        queued_after = time.monotonic() - submitted
        machine.start(["worker", "--gpus", "0"])
        self.assertTrue(browser.shows("#running", f"while [ ! -e {marker} ]", 10), browser.text("#running"))
        self.assertTrue(browser.shows('#gpus tr[data-gpu="0"]', "leased", 10), "the worker's lease is shown")
        self.assertTrue(browser.shows('#gpus tr[data-gpu="0"]', f"job {job}:", 10),
                        browser.text('#gpus tr[data-gpu="0"]'))
        open(marker, "w").close()
        ended = time.monotonic()
        self.assertTrue(browser.shows("#ended", "succeeded", 10), browser.text("#ended"))
        ended_after = time.monotonic() - ended
        self.assertTrue(browser.driver.execute_script("return window.loadedOnce === true"),
                        "the page was never reloaded")
        # How soon is measured (bench/serve.sh), not asserted: a loaded machine is no fault.
        print(f"queued job shown after {queued_after:.2f} s, end after {ended_after:.2f} s",
              file=sys.stderr)

    def test_a_jobs_page_shows_its_fields_and_follows_its_output(self):
        machine = self.machine
        marker = os.path.join(machine.dir, "go")
        job = machine.submit(["sh", "-c", f"echo first line; echo to stderr >&2; "
                                          f"while [ ! -e {marker} ]; do sleep 0.05; done; echo '<b>last</b> line'"],
                             "--name", "follow-me", "--no-start")
        machine.start(["worker", "--gpus", "0"])
        server = Server(machine, "--gpus", "0")
        browser = self.open_browser()
        # Without the token every local user sees the job, not what it printed.
        browser.open(f"{server.base}/jobs/{job}")
        self.assertTrue(browser.shows("#job-stdout", "its submitter's"), browser.text("#job-page"))
        self.assertNotIn("first line", browser.text("#job-stdout"))
        status, _ = server.get(f"/api/jobs/{job}/output?stream=stdout")
        self.assertEqual(status, 403)
        browser.close()
        browser = self.open_browser()
        browser.open(f"{server.base}/jobs/{job}#token={server.token}")
        self.assertTrue(browser.shows("#job-stdout", "first line"), browser.text("#job-page"))
        self.assertTrue(browser.shows("#job-stderr", "to stderr"))
        self.assertIn("follow-me", browser.text("#job-fields"))
        self.assertIn(machine.dir, browser.text("#job-fields"), "its directory")
        # While the job runs, the answers hold what only a busy server has (a span without an
        # end, a running job, a holder): each is a document of the JSON vocabulary too.
        for path in ("/api/status", "/api/queue", f"/api/jobs/{job}", "/api/timeline?hours=1"):
            status, body = server.get(path, {"Authorization": f"Bearer {server.token}"})
            self.assertEqual(schema_errors(body), [], "while it runs: " + path)
        open(marker, "w").close()
        self.assertTrue(browser.shows("#job-stdout", "<b>last</b> line", 5), browser.text("#job-stdout"))
        self.assertTrue(browser.shows("#job-state", "succeeded", 5))
        self.assertEqual(browser.driver.execute_script("return document.querySelectorAll('#job-stdout b').length"), 0)
        # Every answer of the API is a document of the JSON vocabulary.
        for path in ("/api/status", "/api/queue", "/api/queue?from=0&count=1", f"/api/jobs/{job}",
                     f"/api/jobs/{job}/output?stream=stdout", f"/api/jobs/{job}/output?stream=stderr&from=3",
                     "/api/timeline?hours=1", "/api/jobs/999999", "/api/queue?count=x"):
            status, body = server.get(path, {"Authorization": f"Bearer {server.token}"})
            self.assertEqual(schema_errors(body), [], path)
        timeline = json.loads(server.get("/api/timeline")[1])
        spans = [span for gpu in timeline["gpus"] for span in gpu["spans"] if span["job_id"] == job]
        self.assertEqual(len(spans), 1, timeline)
        self.assertEqual(spans[0]["state"], "succeeded")

    def test_a_removed_database_is_said_and_one_made_anew_is_shown_alone(self):
        machine = self.machine
        database = os.path.join(machine.dir, "queue.db")
        old = machine.submit(["echo", "from the removed queue"], "--db", database, "--no-start")
        server = Server(machine, "--gpus", "0", "--db", database)
        api = lambda path: json.loads(server.get(path)[1])
        self.assertTrue(eventually(lambda: "job" in api(f"/api/jobs/{old}")))
        browser = self.open_browser()
        browser.open(server.base + "/")
        self.assertTrue(browser.shows("#queued", "from the removed queue"), browser.text("#queued"))
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(database + suffix):
                os.remove(database + suffix)
        # Seen within a second (polled here: a loaded machine is no fault).
        removed = f"queue database {database} was removed"
        self.assertTrue(eventually(lambda: api("/api/queue").get("error") == removed), api("/api/queue"))
        self.assertTrue(api("/api/queue")["gone"])
        self.assertEqual(schema_errors(server.get("/api/queue")[1]), [])
        status, body = server.get(f"/api/jobs/{old}")
        self.assertNotEqual(status, 200, body)
        self.assertEqual(json.loads(body)["error"], removed)
        self.assertFalse(os.path.exists(database), "serve made no database in place of the removed one")
        self.assertTrue(browser.shows("#queue-error", removed), browser.text("#queue-section"))
        self.assertNotIn("from the removed queue", browser.text("#queue-section"))
        self.assert_accessible(browser, "the page of a removed queue")
        # A new queue under the same name: its job 1 alone, never the removed one's.
        new = machine.submit(["echo", "from the new queue"], "--db", database, "--no-start")
        self.assertEqual(new, old)
        commands = lambda: [job["command"] for job in api("/api/queue").get("next", [])]
        self.assertTrue(eventually(lambda: commands() == ["echo 'from the new queue'"]), api("/api/queue"))
        self.assertIsNone(api("/api/queue")["error"])
        self.assertEqual(api(f"/api/jobs/{new}")["job"]["command"], "echo 'from the new queue'")
        self.assertTrue(browser.shows("#queued", "from the new queue"), browser.text("#queued"))
        self.assertNotIn("from the removed queue", browser.text("#queue-section"))
        self.assertEqual(browser.text("#queue-error"), "")
        for path in ("/api/queue", f"/api/jobs/{new}"):
            self.assertEqual(schema_errors(server.get(path)[1]), [], path)

    def test_the_queue_pages_through_a_hundred_thousand_jobs(self):
        machine = self.machine
        machine.run(["submit", "--no-start"], "".join(f"echo job {n}\n" for n in range(100_000)))
        server = Server(machine, "--gpus", "0")
        browser = self.open_browser()
        began = time.monotonic()
        browser.open(server.base + "/")
        self.assertTrue(browser.shows("#queued-range", "of 100000", 10), browser.text("#queued-range"))
        print(f"page with 100000 queued jobs shown in {time.monotonic() - began:.3f} s", file=sys.stderr)
        self.assertIn("echo job 49", browser.text("#queued"))
        browser.driver.find_element(By.ID, "page-next").click()
        self.assertTrue(browser.shows("#queued", "echo job 99\n", 5) or browser.shows("#queued", "echo job 99", 5))
        self.assertIn("51–100 of 100000", browser.text("#queued-range"))
        status, body = server.get("/api/queue?from=99990&count=50")
        self.assertEqual(status, 200)
        page = json.loads(body)
        self.assertEqual([job["position"] for job in page["next"]], list(range(99991, 100001)))
        self.assertEqual(page["next"][-1]["command"], "echo job 99999")

    def test_a_redis_queue_is_shown_with_its_workers(self):
        redis = shutil.which("redis-server")
        if not redis:
            self.skipTest("redis-server is not installed")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.machine.processes.append(subprocess.Popen(
            [redis, "--port", str(port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, start_new_session=True))
        url = f"redis://127.0.0.1:{port}"
        eventually(lambda: subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).returncode == 0)
        self.machine.submit(["echo", "from redis"], "--redis", url)
        self.machine.start(["worker", "--redis", url, "--gpus", "0"])
        server = Server(self.machine, "--redis", url, "--gpus", "0")
        browser = self.open_browser()
        browser.open(server.base + "/")
        self.assertTrue(browser.shows("#queue-where", "redis://"), browser.text("#queue-section"))
        self.assertTrue(browser.shows("#ended", "from redis"), browser.text("#ended"))
        self.assertTrue(browser.shows("#workers", socket.gethostname()[:10]), browser.text("#workers"))
        marker = os.path.join(self.machine.dir, "go")
        job = self.machine.submit(["sh", "-c", f"while [ ! -e {marker} ]; do sleep 0.05; done"],
                                  "--redis", url)
        self.assertTrue(browser.shows("#running", str(job), 5), browser.text("#running"))
        open(marker, "w").close()
        self.assertTrue(browser.shows("#ended", "while [ ! -e", 5), browser.text("#ended"))
        # redis-server gone: the queue's requests fail at once and the GPUs stay live; back
        # on the same port, the server connects again.
        redis_server = self.machine.processes[0]
        redis_server.kill()
        redis_server.wait()
        status, body = server.get("/api/queue?from=1")
        self.assertEqual(status, 503, body)
        self.assertEqual(schema_errors(body), [])
        self.assertEqual(server.get("/api/status")[0], 200)
        self.machine.processes[0] = subprocess.Popen(
            [redis, "--port", str(port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, start_new_session=True)
        eventually(lambda: subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).returncode == 0)
        self.assertTrue(eventually(lambda: server.get("/api/queue?from=1")[0] == 200), "connected again")

    def test_actions_need_allow_actions_the_token_and_the_servers_own_page(self):
        machine = self.machine
        job = machine.submit(["sleep", "60"], "--no-start")
        read_only = Server(machine, "--gpus", "0")
        status, _ = read_only.post(f"/api/jobs/{job}/cancel",
                                   {"Authorization": f"Bearer {read_only.token}"})
        self.assertEqual(status, 403, "read-only without --allow-actions")
        server = Server(machine, "--gpus", "0", "--allow-actions")
        status, _ = server.post(f"/api/jobs/{job}/cancel")
        self.assertEqual(status, 401, "no token")
        status, _ = server.post(f"/api/jobs/{job}/cancel", {"Authorization": f"Bearer {server.token}",
                                                            "Origin": "http://evil.example"})
        self.assertEqual(status, 403, "another site's page")
        self.assertIn('"queued"', machine.run(["queue", "--json"]))
        # The page opened from the printed address acts: its script took the token out of the
        # address into the tab's sessionStorage, and sends it as a header. No cookie is set.
        browser = self.open_browser()
        browser.open(server.url_with_token)
        self.assertTrue(browser.shows("#queued", "sleep 60"))
        self.assertNotIn("token", browser.driver.current_url, "the token leaves the address bar")
        self.assertEqual(browser.driver.get_cookies(), [])
        # A reload keeps it (sessionStorage lasts as long as the tab).
        browser.driver.refresh()
        self.assertTrue(browser.shows("#live", "live"))
        button = eventually(lambda: browser.driver.find_elements(By.CSS_SELECTOR, f'#queued tr[data-job="{job}"] button'))
        self.assertTrue(button, browser.text("#queued"))
        button[0].click()
        self.assertTrue(eventually(lambda: '"cancelled": 1' in machine.run(["queue", "--json"])),
                        browser.text("#message"))
        status, body = server.post(f"/api/jobs/{job}/retry", {"Authorization": f"Bearer {server.token}"})
        self.assertEqual(status, 200, body)
        self.assertEqual(schema_errors(body), [])
        status, body = server.post(f"/api/jobs/{job}/cancel", {"Authorization": f"Bearer {server.token}"})
        self.assertEqual(status, 200, body)
        self.assertTrue(browser.shows("#ended", "cancelled", 3))
        # A job's page, reached by its link, acts with the token too.
        again = machine.submit(["sleep", "62"], "--no-start")
        link = eventually(lambda: browser.driver.find_elements(By.CSS_SELECTOR, f'#queued tr[data-job="{again}"] a'))
        self.assertTrue(link, browser.text("#queued"))
        link[0].click()
        self.assertTrue(browser.shows("#job-state", "queued"), browser.text("#job-page"))
        button = eventually(lambda: browser.driver.find_elements(By.CSS_SELECTOR, "#job-actions button"))
        self.assertTrue(button, browser.text("#job-page"))
        button[0].click()
        eventually(lambda: self.alert(browser))
        browser.driver.switch_to.alert.accept()
        self.assertTrue(browser.shows("#job-state", "cancelled", 5), browser.text("#message"))
        # Another site's page in the same browser posts with no effect.
        other = machine.submit(["sleep", "61"], "--no-start")
        browser.open("data:text/html,<form method=post action='" + server.base +
                     f"/api/jobs/{other}/cancel'></form><script>document.forms[0].submit()</script>")
        time.sleep(1)
        self.assertIn('"cancelled": 2', machine.run(["queue", "--json"]))

    @staticmethod
    def alert(browser):
        try:
            return browser.driver.switch_to.alert.text is not None
        except NoAlertPresentException:
            return False

    def test_another_local_users_server_receives_nothing_that_acts_here(self):
        machine = self.machine
        job = machine.submit(["sleep", "60"], "--no-start")
        server = Server(machine, "--gpus", "0", "--allow-actions")
        user = second_account()
        command = [sys.executable, "-c", RECORDER, RECORDER_PAGE]
        recorder = subprocess.Popen((["runuser", "-u", user, "--"] if user else []) + command,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
        machine.processes.append(recorder)
        port = recorder.stdout.readline().strip()
        self.assertTrue(port.isdigit(), recorder.stderr.read() if not port else port)
        other = f"http://127.0.0.1:{port}"
        # The user opens the printed address, as docs/serve.md says, and the page can act.
        browser = self.open_browser()
        browser.open(server.url_with_token)
        self.assertTrue(browser.shows("#queued", "sleep 60"), browser.text("body"))
        self.assertTrue(eventually(lambda: browser.driver.find_elements(
            By.CSS_SELECTOR, f'#queued tr[data-job="{job}"] button')), "the page may act")
        # Then goes to the other server's page: from this page (what a link would send), and
        # typed in a tab of its own; each page reports what its script could read.
        browser.driver.execute_script("window.location.href = arguments[0]", f"{other}/?target={server.base}")
        self.assertTrue(eventually(lambda: browser.driver.title == "reported"), browser.driver.current_url)
        browser.driver.switch_to.new_window("tab")
        browser.open(f"{other}/?target={server.base}")
        self.assertTrue(eventually(lambda: browser.driver.title == "reported"))
        recorded = json.loads(urllib.request.urlopen(f"{other}/recorded", timeout=10).read())
        self.assertEqual(len([seen for seen in recorded if seen["path"] == "/report"]), 2, recorded)
        # Not in any header, cookie, address, Referer, nor anything its script could read.
        self.assertNotIn(server.token, json.dumps(recorded))
        arrivals = [seen for seen in recorded if seen["path"].startswith("/?target=")]
        self.assertNotIn("referer", [name.lower() for name, _ in arrivals[0]["headers"]], arrivals[0])
        # Everything it received, replayed at this server's action as a script would send it
        # (with this page's Origin, which a script can forge), is refused.
        for seen in recorded:
            headers = {name: value for name, value in seen["headers"]
                       if name.lower() not in ("host", "content-length", "connection", "origin", "referer")
                       and not name.lower().startswith("sec-fetch-")}
            headers.update({"Origin": server.base, "Sec-Fetch-Site": "same-origin"})
            query = seen["path"].partition("?")[2]
            status, body = server.post(f"/api/jobs/{job}/cancel" + ("?" + query if query else ""), headers)
            self.assertEqual(status, 401, (seen, body))
        listing = json.loads(machine.run(["queue", "--json"]))
        self.assertEqual((listing["queued"], listing["cancelled"]), (1, 0), listing)
        # The same request with the token acts: what was refused was the token's absence.
        status, body = server.post(f"/api/jobs/{job}/cancel", {"Authorization": f"Bearer {server.token}",
                                                              "Origin": server.base})
        self.assertEqual(status, 200, body)

    def test_beyond_loopback_every_api_request_needs_the_token_and_on_loopback_other_hosts_are_refused(self):
        machine = self.machine
        server = Server.__new__(Server)
        server.process = machine.start(["serve", "--listen", "0.0.0.0:0", "--gpus", "0"])
        line = server.process.stdout.readline().strip()
        base, token = split_address(line)
        port = int(base.rsplit(":", 1)[1])
        for path in ("/api/status", "/api/queue", "/api/events", "/api/timeline"):
            status, _ = request("GET", port, path)
            self.assertEqual(status, 401, path)
            status, _ = request("GET", port, path + "?token=" + token, {"Cookie": f"gpusched_token_{port}={token}"})
            self.assertEqual(status, 401, "neither ?token= nor a cookie presents the token: " + path)
        # The page's own files hold no data: served without the token, which is in the
        # address's fragment and reaches only the page's script.
        for path in ("/", "/jobs/1", "/assets/app.js", "/assets/icon.svg"):
            status, body = request("GET", port, path)
            self.assertEqual(status, 200, path)
            self.assertFalse(DATA_BLOCK in body, "the page holds no data: " + path)
        # A script that sends the token gets the page with the last look in it, as the API.
        status, body = request("GET", port, "/", {"Authorization": f"Bearer {token}"})
        self.assertTrue(DATA_BLOCK in body, body[:400])
        status, _ = request("GET", port, "/api/status", {"Authorization": f"Bearer {token}"})
        self.assertEqual(status, 200)
        browser = self.open_browser()
        browser.open(f"http://127.0.0.1:{port}/#token={token}")
        self.assertTrue(browser.shows("#gpus", "free"), browser.text("body"))
        self.assertTrue(browser.shows("#live", "live"), "the event stream carries the token")
        self.assertNotIn("token", browser.driver.current_url)
        # An address of an older version, with ?token=, in a tab of its own: taken the same way.
        browser.driver.switch_to.new_window("tab")
        browser.open(f"http://127.0.0.1:{port}/?token={token}")
        self.assertTrue(browser.shows("#gpus", "free"), browser.text("body"))
        self.assertNotIn("token", browser.driver.current_url)
        # Without it, the page says why it shows nothing.
        browser.driver.switch_to.new_window("tab")
        browser.open(f"http://127.0.0.1:{port}/")
        self.assertTrue(browser.shows("#message", "open the address it printed"), browser.text("body"))
        loopback = Server(machine, "--gpus", "0")
        status, body = loopback.get("/")
        self.assertTrue(DATA_BLOCK in body, "on loopback, as the API")
        status, _ = loopback.get("/api/status", {"Host": "rebound.example:80"})
        self.assertEqual(status, 403, "a name rebound to 127.0.0.1 reads nothing")
        with open("/proc/net/tcp") as table:
            listening = table.read()
        self.assertIn(f"0100007F:{loopback.port:04X}", listening, "bound to 127.0.0.1 only")

    def test_bad_huge_and_slow_requests_never_hang_the_other_pages(self):
        machine = self.machine
        server = Server(machine, "--gpus", "0")
        for path in ("/assets/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/etc/passwd",
                     "/assets/", "/jobs/1/../../etc/passwd", "/api/jobs/x"):
            status, body = server.get(path)
            self.assertEqual(status, 404, path)
            self.assertNotIn(b"root:", body)
        for path in ("/api/queue?from=-1", "/api/queue?count=100000", "/api/queue?from=NaN",
                     "/api/timeline?hours=0", "/api/jobs/1/output?stream=/etc/passwd"):
            status, _ = server.get(path, {"Authorization": f"Bearer {server.token}"})
            self.assertIn(status, (400, 404), path)
        # Silent clients, a huge header, and two dozen live pages at once.
        silent = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
        huge = socket.create_connection(("127.0.0.1", server.port))
        huge.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n")
        live = []
        for _ in range(24):
            connection = socket.create_connection(("127.0.0.1", server.port))
            connection.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            live.append(connection)
        began = time.monotonic()
        status, _ = server.get("/api/status")
        self.assertEqual(status, 200)
        print(f"status answered in {time.monotonic() - began:.3f} s beside 20 silent clients "
              f"and 24 live pages", file=sys.stderr)
        huge.settimeout(10)
        answer = huge.recv(100)
        self.assertTrue(answer == b"" or answer.startswith(b"HTTP/1.1 4"), answer)
        for connection in live:
            connection.settimeout(5)
            received = b""
            while b"event: status" not in received:
                chunk = connection.recv(65536)
                self.assertTrue(chunk, received)
                received += chunk
        for connection in silent + live + [huge]:
            connection.close()
        self.assertEqual(server.get("/api/status")[0], 200)


def main():
    global GPUSCHED
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    GPUSCHED = os.path.abspath(sys.argv.pop(1))
    if webdriver is None or not CHROMIUM or not os.path.exists(CHROMEDRIVER):
        print("skipped: apt-get install chromium chromium-driver python3-selenium", file=sys.stderr)
        return 77
    program = unittest.main(exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
