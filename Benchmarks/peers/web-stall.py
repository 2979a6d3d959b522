#!/usr/bin/env python3
"""The web view's main-thread stalls with a 1,000,000-point route over basemap tiles (issue 29), stdlib only.

    web-stall.py [ROUTEKIT] [--gpx FILE] [--points 1000000] [--seed 42] [--max-zoom 16] [--margin 6] [--work DIR]

1. The route: FILE (made with `../shared/peers/make_gpx.py POINTS SEED FILE` when it does not exist; default a
   file in the work folder), imported into a new SQLite store (`routekit import`), and a read token
   (`routekit tokens create --scope read`).
2. The basemap: an MBTiles archive written here (sqlite3) with a PNG tile of its own (256 x 256, 1-bit palette, a
   colour from z/x/y, a grid line on its edge) for every tile of zooms 0 to MAX_ZOOM that the route's bounding box
   touches, MARGIN tiles more on each side (default 6: the view at 1280 x 900 and its pans reach beyond the route).
3. `routekit serve --tiles ARCHIVE`, chromedriver and headless Chromium at 1280 x 900. Before the page's scripts
   run (DevTools' Page.addScriptToEvaluateOnNewDocument; else just after navigation, buffered), performance
   observers record every `longtask` (a main-thread task over 50 ms) and `long-animation-frame`. The token is
   entered, the workout opened (a click in the list), and the script waits until the route is drawn on the map
   (the map's caption is set once Leaflet holds the route, then a frame is painted). Then the map is panned and
   zoomed through Leaflet's API (its map, caught with `L.Map.addInitHook` before the page makes it) and through
   the browser's input (a mouse drag, the scroll wheel, the zoom button), 1 s after each.
4. Prints one JSON object: the long tasks (count, longest, every duration, by phase), the long animation frames,
   the times from the click to the route drawn, the profiles drawn and the tiles loaded, the page's JS heap
   (performance.memory), the server's peak RSS (VmHWM) and the versions.

ROUTEKIT: a routekit built with the Server trait, default .build-release/release/routekit
(swift build -c release --traits Server --product routekit --scratch-path .build-release).
Needs chromium, chromium-driver and libjs-leaflet (Debian's packages). Exit status: 0 when the measurement ran
(whatever it found), 1 when a step failed, 2 when a tool is missing.
"""
import argparse
import json
import math
import os
import re
import shutil
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAKE_GPX = os.path.normpath(os.path.join(ROOT, "..", "shared", "peers", "make_gpx.py"))
LEAFLET = "/usr/share/javascript/leaflet/leaflet.js"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # W3C WebDriver's key of an element reference
WINDOW = (1280, 900)


class Missing(Exception):
    """A tool the measurement needs is not installed (exit 2)."""


class Failed(Exception):
    """A step of the measurement failed (exit 1)."""


# ---- Tools -------------------------------------------------------------------------------------------------------


def find_tools(args):
    """The paths of routekit, chromium and chromedriver; Missing naming every one that is not there."""
    missing = []
    routekit = os.path.abspath(args.routekit)
    if not os.access(routekit, os.X_OK):
        missing.append(f"no executable {routekit} (build it with `swift build -c release --traits Server "
                       "--product routekit --scratch-path .build-release`, or give its path)")
    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if chromium is None:
        missing.append("chromium (Debian: apt-get install chromium)")
    chromedriver = shutil.which("chromedriver")
    if chromedriver is None:
        missing.append("chromedriver (Debian: apt-get install chromium-driver)")
    if not os.path.exists(LEAFLET):
        missing.append(f"Leaflet, {LEAFLET} (Debian: apt-get install libjs-leaflet): without it there is no basemap")
    if not (args.gpx and os.path.exists(args.gpx)) and not os.path.exists(MAKE_GPX):
        missing.append(f"the route generator {MAKE_GPX} (or give an existing --gpx FILE)")
    if missing:
        raise Missing("; ".join(missing))
    return routekit, chromium, chromedriver


def version(command):
    """The first line `command` prints on stdout, or why there is none."""
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unknown ({error})"
    return out.splitlines()[0] if out else "unknown"


def run(command):
    """Runs `command`; its stdout, or Failed with the end of its stderr."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise Failed(f"{os.path.basename(command[0])} {command[1]} failed ({done.returncode}): {done.stderr[-800:]}")
    return done.stdout


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(url, process, seconds, what):
    """Waits until `url` answers 200 (while `process` runs); its body as JSON."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Failed(f"{what} exited ({process.returncode}) before it answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return json.load(response)
        except (OSError, ValueError):
            time.sleep(0.1)
    raise Failed(f"{what} did not answer {url} within {seconds} s")


# ---- The route -----------------------------------------------------------------------------------------------------

TRKPT = re.compile(rb'<trkpt\s+lat="([^"]+)"\s+lon="([^"]+)"')


def route_file(args, work):
    """The GPX file of the route, made with make_gpx.py when it does not exist."""
    path = os.path.abspath(args.gpx or os.path.join(work, f"track_{args.points}.gpx"))
    if not os.path.exists(path):
        subprocess.run([sys.executable, MAKE_GPX, str(args.points), str(args.seed), path], check=True)
    return path


def route_bbox(path):
    """The number of track points in the GPX file at `path` and their bounding box (south, west, north, east)."""
    count = 0
    south, west, north, east = math.inf, math.inf, -math.inf, -math.inf
    with open(path, "rb") as f:
        for line in f:
            if b"<trkpt" not in line:
                continue
            m = TRKPT.search(line)
            if m is None:
                continue
            lat, lon = float(m.group(1)), float(m.group(2))
            count += 1
            south, north = min(south, lat), max(north, lat)
            west, east = min(west, lon), max(east, lon)
    if count == 0:
        raise Failed(f'no <trkpt lat="…" lon="…"> in {path}')
    return count, (south, west, north, east)


# ---- The basemap: an MBTiles archive of generated tiles -------------------------------------------------------------


def tile_x(lon, z):
    return min((1 << z) - 1, max(0, int((lon + 180.0) / 360.0 * (1 << z))))


def tile_y(lat, z):
    """The XYZ row (0 at the north) of latitude `lat` at zoom `z` (Web Mercator)."""
    r = math.radians(max(-85.0511, min(85.0511, lat)))
    return min((1 << z) - 1, max(0, int((1.0 - math.asinh(math.tan(r)) / math.pi) / 2.0 * (1 << z))))


def tile_ranges(bbox, max_zoom, margin):
    """For each zoom 0…max_zoom: (z, columns, rows) of the tiles `bbox` touches, `margin` more on each side."""
    south, west, north, east = bbox
    for z in range(max_zoom + 1):
        last = (1 << z) - 1
        xs = range(max(0, tile_x(west, z) - margin), min(last, tile_x(east, z) + margin) + 1)
        ys = range(max(0, tile_y(north, z) - margin), min(last, tile_y(south, z) + margin) + 1)
        yield z, xs, ys


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def tile_idat():
    """A 256 x 256 image of 1-bit palette indices, 1 on its edge (a grid line), 0 inside: the same for every tile."""
    edge = b"\x00" + b"\xff" * 32  # filter byte 0, then 256 pixels of index 1
    inside = b"\x00" + b"\x80" + b"\x00" * 30 + b"\x01"
    return png_chunk(b"IDAT", zlib.compress(edge + inside * 254 + edge, 9))


PNG_HEAD = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 1, 3, 0, 0, 0))
PNG_PIXELS = tile_idat()
PNG_END = png_chunk(b"IEND", b"")


def tile_png(z, x, y):
    """The tile z/x/y: its fill colour from z, x and y (neighbours differ), its grid line a darker shade."""
    fill = (150 + (x * 37 + z * 13) % 100, 150 + (y * 53 + z * 7) % 100, 140 + ((x + y) * 29) % 110)
    line = tuple(v // 2 for v in fill)
    return PNG_HEAD + png_chunk(b"PLTE", bytes(fill + line)) + PNG_PIXELS + PNG_END


def write_mbtiles(path, bbox, max_zoom, margin):
    """Writes the archive (MBTiles 1.3: `metadata`, `tiles` in TMS rows); what it holds."""
    if os.path.exists(path):
        os.remove(path)
    south, west, north, east = bbox
    count = 0
    db = sqlite3.connect(path)
    try:
        db.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
        db.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
        db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
        metadata = {
            "name": "web-stall.py tiles", "format": "png", "type": "baselayer", "version": "1",
            "minzoom": "0", "maxzoom": str(max_zoom), "attribution": "Generated tiles (web-stall.py)",
            "bounds": f"{west:.6f},{south:.6f},{east:.6f},{north:.6f}",
            "center": f"{(west + east) / 2:.6f},{(south + north) / 2:.6f},{min(max_zoom, 11)}",
        }
        db.executemany("INSERT INTO metadata (name, value) VALUES (?, ?)", sorted(metadata.items()))
        for z, xs, ys in tile_ranges(bbox, max_zoom, margin):
            rows = [(z, x, (1 << z) - 1 - y, tile_png(z, x, y)) for x in xs for y in ys]
            db.executemany("INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)", rows)
            count += len(rows)
        db.commit()
    finally:
        db.close()
    return {"tiles": count, "bytes": os.path.getsize(path), "zooms": f"0-{max_zoom}", "marginTiles": margin}


# ---- routekit ------------------------------------------------------------------------------------------------------


def start_serve(routekit, store, archive, work):
    """`routekit serve` on a free port with the archive as its basemap; the process and its origin."""
    port = free_port()
    log = open(os.path.join(work, "serve.log"), "wb")
    command = [routekit, "serve", "--store", store, "--port", str(port), "--log-level", "warning", "--tiles", archive,
               "--tiles-cache", os.path.join(work, "tiles-cache")]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    origin = f"http://127.0.0.1:{port}"
    wait_for(origin + "/healthz", process, 60, "routekit serve (see serve.log in the work folder)")
    config = wait_for(origin + "/web/map.json", process, 10, "routekit serve")
    if not config.get("tiles") or not config.get("leaflet"):
        raise Failed(f"the web view would draw no basemap: /web/map.json says {json.dumps(config)}")
    return process, origin


def peak_rss_mib(pid):
    """The peak resident set (VmHWM) of process `pid` in MiB, or None when /proc does not say."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def stop(process, seconds=10):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---- WebDriver (chromedriver over plain HTTP) ----------------------------------------------------------------------


class WebDriver:
    """The few W3C WebDriver commands (and chromedriver's DevTools one) the measurement uses."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        self.session = None

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, method=method, data=data,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return json.load(response).get("value")
        except urllib.error.HTTPError as error:
            try:
                value = json.load(error).get("value") or {}
            except ValueError:
                value = {}
            raise Failed(f"WebDriver {method} {path.split('/')[-1]}: {error.code} {value.get('error', '')}: "
                         f"{str(value.get('message', ''))[:400]}") from None

    def start(self, chromium):
        options = {
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                     "--enable-precise-memory-info"],
        }
        capabilities = {"browserName": "chrome", "goog:loggingPrefs": {"browser": "ALL"},
                        "goog:chromeOptions": options}
        self.session = self.call("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})["sessionId"]

    def path(self, tail):
        return f"/session/{self.session}{tail}"

    def js(self, source, *args):
        return self.call("POST", self.path("/execute/sync"), {"script": source, "args": list(args)})

    def cdp(self, command, params):
        return self.call("POST", self.path("/goog/cdp/execute"), {"cmd": command, "params": params})

    def element(self, css):
        return self.call("POST", self.path("/element"), {"using": "css selector", "value": css})[ELEMENT]

    def actions(self, source):
        self.call("POST", self.path("/actions"), {"actions": [source]})
        self.call("DELETE", self.path("/actions"))

    def poll(self, source, seconds):
        """Runs `source` until it returns something truthy, for up to `seconds`; that value, or None."""
        deadline = time.monotonic() + seconds
        while True:
            value = self.js(source)
            if value or time.monotonic() > deadline:
                return value or None
            time.sleep(0.05)

    def close(self):
        if self.session:
            try:
                self.call("DELETE", self.path(""))
            except (Failed, OSError):
                pass
            self.session = None


def start_chromedriver(chromedriver, work):
    port = free_port()
    log = open(os.path.join(work, "chromedriver.log"), "wb")
    process = subprocess.Popen([chromedriver, f"--port={port}"], stdout=log, stderr=subprocess.STDOUT)
    log.close()
    wait_for(f"http://127.0.0.1:{port}/status", process, 30, "chromedriver")
    return process, port


def stop_chromedriver(process, port):
    """chromedriver may ignore SIGTERM: `GET /shutdown`, up to 2 s to exit, then SIGKILL."""
    if process.poll() is None:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/shutdown", timeout=2).read()
        except OSError:
            pass
        try:
            process.wait(2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---- In the page ---------------------------------------------------------------------------------------------------

# Before the page's scripts: observers of long tasks and long animation frames (buffered: what came before counts).
OBSERVE = """
(() => {
  if (window.__webStall) return;
  const s = { longTasks: [], frames: [], marks: {}, steps: [], tileLoads: [], observed: [], errors: [] };
  window.__webStall = s;
  if (performance.setResourceTimingBufferSize) performance.setResourceTimingBufferSize(100000);
  const supported = (PerformanceObserver.supportedEntryTypes || []);
  const observe = (type, keep) => {
    if (!supported.includes(type)) { s.errors.push(`${type} entries are not supported by this browser`); return; }
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) keep(e); });
    observer.observe({ type, buffered: true });
    s.observed.push(type);
  };
  observe('longtask', (e) => s.longTasks.push({ start: e.startTime, duration: e.duration }));
  // A long frame's scripts of 5 ms or more say where its time went: which function, at which character of which file.
  const script = (x) => ({ ms: Math.round(x.duration), invoker: x.invoker, function: x.sourceFunctionName,
    at: `${x.sourceURL.replace(location.origin, '')}:${x.sourceCharPosition}` });
  observe('long-animation-frame', (e) => s.frames.push({ start: e.startTime, duration: e.duration,
    blocking: e.blockingDuration, render: e.renderStart ? e.startTime + e.duration - e.renderStart : 0,
    scripts: (e.scripts || []).filter((x) => x.duration >= 5).map(script) }));
})();
"""

# Once Leaflet is loaded and before a workout is opened: Leaflet's map as the page makes it, the times the tiles
# finish loading, the map's caption set (the route is on the map) and the next frame painted, the profiles drawn.
HOOK = """
const s = window.__webStall;
if (!s || !window.L || !window.L.Map) return false;
if (s.hooked) return true;
s.hooked = true;
s.leaflet = L.version;
L.Map.addInitHook(function () {
  s.map = this;
  this.on('layeradd', (e) => {
    if (e.layer instanceof L.TileLayer) e.layer.on('load', () => s.tileLoads.push(performance.now()));
  });
});
const caption = document.getElementById('map-caption');
new MutationObserver(() => {
  if (s.marks.caption != null || !caption.textContent) return;
  s.marks.caption = performance.now();
  requestAnimationFrame(() => setTimeout(() => { s.marks.drawn = performance.now(); }, 0));
}).observe(caption, { childList: true, characterData: true, subtree: true });
const status = document.getElementById('detail-status');
new MutationObserver(() => {
  if (s.marks.profiles == null && status.classList.contains('visually-hidden')) s.marks.profiles = performance.now();
}).observe(status, { attributes: true, attributeFilter: ['class'] });
return true;
"""

OPEN = """
const li = document.querySelector('#workouts li[data-workout]');
if (!li) return null;
window.__webStall.marks.click = performance.now();
li.querySelector('button').click();
return li.dataset.locations;
"""

ROUTE_ON_MAP = """
const s = window.__webStall;
let vertices = 0;
if (s.map) s.map.eachLayer((l) => {
  if (l instanceof L.Polyline && l.getLatLngs().length > vertices) { vertices = l.getLatLngs().length; s.route = l; }
});
return { vertices, zoom: s.map ? s.map.getZoom() : null, caption: document.getElementById('map-caption').textContent };
"""

HEAP = """
const m = performance.memory;
return m ? { usedMiB: m.usedJSHeapSize / 1048576, totalMiB: m.totalJSHeapSize / 1048576 } : null;
"""

RESULTS = """
const s = window.__webStall;
const resources = performance.getEntriesByType('resource').map((e) => ({ e, url: new URL(e.name) }));
const api = resources.filter(({ url }) => /^\\/v1\\/(routes|workouts)\\//.test(url.pathname)).map(({ e, url }) => ({
  request: url.pathname.replace(/[0-9A-Fa-f-]{36}/g, 'ID') + url.search, ms: e.duration, bytes: e.encodedBodySize }));
const tileEntries = resources.filter(({ url }) => url.pathname.startsWith('/tiles/')).map(({ e }) => e);
const tiles = { requests: tileEntries.length, notFound: tileEntries.filter((e) => e.responseStatus === 404).length };
return { longTasks: s.longTasks, frames: s.frames, marks: s.marks, steps: s.steps, tileLoads: s.tileLoads,
  observed: s.observed, errors: s.errors, leaflet: s.leaflet || null, api, tiles };
"""

# Pans and zooms through Leaflet's API: `m` the map, `line` the route's vertices on it.
MAP_STEPS = [
    ("zoom in 2 levels", "m.setZoom(m.getZoom() + 2)"),
    ("pan 400 px right, 250 px down", "m.panBy([400, 250])"),
    ("zoom 16 at the route's middle", "m.setView(line[line.length >> 1], 16)"),
    ("pan 500 px left, 300 px up", "m.panBy([-500, -300])"),
    ("zoom out 3 levels", "m.setZoom(m.getZoom() - 3)"),
    ("fly to the start at zoom 14", "m.flyTo(line[0], 14)"),
    ("fit the whole route", "m.fitBounds(s.route.getBounds(), { padding: [24, 24] })"),
]

WHEEL_EVENT = """
const el = document.getElementById('slippy');
const r = el.getBoundingClientRect();
el.dispatchEvent(new WheelEvent('wheel', { deltaY: arguments[0], deltaMode: 0, bubbles: true, cancelable: true,
  clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 }));
"""


def step(driver, name, action):
    """Marks the step's start in the page, does it, waits 1 s."""
    driver.js("window.__webStall.steps.push({ name: arguments[0], start: performance.now() });", name)
    action()
    time.sleep(1.0)


def map_step(driver, source):
    return lambda: driver.js(
        f"const s = window.__webStall; const m = s.map; const line = s.route.getLatLngs(); {source};")


def drag(driver, dx, dy):
    """A mouse drag from the middle of the map by (dx, dy) px, in 10 moves over 500 ms."""
    moves = [{"type": "pointerMove", "duration": 50, "origin": "pointer", "x": dx // 10, "y": dy // 10}] * 10
    driver.actions({"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
        {"type": "pointerMove", "duration": 0, "x": 0, "y": 0, "origin": {ELEMENT: driver.element("#slippy")}},
        {"type": "pointerDown", "button": 0}, *moves, {"type": "pointerUp", "button": 0}]})


def wheel(driver, delta, notes):
    """The scroll wheel over the middle of the map (WebDriver's wheel input; a dispatched WheelEvent without it)."""
    try:
        driver.actions({"type": "wheel", "id": "wheel", "actions": [
            {"type": "scroll", "x": 0, "y": 0, "deltaX": 0, "deltaY": delta, "duration": 100,
             "origin": {ELEMENT: driver.element("#slippy")}}]})
    except Failed as error:
        notes.append(f"wheel input refused ({error}); a WheelEvent was dispatched instead")
        driver.js(WHEEL_EVENT, delta)


def install_observers(driver, origin):
    """Navigates to the page with the observers installed before its scripts (or just after, buffered); how."""
    try:
        driver.cdp("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVE})
        how = "before the page's scripts (DevTools Page.addScriptToEvaluateOnNewDocument), buffered"
    except Failed:
        how = "just after navigation, buffered (DevTools refused the script before the page's)"
    driver.call("POST", driver.path("/url"), {"url": origin + "/"})
    driver.js(OBSERVE)
    if not driver.poll(HOOK, 30):
        raise Failed("Leaflet did not load in the page within 30 s")
    return how


def open_route(driver, token, notes):
    """Connects with the token, opens the workout, waits for the route on the map; what the page said."""
    driver.js("document.getElementById('token').value = arguments[0];"
              " document.getElementById('token-form').requestSubmit();", token)
    if not driver.poll("return document.querySelectorAll('#workouts li[data-workout]').length", 60):
        raise Failed("the workout list did not show within 60 s")
    listed = driver.js(OPEN)
    page_state = ("return [document.getElementById('detail-status').textContent,"
                  " document.getElementById('error').textContent]")
    if not driver.poll("return window.__webStall.marks.drawn != null", 600):
        raise Failed(f"the route was not drawn within 600 s; the page says {driver.js(page_state)}")
    heap = driver.js(HEAP)
    if not driver.poll("return window.__webStall.marks.profiles != null", 120):
        notes.append(f"the profiles were not drawn within 120 s: {driver.js(page_state)}")
    if not driver.poll("const s = window.__webStall; return s.tileLoads.some((t) => t > s.marks.click)", 60):
        notes.append("the map's tiles did not finish loading within 60 s of the click")
    on_map = driver.js(ROUTE_ON_MAP)
    return {"listedLocations": listed, "heap": heap, **on_map}


def pan_and_zoom(driver, notes):
    """The pans and zooms, 1 s after each: through Leaflet's API when its map was caught, then through input."""
    if driver.js("return !!(window.__webStall.map && window.__webStall.route)"):
        for name, source in MAP_STEPS:
            step(driver, name, map_step(driver, source))
    else:
        notes.append("Leaflet's map was not caught: no pans or zooms through its API, only through input")
    step(driver, "a mouse drag of (-300, -200) px", lambda: drag(driver, -300, -200))
    step(driver, "scroll wheel: zoom in", lambda: wheel(driver, -500, notes))
    step(driver, "scroll wheel: zoom out", lambda: wheel(driver, 500, notes))
    step(driver, "the zoom-in button", lambda: driver.call(
        "POST", driver.path(f"/element/{driver.element('#slippy .leaflet-control-zoom-in')}/click"), {}))


def browser_errors(driver):
    """The browser console's SEVERE messages (the first five, shortened) and how many there were."""
    try:
        log = driver.call("POST", driver.path("/se/log"), {"type": "browser"}) or []
    except Failed:
        return None
    severe = [entry.get("message", "")[:200] for entry in log if entry.get("level") == "SEVERE"]
    return {"count": len(severe), "first": severe[:5]}


# ---- The report ----------------------------------------------------------------------------------------------------


def phase(start, marks, steps):
    """What was going on at page time `start`: loading, opening the route, or a step of the pans and zooms."""
    bounds = [("page load, token, list", -math.inf)]
    if marks.get("click") is not None:
        bounds.append(("open the route (click to drawn, profiles, tiles)", marks["click"]))
    bounds += [(s["name"], s["start"]) for s in steps]
    return [name for name, begin in bounds if begin <= start][-1]


def by_phase(entries, marks, steps):
    """Long tasks (or frames) grouped by the phase each began in."""
    phases = {}
    for e in entries:
        phases.setdefault(phase(e["start"], marks, steps), []).append(round(e["duration"], 1))
    return {name: {"count": len(d), "longestMs": max(d), "durationsMs": d} for name, d in phases.items()}


def summary(entries, marks, steps):
    """Count, longest and every duration (a long task or frame is one over 50 ms), from the click on, by phase."""
    durations = [round(e["duration"], 1) for e in entries]
    click = marks.get("click", math.inf)
    after = [round(e["duration"], 1) for e in entries if e["start"] >= click]
    return {
        "count": len(durations),
        "longestMs": max(durations, default=0),
        "over50Ms": durations,
        "countFromTheClick": len(after),
        "longestFromTheClickMs": max(after, default=0),
        "byPhase": by_phase(entries, marks, steps),
    }


def since_click(marks, t):
    return None if t is None or marks.get("click") is None else round(t - marks["click"], 1)


def report(page, opened, heap_end, **rest):
    marks = page["marks"]
    frames = page["frames"]
    first_tiles = next((t for t in page["tileLoads"] if t > marks.get("click", math.inf)), None)
    return {
        "longTasks": summary(page["longTasks"], marks, page["steps"]),
        "longAnimationFrames": {
            **summary(frames, marks, page["steps"]),
            "longestBlockingMs": round(max((f["blocking"] for f in frames), default=0), 1),
            "frames": [frame_detail(f, marks, page["steps"]) for f in frames],
        },
        "openRoute": {
            "clickToRouteDrawnMs": since_click(marks, marks.get("drawn")),
            "clickToCaptionMs": since_click(marks, marks.get("caption")),
            "clickToProfilesDrawnMs": since_click(marks, marks.get("profiles")),
            "clickToTilesLoadedMs": since_click(marks, first_tiles),
            "routeVerticesOnMap": opened["vertices"],
            "zoomAfterFit": opened["zoom"],
            "mapCaption": opened["caption"],
            "workoutLocationsInList": opened["listedLocations"],
        },
        "requests": page["api"],
        "tileRequests": page["tiles"],
        "jsHeapMiB": {"routeDrawn": round_heap(opened["heap"]), "atEnd": round_heap(heap_end)},
        "steps": [s["name"] for s in page["steps"]],
        "observed": page["observed"],
        "marksMs": {k: round(v, 1) for k, v in marks.items()},
        **rest,
        "pageErrors": page["errors"],
    }


def frame_detail(frame, marks, steps):
    """A long animation frame: when, how long, its rendering's share, its scripts of 5 ms or more."""
    return {"phase": phase(frame["start"], marks, steps), "startMs": round(frame["start"], 1),
            "durationMs": round(frame["duration"], 1), "blockingMs": round(frame["blocking"], 1),
            "renderMs": round(frame["render"], 1), "scripts": frame["scripts"]}


def round_heap(heap):
    return None if heap is None else {k: round(v, 1) for k, v in heap.items()}


# ---- Main ----------------------------------------------------------------------------------------------------------


def prepare(args, routekit, work):
    """The route in a new store, a read token and the basemap archive; what they are."""
    gpx = route_file(args, work)
    points, bbox = route_bbox(gpx)
    store = os.path.join(work, "store.sqlite")
    started = time.monotonic()
    run([routekit, "import", "--no-progress", "--store", store, gpx])
    imported = time.monotonic() - started
    token = run([routekit, "tokens", "create", "--store", store, "--source", "web-stall", "--scope", "read",
                 "--name", "web-stall"]).split()[-1]
    archive = os.path.join(work, "basemap.mbtiles")
    tiles = write_mbtiles(archive, bbox, args.max_zoom, args.margin)
    route = {"file": gpx, "bytes": os.path.getsize(gpx), "points": points,
             "bbox": dict(zip(("south", "west", "north", "east"), (round(v, 6) for v in bbox))),
             "importSeconds": round(imported, 2)}
    return store, token, archive, route, tiles


def measure(args, tools, work):
    routekit, chromium, chromedriver = tools
    store, token, archive, route, tiles = prepare(args, routekit, work)
    load_before = os.getloadavg()
    serve = driver_process = None
    driver = None
    notes = []
    try:
        serve, origin = start_serve(routekit, store, archive, work)
        driver_process, driver_port = start_chromedriver(chromedriver, work)
        driver = WebDriver(driver_port)
        driver.start(chromium)
        how = install_observers(driver, origin)
        opened = open_route(driver, token, notes)
        pan_and_zoom(driver, notes)
        heap_end = driver.js(HEAP)
        page = driver.js(RESULTS)
        console = browser_errors(driver)
        server_peak = peak_rss_mib(serve.pid)
        load_after = os.getloadavg()
    finally:
        if driver:
            driver.close()
        if driver_process:
            stop_chromedriver(driver_process, driver_port)
        if serve:
            stop(serve)
    versions = {
        "chromium": version([chromium, "--version"]),
        "chromedriver": version([chromedriver, "--version"]),
        "leaflet": page["leaflet"],
        "routekit": version([routekit, "--version"]),
        "python": sys.version.split()[0],
    }
    machine = {"cores": os.cpu_count(), "loadAverageBefore": [round(v, 2) for v in load_before],
               "loadAverageAfter": [round(v, 2) for v in load_after]}
    return report(page, opened, heap_end, serverPeakRssMiB=server_peak, observers=how, route=route, basemap=tiles,
                  window=f"{WINDOW[0]}x{WINDOW[1]}", consoleErrors=console, machine=machine, versions=versions,
                  notes=notes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("routekit", nargs="?", default=os.path.join(ROOT, ".build-release/release/routekit"))
    parser.add_argument("--gpx", help="the route's GPX file; made with make_gpx.py when it does not exist")
    parser.add_argument("--points", type=int, default=1_000_000, help="points of a route made here")
    parser.add_argument("--seed", type=int, default=42, help="make_gpx.py's seed for a route made here")
    parser.add_argument("--max-zoom", type=int, default=16, help="the deepest zoom of the basemap's tiles")
    parser.add_argument("--margin", type=int, default=6, help="tiles beyond the route's bounding box, each side")
    parser.add_argument("--work", help="the folder of the store, archive and logs (default: a new one, removed)")
    args = parser.parse_args()
    try:
        tools = find_tools(args)
    except Missing as error:
        print(f"web-stall.py: missing: {error}", file=sys.stderr)
        return 2
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="routekit-web-stall-")
    os.makedirs(work, exist_ok=True)
    try:
        result = measure(args, tools, work)
    except (Failed, OSError, subprocess.CalledProcessError) as error:
        print(f"web-stall.py: {error} (logs in {work})", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
