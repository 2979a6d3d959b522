#!/usr/bin/env python3
"""Generate RouteKit's synthetic sample GPX routes.

    python3 scripts/make-sample-routes.py OUTDIR     (writes three GPX 1.1 files)

They are made up, not recorded, so they can be committed and shared freely, yet
they behave like real device exports, which is what the parser, the statistics
and the smoothing code need to meet:

  morning-run.gpx   45 min out-and-back run on the Lisbon riverside, 1 Hz, UTC
      "Z" times, heart rate + cadence (Garmin TrackPointExtension v1), 3-5 m
      GPS noise and two single-point spikes 150-250 m off (outliers to drop).
  lunch-ride.gpx    1.5 h ride from Richmond, London: two <trkseg> split by a
      10 min café stop (a time gap), local "+01:00" times with milliseconds and
      jitter, hr, cadence, air temperature and Garmin PowerExtension v1 power.
  evening-walk-with-waypoints.gpx   30 min walk in Edinburgh with standing
      stops, no extensions, full <metadata>, two <wpt>, a 10-point <rte>.

How: a "true" path is integrated second by second in local east/north metres
(the heading eases towards a slowly turning general direction, with corners;
speed comes from a small model per sport, for the ride a power/drag/gradient
balance). Elevation comes from a smooth synthetic terrain, so coming back to a
place comes back to its height. Recorded positions add GPS error like a real
receiver's: a slow AR(1) wander with sigma drifting between 3 and 5 m plus a
little jitter. Heart rate follows effort with a lag.

Deterministic (each file has its own seeded random.Random, fixed start times,
no wall clock): two runs give identical bytes. Python 3 standard library only.
"""
import math
import os
import random
import sys
from datetime import datetime, timedelta, timezone
from xml.sax.saxutils import escape

EARTH_R = 6371008.8  # mean Earth radius in metres
GARMIN = 'http://www.garmin.com/xmlschemas/'
NAMESPACES = {  # prefix -> (namespace, schema location)
    'gpxtpx': (GARMIN + 'TrackPointExtension/v1', GARMIN + 'TrackPointExtensionv1.xsd'),
    'pwr': (GARMIN + 'PowerExtension/v1', GARMIN + 'PowerExtensionv1.xsd'),
}


# ---------------------------------------------------------------- helpers
def clamp(v, lo, hi):
    return max(lo, min(hi, v))


def to_latlon(origin, x, y):
    """Local east/north metres around origin -> (lat, lon); fine for ~20 km."""
    lat0, lon0 = origin
    lat = lat0 + math.degrees(y / EARTH_R)
    lon = lon0 + math.degrees(x / (EARTH_R * math.cos(math.radians(lat0))))
    return lat, lon


def terrain(rng, base, waves):
    """Smooth height field h(x, y): base plus plane waves (amplitude, wavelength)."""
    parts = [(a, 2 * math.pi / wl, rng.uniform(0, 2 * math.pi), rng.uniform(0, 2 * math.pi))
             for a, wl in waves]
    def h(x, y):
        return base + sum(a * math.sin(k * (x * math.cos(d) + y * math.sin(d)) + ph)
                          for a, k, d, ph in parts)
    return h


def grade_ahead(h, x, y, heading, look=5.0):
    hx, hy = math.sin(math.radians(heading)), math.cos(math.radians(heading))
    return (h(x + look * hx, y + look * hy) - h(x, y)) / look


class Steering:
    """Heading (degrees from north) easing towards the caller's general direction
    plus an offset redrawn at random "corners": straight-ish streets and turns."""

    def __init__(self, rng, heading, spread, corner_every):
        self.rng, self.heading = rng, heading
        self.spread, self.p_corner, self.offset = spread, 1.0 / corner_every, 0.0

    def step(self, direction):
        if self.rng.random() < self.p_corner:
            self.offset = self.rng.uniform(-self.spread, self.spread)
        diff = (direction + self.offset - self.heading + 180) % 360 - 180
        self.heading += clamp(0.3 * diff, -25.0, 25.0) + self.rng.gauss(0, 1.5)
        return diff


class Ar1:
    """AR(1) process: each call returns the next value, marginal std dev `sigma`."""

    def __init__(self, rng, rho, sigma0):
        self.rng, self.rho, self.v = rng, rho, rng.gauss(0, sigma0)

    def __call__(self, sigma):
        self.v = self.rho * self.v + math.sqrt(1 - self.rho ** 2) * self.rng.gauss(0, sigma)
        return self.v


class GpsNoise:
    """Horizontal error per axis: a slow wander (sigma drifting between 3 and 5 m,
    about a minute and a half of memory) plus 0.35 m of second-to-second jitter."""

    def __init__(self, rng):
        self.rng, self.ex, self.ey = rng, Ar1(rng, 0.99, 4.0), Ar1(rng, 0.99, 4.0)
        self.phase, self.i = rng.uniform(0, 2 * math.pi), 0

    def __call__(self):
        s = 4.0 + math.sin(2 * math.pi * self.i / 1500 + self.phase)
        self.i += 1
        return (self.ex(s) + self.rng.gauss(0, 0.35), self.ey(s) + self.rng.gauss(0, 0.35))


def utc(dt):
    return dt.strftime('%Y-%m-%dT%H:%M:%SZ')


def header(*prefixes):
    """XML declaration and <gpx> start tag declaring the given extension prefixes."""
    ns = ''.join(f'\n     xmlns:{p}="{NAMESPACES[p][0]}"' for p in prefixes)
    loc = ''.join(f' {NAMESPACES[p][0]} {NAMESPACES[p][1]}' for p in prefixes)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<gpx version="1.1" creator="RouteKit make-sample-routes.py"\n'
            '     xmlns="http://www.topografix.com/GPX/1/1"\n'
            f'     xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"{ns}\n'
            '     xsi:schemaLocation="http://www.topografix.com/GPX/1/1 '
            f'http://www.topografix.com/GPX/1/1/gpx.xsd{loc}">\n')


# ---------------------------------------------------------------- the run
def morning_run():
    rng = random.Random(20250614_1)
    origin = (38.7057, -9.1456)          # Cais do Sodré, Lisbon
    start = datetime(2025, 6, 14, 6, 12, 0, tzinfo=timezone.utc)
    n, turn_at = 2700, 1350               # 45 min, turn round after half
    h = terrain(rng, 14.0, [(7.0, 3200), (3.0, 900)])
    steer, noise, ele_err = Steering(rng, 256, 25, 150), GpsNoise(rng), Ar1(rng, 0.98, 1.0)
    spikes = {rng.randrange(500, 1200): rng.uniform(150, 250),
              rng.randrange(1600, 2400): rng.uniform(150, 250)}
    light = rng.randrange(800, 1100)      # a red pedestrian light, ~20 s
    x = y = v = pace = 0.0
    hr, course, home = 92.0, 256.0, False
    out = [header('gpxtpx'),
           f' <metadata>\n  <name>Morning run</name>\n  <time>{utc(start)}</time>\n </metadata>\n',
           ' <trk>\n  <name>Morning run — Cais do Sodré → Belém and back</name>\n'
           '  <type>running</type>\n  <trkseg>\n']
    for t in range(n):
        if t >= turn_at and not home:     # head back to the start, run on once there
            course, home = math.degrees(math.atan2(-x, -y)), math.hypot(x, y) < 100
        diff = steer.step(course)
        g = grade_ahead(h, x, y, steer.heading)
        if t % 180 == 0:
            pace = rng.uniform(-0.2, 0.25)
        target = 2.5 + 0.6 * t / 300 if t < 300 else 3.1 + pace
        if t > n - 120:
            target = 2.3
        target *= clamp(1 - 4 * g, 0.7, 1.2) * (0.5 if abs(diff) > 60 else 1.0)
        if light <= t < light + 20:
            v = max(0.0, v - 1.0)
        else:
            v = max(0.0, v + 0.2 * (target - v) + rng.gauss(0, 0.05))
        x += v * math.sin(math.radians(steer.heading))
        y += v * math.cos(math.radians(steer.heading))
        hr += (clamp(60 + 28 * v + 250 * g, 80, 185) - hr) / 30
        ex, ey = noise()
        if t in spikes:                   # one bad fix, the next is fine again
            b = rng.uniform(0, 2 * math.pi)
            ex, ey = ex + spikes[t] * math.sin(b), ey + spikes[t] * math.cos(b)
        lat, lon = to_latlon(origin, x + ex, y + ey)
        cad = 0 if v < 0.5 else round(80 + 3 * v + rng.gauss(0, 1.2))
        out.append(f'   <trkpt lat="{lat:.7f}" lon="{lon:.7f}">\n'
                   f'    <ele>{h(x, y) + ele_err(1.0):.1f}</ele>\n'
                   f'    <time>{utc(start + timedelta(seconds=t))}</time>\n'
                   '    <extensions>\n     <gpxtpx:TrackPointExtension>\n'
                   f'      <gpxtpx:hr>{round(hr + rng.gauss(0, 0.7))}</gpxtpx:hr>\n'
                   f'      <gpxtpx:cad>{cad}</gpxtpx:cad>\n'
                   '     </gpxtpx:TrackPointExtension>\n    </extensions>\n   </trkpt>\n')
    out.append('  </trkseg>\n </trk>\n</gpx>\n')
    return ''.join(out), {'points': n, 'spike indices': sorted(spikes)}


# ---------------------------------------------------------------- the ride
def lunch_ride():
    rng = random.Random(20250614_2)
    origin = (51.4613, -0.3037)           # Richmond, London
    bst = timezone(timedelta(hours=1))
    start = datetime(2025, 6, 14, 12, 3, 7, 250000, tzinfo=bst)
    seg_len, cafe = (3000, 2400), 600     # seconds riding, seconds at the cafe
    total = sum(seg_len)
    h = terrain(rng, 55.0, [(25.0, 6000), (14.0, 2500), (6.0, 900)])
    steer, noise, ele_err = Steering(rng, 225, 45, 150), GpsNoise(rng), Ar1(rng, 0.98, 1.0)
    lights = [(400, 30), (1900, 35), (2975, 25), (3700, 25)]  # (moving second, length)
    m, crr, cda = 80.0, 0.005, 0.45
    x = y = v = 0.0
    hr, temp, watts = 88.0, 23.0, 0
    out = [header('gpxtpx', 'pwr'),
           f' <metadata>\n  <name>Lunch ride</name>\n'
           f'  <time>{start.isoformat(timespec="milliseconds")}</time>\n </metadata>\n',
           ' <trk>\n  <name>Lunch ride – out of Richmond, with a café stop</name>\n'
           '  <type>cycling</type>\n']
    clock = 0                             # seconds since start, café included
    for seg, length in enumerate(seg_len):
        out.append('  <trkseg>\n')
        if seg == 1:                      # sitting at the café: cool down, warm up in the sun
            for _ in range(cafe):
                hr += (75 - hr) / 60
                temp += (31 - temp) / 200
            clock += cafe
        for _ in range(length):
            moving = clock - (cafe if seg else 0)
            diff = steer.step(225 + 360 * moving / total)
            g = grade_ahead(h, x, y, steer.heading)
            stopped = any(s <= moving < s + d for s, d in lights) or moving >= total - 15
            if stopped:
                watts = 0
                v = max(0.0, v - 3.0)
            else:
                want = clamp(165 + 1500 * g, 0, 380)
                if g < -0.03 and v > 6 or rng.random() < 0.03:
                    want = 0              # coasting downhill, or a short freewheel
                noisy = want * rng.uniform(0.88, 1.12) + rng.gauss(0, 8)  # power meter noise
                watts = max(0, round(noisy)) if want else 0
                drive = 0.97 * watts / max(v, 2.0)
                drag = m * 9.81 * (g + crr) + 0.5 * 1.2 * cda * v * v
                v = clamp(v + (drive - drag) / m, 0.0, 15.0)
                if abs(diff) > 30:
                    v = min(v, 7.0)       # brake for the corner
            x += v * math.sin(math.radians(steer.heading))
            y += v * math.cos(math.radians(steer.heading))
            hr += (clamp(90 + 0.3 * watts, 90, 185) - hr) / 40
            temp += (22 + 3 * moving / total - temp) / 300
            ex, ey = noise()
            lat, lon = to_latlon(origin, x + ex, y + ey)
            ms = clock * 1000 + (rng.randint(-40, 40) if clock else 0)  # 1 Hz, logging jitter
            when = (start + timedelta(milliseconds=ms)).isoformat(timespec='milliseconds')
            cad = 0 if watts == 0 else round(88 - 150 * max(g, 0) + rng.gauss(0, 2))
            ele = h(x, y) + ele_err(1.0)  # one line per point keeps this file small
            out.append(f'   <trkpt lat="{lat:.7f}" lon="{lon:.7f}"><ele>{ele:.1f}</ele>'
                       f'<time>{when}</time><extensions><gpxtpx:TrackPointExtension>'
                       f'<gpxtpx:atemp>{round(temp)}</gpxtpx:atemp>'
                       f'<gpxtpx:hr>{round(hr)}</gpxtpx:hr>'
                       f'<gpxtpx:cad>{cad}</gpxtpx:cad></gpxtpx:TrackPointExtension>'
                       f'<pwr:PowerInWatts>{watts}</pwr:PowerInWatts></extensions></trkpt>\n')
            clock += 1
        out.append('  </trkseg>\n')
    out.append(' </trk>\n</gpx>\n')
    return ''.join(out), {'points': total, 'segments': list(seg_len)}


# ---------------------------------------------------------------- the walk
def evening_walk():
    rng = random.Random(20250614_3)
    origin = (55.9527, -3.1722)           # Holyrood, Edinburgh
    start = datetime(2025, 6, 14, 19, 40, 0, tzinfo=timezone.utc)
    n = 1800
    h = terrain(rng, 70.0, [(18.0, 1600), (6.0, 500)])
    steer, noise, ele_err = Steering(rng, 120, 40, 120), GpsNoise(rng), Ar1(rng, 0.98, 1.0)
    stops = [(430, 120, 'Viewpoint', 'Two minutes for the view over the city.', 'Scenic Area'),
             (1150, 45, 'Drinking fountain', 'Short stop for water & a chat.', 'Drinking Water'),
             (1520, 20, None, None, None)]
    x = y = v = 0.0
    pace, true_path, wpts, pts = 0.0, [], [], []
    for t in range(n):
        steer.step(120 + 360 * t / n)
        stop = next((s for s in stops if s[0] <= t < s[0] + s[1]), None)
        if t % 240 == 0:
            pace = rng.uniform(-0.15, 0.15)
        if stop:
            v = 0.0                       # standing still: only GPS noise moves
            if t == stop[0] and stop[2]:
                wpts.append((x, y, t, stop))
        else:
            g = grade_ahead(h, x, y, steer.heading)
            v = max(0.3, v + 0.3 * ((1.35 + pace) * clamp(1 - 3 * g, 0.6, 1.2) - v)
                    + rng.gauss(0, 0.04))
        x += v * math.sin(math.radians(steer.heading))
        y += v * math.cos(math.radians(steer.heading))
        true_path.append((x, y))
        ex, ey = noise()
        lat, lon = to_latlon(origin, x + ex, y + ey)
        pts.append(f'   <trkpt lat="{lat:.7f}" lon="{lon:.7f}">\n'
                   f'    <ele>{h(x, y) + ele_err(1.0):.1f}</ele>\n'
                   f'    <time>{utc(start + timedelta(seconds=t))}</time>\n   </trkpt>\n')
    out = [header(),
           ' <metadata>\n  <name>Evening walk with waypoints</name>\n'
           '  <desc>Synthetic evening walk round Holyrood Park, Edinburgh, with two waypoints '
           'and the planned route.</desc>\n'
           '  <author>\n   <name>RouteKit sample generator</name>\n  </author>\n'
           '  <link href="https://www.openstreetmap.org/#map=15/55.9500/-3.1650">\n'
           '   <text>Area on OpenStreetMap</text>\n  </link>\n'
           f'  <time>{utc(start)}</time>\n </metadata>\n']
    for x, y, t, (_, _, name, desc, sym) in wpts:
        lat, lon = to_latlon(origin, x, y)
        out.append(f' <wpt lat="{lat:.7f}" lon="{lon:.7f}">\n  <ele>{h(x, y):.1f}</ele>\n'
                   f'  <time>{utc(start + timedelta(seconds=t))}</time>\n'
                   f'  <name>{escape(name)}</name>\n  <desc>{escape(desc)}</desc>\n'
                   f'  <sym>{escape(sym)}</sym>\n </wpt>\n')
    out.append(' <rte>\n  <name>Planned: Holyrood loop</name>\n')
    for k in range(10):                   # the plan: ten turning points along the true path
        x, y = true_path[round(k * (n - 1) / 9)]
        x, y = x + rng.uniform(-15, 15), y + rng.uniform(-15, 15)
        lat, lon = to_latlon(origin, x, y)
        out.append(f'  <rtept lat="{lat:.7f}" lon="{lon:.7f}">\n   <ele>{h(x, y):.1f}</ele>\n'
                   f'   <name>RP{k + 1:02d}</name>\n  </rtept>\n')
    out.append(' </rte>\n <trk>\n  <name>Evening walk</name>\n  <type>walking</type>\n  <trkseg>\n')
    out += pts
    out.append('  </trkseg>\n </trk>\n</gpx>\n')
    return ''.join(out), {'points': n, 'waypoints': len(wpts), 'route points': 10}


def main(argv):
    if len(argv) != 2:
        sys.exit(f'usage: {argv[0]} OUTDIR')
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name, make in [('morning-run.gpx', morning_run), ('lunch-ride.gpx', lunch_ride),
                       ('evening-walk-with-waypoints.gpx', evening_walk)]:
        text, info = make()
        with open(os.path.join(outdir, name), 'w', encoding='utf-8', newline='\n') as f:
            f.write(text)
        print(name, ', '.join(f'{k}: {v}' for k, v in info.items()))


if __name__ == '__main__':
    main(sys.argv)
