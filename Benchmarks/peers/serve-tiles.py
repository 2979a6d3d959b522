#!/usr/bin/env python3
"""Tiles from `routekit serve --tiles`'s cache under load, with the standard library only.

    serve-tiles.py [ROUTEKIT] [--rate 200] [--seconds 20] [--connections 16] [--mbtiles]

A tile server of its own on 127.0.0.1 (PNG tiles made here, `Cache-Control: max-age=86400`), `routekit serve` on a
new store with `--tiles` pointing at it and a cache folder of its own; every tile of a 16 x 16 block at zoom 12 is
asked for once (the cache fills), then tiles of that block are asked for at RATE requests a second for SECONDS
(open loop: each request is sent at its time, over CONNECTIONS kept-alive connections), and the time from sending
each request to reading its whole answer is measured. Prints p50, p99 and the maximum, the tile server's requests
during the load (0: every tile came from the cache), and fails (exit 1) when p99 is above 5 ms or a request failed.
With --mbtiles the tiles come from an MBTiles archive instead (written here with sqlite3).

ROUTEKIT: a routekit built with the Server trait, default .build-release/release/routekit
(swift build -c release --traits Server --product routekit --scratch-path .build-release).
"""
import argparse
import asyncio
import http.server
import os
import random
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
Z, X0, Y0, SIDE = 12, 1940, 1565, 16


def png(r, g, b):
    raw = b"".join(b"\x00" + bytes([r, g, b]) * 256 for _ in range(256))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def tile_png(x, y):
    return png(60 + (x * 37) % 180, 90 + (y * 53) % 150, 120)


class Upstream(http.server.BaseHTTPRequestHandler):
    count = 0
    lock = threading.Lock()
    cache = {}

    def log_message(self, *args):
        pass

    def do_GET(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        try:
            z, x, y = int(parts[0]), int(parts[1]), int(parts[2].split(".")[0])
        except (ValueError, IndexError):
            self.send_error(404)
            return
        with Upstream.lock:
            Upstream.count += 1
            body = Upstream.cache.get((z, x, y))
            if body is None:
                body = Upstream.cache[(z, x, y)] = tile_png(x, y)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=86400")
        self.end_headers()
        self.wfile.write(body)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def write_mbtiles(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
    db.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
    db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [("format", "png"), ("minzoom", "0"), ("maxzoom", "14")])
    for x in range(X0, X0 + SIDE):
        for y in range(Y0, Y0 + SIDE):
            db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (Z, x, (1 << Z) - 1 - y, tile_png(x, y)))
    db.commit()
    db.close()


async def get(reader, writer, path):
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)
    return status


async def load(port, rate, seconds, connections):
    pool = asyncio.Queue()
    for _ in range(connections):
        pool.put_nowait(await asyncio.open_connection("127.0.0.1", port))
    latencies, failures = [], []
    loop = asyncio.get_running_loop()

    async def one(path):
        reader, writer = await pool.get()
        started = time.perf_counter()
        try:
            status = await get(reader, writer, path)
            latencies.append((time.perf_counter() - started) * 1000)
            if status != 200:
                failures.append(status)
        except Exception as error:  # noqa: BLE001 - counted and reported
            failures.append(repr(error))
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        pool.put_nowait((reader, writer))

    tasks = []
    start = loop.time()
    for k in range(int(rate * seconds)):
        delay = start + k / rate - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        x, y = X0 + random.randrange(SIDE), Y0 + random.randrange(SIDE)
        tasks.append(asyncio.create_task(one(f"/tiles/{Z}/{x}/{y}")))
    await asyncio.gather(*tasks)
    while not pool.empty():
        _, writer = pool.get_nowait()
        writer.close()
    return latencies, failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("routekit", nargs="?", default=os.path.join(ROOT, ".build-release/release/routekit"))
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--mbtiles", action="store_true")
    args = parser.parse_args()
    if not os.access(args.routekit, os.X_OK):
        sys.exit(f"no executable {args.routekit} (see the comment at the top)")
    work = tempfile.mkdtemp(prefix="routekit-tiles-")
    if args.mbtiles:
        source = os.path.join(work, "tiles.mbtiles")
        write_mbtiles(source)
    else:
        upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
        threading.Thread(target=upstream.serve_forever, daemon=True).start()
        source = f"http://127.0.0.1:{upstream.server_address[1]}/{{z}}/{{x}}/{{y}}.png"
    port = free_port()
    serve = subprocess.Popen(
        [args.routekit, "serve", "--store", os.path.join(work, "s.sqlite"), "--port", str(port), "--log-level",
         "warning", "--tiles", source, "--tiles-attribution", "bench", "--tiles-cache", os.path.join(work, "cache")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        for x in range(X0, X0 + SIDE):
            for y in range(Y0, Y0 + SIDE):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/tiles/{Z}/{x}/{y}", timeout=10).read()
        before = Upstream.count
        latencies, failures = asyncio.run(load(port, args.rate, args.seconds, args.connections))
        latencies.sort()
        pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]  # noqa: E731
        p99 = pick(0.99)
        print(f"{'mbtiles' if args.mbtiles else 'cache'}: {len(latencies)} tiles at {args.rate:g}/s over "
              f"{args.connections} connections: p50 {pick(0.5):.2f} ms, p99 {p99:.2f} ms, max {latencies[-1]:.2f} ms; "
              f"failures {len(failures)}; tile server asked {Upstream.count - before} times during the load")
        sys.exit(0 if p99 <= 5 and not failures else 1)
    finally:
        serve.terminate()
        serve.wait()


if __name__ == "__main__":
    main()
