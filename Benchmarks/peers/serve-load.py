#!/usr/bin/env python3
"""Load tests of `routekit serve`'s change feed, with the standard library only (asyncio sockets).

    serve-load.py follow     URL TOKEN [--followers 500] [--uploaders 4] [--uploads 25] [--also URL2]
    serve-load.py disconnect URL TOKEN [--followers 1000]
    serve-load.py slow       URL TOKEN [--changes 10000] [--rate 1024]
    serve-load.py catchup    URL TOKEN [--limit 5000]
    serve-load.py stalls     URL TOKEN --health ZIP --fit FIT --heavy-tokens FILE [--heavy 4] [--rounds 3]

follow      N followers tail the feed as Server-Sent Events while U clients upload small GPX files. Every follower
            must end with exactly the store's current routes (no gap, no repeat). Commit-to-delivery latency is
            measured per (follower, route) from the upload's answer (after its commit: a lower bound) and from the
            upload's request (an upper bound). With --also, a second server on the same store (PostgreSQL): the
            followers and the uploaders alternate between the two, so half of what each follower sees was uploaded
            to the other server.
disconnect  N followers connect, catch up, and drop their connections abruptly (TCP reset); prints how long the
            server takes to count 0 open streams (routekit_open_event_streams in /metrics, an admin token).
slow        one follower reads at RATE bytes/s while C changes are made through the route builder; prints the
            follower's progress (the server's memory is read by the caller from /proc).
catchup     pages through GET /v1/changes from no anchor with `limit`, and prints the time and routes read.
stalls      whether heavy uploads stall the server: HEAVY clients each upload the Apple Health export ZIP and HEAVY
            others the FIT file, ROUNDS times each (curl processes, so that sending them costs this process
            nothing), while GET /healthz is probed one request after another (a new connection each) and one SSE
            follower receives a one-change upload (a small GPX file) every 200 ms. Each heavy upload is made with a
            token of another source (--heavy-tokens: 2 * HEAVY * ROUNDS tokens), so that none is found stored.
            Prints the latency of the probes (request to answer) and of the small uploads (request to answer, and
            request to its SSE event): p50, p99, max, and how many took longer than 100 ms. The server needs
            --max-concurrent-imports above 2 * HEAVY.
"""
import argparse
import asyncio
import subprocess
import json
import random
import socket
import statistics
import struct
import sys
import time
import urllib.parse


def parse_url(url):
    u = urllib.parse.urlparse(url)
    return u.hostname, u.port or 80


async def request(host, port, method, path, token, body=b"", headers=None):
    """One HTTP/1.1 request on its own connection; returns (status, headers, body)."""
    reader, writer = await asyncio.open_connection(host, port)
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n"
    for k, v in (headers or {}).items():
        head += f"{k}: {v}\r\n"
    head += f"Content-Length: {len(body)}\r\n\r\n"
    writer.write(head.encode() + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    fields = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
    if fields.get("transfer-encoding") == "chunked":
        out, rest = b"", rest
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            out += rest[:size]
            rest = rest[size + 2:]
        rest = out
    return status, fields, rest


def gpx(i, points=50):
    pts = "".join(
        f'<trkpt lat="{-60 + (i % 100_000) * 0.001 + k * 0.00001:.6f}" lon="{7.0 + k * 0.00001:.6f}">'
        f"<time>2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}Z</time></trkpt>"
        for k in range(points))
    return (f'<?xml version="1.0"?><gpx version="1.1" creator="load" xmlns="http://www.topografix.com/GPX/1/1">'
            f"<trk><name>load {i}</name><trkseg>{pts}</trkseg></trk></gpx>").encode()


class Follower:
    def __init__(self, n):
        self.n = n
        self.routes = set()
        self.received = {}
        self.repeats = 0
        self.up_to_date = asyncio.Event()
        self.writer = None

    async def run(self, host, port, token, rate=None):
        reader, writer = await asyncio.open_connection(host, port)
        self.writer = writer
        writer.write((f"GET /v1/changes?limit=1000 HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
                      "Accept: text/event-stream\r\n\r\n").encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        first = head.split(b"\r\n")[0]
        if b" 200 " not in first:
            raise RuntimeError(f"follower {self.n}: {first!r}")
        buf = b""
        while True:
            if rate:
                chunk = await reader.read(min(rate, 1024))
                await asyncio.sleep(len(chunk) / rate)
            else:
                chunk = await reader.read(65536)
            if not chunk:
                return
            buf += chunk
            # Chunked transfer encoding: strip the size lines (events never contain CRLF).
            while True:
                i = buf.find(b"\r\n")
                if i < 0:
                    break
                line = buf[:i]
                try:
                    size = int(line, 16)
                except ValueError:
                    break
                if len(buf) < i + 2 + size + 2:
                    break
                self.feed(buf[i + 2:i + 2 + size])
                buf = buf[i + 2 + size + 2:]

    pending = b""

    def feed(self, data):
        self.pending += data
        while b"\n\n" in self.pending:
            block, self.pending = self.pending.split(b"\n\n", 1)
            event, payload = None, None
            for line in block.split(b"\n"):
                if line.startswith(b"event: "):
                    event = line[7:].decode()
                elif line.startswith(b"data: "):
                    payload = line[6:]
            if event == "changes":
                now = time.monotonic()
                body = json.loads(payload)
                for d in body["deleted"]:
                    self.routes.discard(d["uuid"])
                for a in body["added"]:
                    if a["uuid"] in self.routes:
                        self.repeats += 1
                    self.routes.add(a["uuid"])
                    self.received.setdefault(a["uuid"], now)
            elif event == "up-to-date":
                self.up_to_date.set()

    def abort(self):
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        self.writer.transport.abort()


async def current_routes(host, port, token):
    status, _, body = await request(host, port, "GET", "/v1/routes?limit=5000", token)
    assert status == 200, status
    return {r["uuid"] for r in json.loads(body)["routes"]}


async def follow(args):
    host, port = parse_url(args.url)
    servers = [(host, port)] + ([parse_url(args.also)] if args.also else [])
    followers = [Follower(i) for i in range(args.followers)]
    tasks = [asyncio.create_task(f.run(*servers[i % len(servers)], args.token)) for i, f in enumerate(followers)]
    await asyncio.wait_for(asyncio.gather(*(f.up_to_date.wait() for f in followers)), 120)
    print(f"{len(followers)} followers caught up")
    sent = {}
    base = random.randrange(1_000_000_000)

    async def uploader(u):
        for k in range(args.uploads):
            i = base + u * 10_000 + k
            t0 = time.monotonic()
            to = servers[(u + k) % len(servers)]
            status, _, body = await request(*to, "POST", f"/v1/uploads?name=l{i}.gpx", args.token, gpx(i))
            t1 = time.monotonic()
            assert status in (200, 201), (status, body[:200])
            for r in json.loads(body)["results"][0]["routes"]:
                sent[r["route"]] = (t0, t1)

    started = time.monotonic()
    await asyncio.gather(*(uploader(u) for u in range(args.uploaders)))
    upload_time = time.monotonic() - started
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(set(sent) <= f.routes for f in followers):
        await asyncio.sleep(0.05)
    store = await current_routes(host, port, args.token)
    for t in tasks:
        t.cancel()
    missing = sum(len(store - f.routes) for f in followers)
    extra = sum(len(f.routes - store) for f in followers)
    repeats = sum(f.repeats for f in followers)
    low, high = [], []
    for f in followers:
        for uuid, (t0, t1) in sent.items():
            if uuid in f.received:
                low.append(max(0.0, f.received[uuid] - t1))
                high.append(f.received[uuid] - t0)
    q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))] * 1000 if xs else float("nan")
    print(f"{len(sent)} uploads by {args.uploaders} clients to {len(servers)} server(s) in {upload_time:.2f} s; "
          f"store has {len(store)} routes")
    print(f"followers: {missing} missing, {extra} extra, {repeats} repeated (over {len(followers)} followers)")
    print(f"commit-to-delivery ms over {len(low)} deliveries: from the upload's answer p50 {q(low, .5):.1f} "
          f"p99 {q(low, .99):.1f} max {q(low, 1):.1f}; from its request p50 {q(high, .5):.1f} "
          f"p99 {q(high, .99):.1f}")
    return 0 if missing == 0 and extra == 0 and repeats == 0 else 1


async def open_streams(host, port, token):
    status, _, body = await request(host, port, "GET", "/metrics", token)
    for line in body.decode().splitlines():
        if line.startswith("routekit_open_event_streams "):
            return float(line.split()[1])
    return float("nan")


async def disconnect(args):
    host, port = parse_url(args.url)
    followers = [Follower(i) for i in range(args.followers)]
    tasks = [asyncio.create_task(f.run(host, port, args.token)) for f in followers]
    await asyncio.wait_for(asyncio.gather(*(f.up_to_date.wait() for f in followers)), 120)
    print(f"{len(followers)} followers connected; the server counts {await open_streams(host, port, args.admin)}")
    started = time.monotonic()
    for f in followers:
        f.abort()
    for t in tasks:
        t.cancel()
    while (n := await open_streams(host, port, args.admin)) > 0 and time.monotonic() - started < 30:
        await asyncio.sleep(0.05)
    print(f"after the resets: {n:.0f} open streams, {time.monotonic() - started:.2f} s to get there")
    return 0 if n == 0 else 1


async def slow(args):
    host, port = parse_url(args.url)
    f = Follower(0)
    task = asyncio.create_task(f.run(host, port, args.token, rate=args.rate))
    await asyncio.wait_for(f.up_to_date.wait(), 120)
    started = time.monotonic()
    for k in range(args.changes):
        status, _, body = await request(host, port, "POST", "/v1/builders", args.token)
        b = json.loads(body)["id"]
        loc = json.dumps([{"latitude": 46 + k * 1e-5, "longitude": 7, "time": "2024-01-01T00:00:00Z"}]).encode()
        await request(host, port, "POST", f"/v1/builders/{b}/locations?first=0", args.token, loc)
        fin = json.dumps({"syncIdentifier": "slow-reader", "syncVersion": k + 1}).encode()
        status, _, body = await request(host, port, "POST", f"/v1/builders/{b}/finish", args.token, fin)
        assert status == 201, (status, body[:200])
    print(f"{args.changes} versions of one route committed in {time.monotonic() - started:.1f} s; "
          f"the slow follower has read {len(f.received)} additions so far")
    task.cancel()
    return 0


async def catchup(args):
    host, port = parse_url(args.url)
    started = time.monotonic()
    anchor, routes, pages = None, 0, 0
    while True:
        path = f"/v1/changes?limit={args.limit}" + (f"&anchor={anchor}" if anchor else "")
        status, _, body = await request(host, port, "GET", path, args.token)
        assert status == 200, (status, body[:200])
        page = json.loads(body)
        routes += len(page["added"])
        pages += 1
        anchor = page["anchor"]
        if not page["hasMore"]:
            break
    print(f"catch-up: {routes} routes in {pages} pages of {args.limit} in {time.monotonic() - started:.2f} s")
    return 0


async def stalls(args):
    host, port = parse_url(args.url)
    f = Follower(0)
    follower = asyncio.create_task(f.run(host, port, args.token))
    await asyncio.wait_for(f.up_to_date.wait(), 120)
    done = asyncio.Event()

    # Each heavy upload as another source (a token of its own, --heavy-tokens): the same file again under one source
    # would be found stored (`unchanged`) and cost far less.
    tokens = open(args.heavy_tokens).read().split() if args.heavy_tokens else []
    if len(tokens) < 2 * args.heavy * args.rounds:
        raise SystemExit(f"stalls needs {2 * args.heavy * args.rounds} tokens of distinct sources in --heavy-tokens")

    async def heavy(path, name, n):
        for r in range(args.rounds):
            token = tokens.pop()
            proc = await asyncio.create_subprocess_exec(
                "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", f"Authorization: Bearer {token}",
                "-H", "Expect:", "-X", "POST", "-T", path, f"{args.url}/v1/uploads?name={name}",
                stdout=subprocess.PIPE)
            out, _ = await proc.communicate()
            if out.decode() not in ("200", "201"):
                raise RuntimeError(f"heavy upload {name} #{n}.{r} answered {out.decode()}")

    async def probe(latencies):
        while not done.is_set():
            t0 = time.monotonic()
            status, _, _ = await request(host, port, "GET", "/healthz", args.token)
            latencies.append(time.monotonic() - t0)
            assert status == 200, status
            await asyncio.sleep(0.01)

    sent = {}

    async def one_change():
        base = random.randrange(1_000_000_000)
        k = 0
        while not done.is_set():
            i = base + k
            k += 1
            t0 = time.monotonic()
            status, _, body = await request(host, port, "POST", f"/v1/uploads?name=s{i}.gpx", args.token, gpx(i, 20))
            t1 = time.monotonic()
            assert status in (200, 201), (status, body[:200])
            for r in json.loads(body)["results"][0]["routes"]:
                sent[r["route"]] = (t0, t1)
            await asyncio.sleep(0.2)

    probes = []
    started = time.monotonic()
    side = [asyncio.create_task(probe(probes)), asyncio.create_task(one_change())]
    await asyncio.gather(*([heavy(args.health, f"export{n}.zip", n) for n in range(args.heavy)]
                           + [heavy(args.fit, f"big{n}.fit", n) for n in range(args.heavy)]))
    done.set()
    await asyncio.gather(*side)
    took = time.monotonic() - started
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not set(sent) <= f.routes:
        await asyncio.sleep(0.05)
    follower.cancel()
    deliveries = [f.received[u] - t0 for u, (t0, _) in sent.items() if u in f.received]
    answers = [t1 - t0 for (t0, t1) in sent.values()]
    missing = len([u for u in sent if u not in f.received])

    def line(name, xs):
        xs = sorted(x * 1000 for x in xs)
        q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")
        slow = len([x for x in xs if x > 100])
        print(f"{name}: {len(xs)}, p50 {q(.5):.1f} ms, p99 {q(.99):.1f} ms, max {q(1):.1f} ms, over 100 ms: {slow}")
    print(f"{args.heavy} Health + {args.heavy} FIT clients, {args.rounds} uploads each, in {took:.1f} s")
    line("GET /healthz", probes)
    line("one-change uploads, request to answer", answers)
    line("one-change uploads, request to SSE event", deliveries)
    print(f"deliveries missing: {missing}")
    return 0 if missing == 0 else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["follow", "disconnect", "slow", "catchup", "stalls"])
    p.add_argument("url")
    p.add_argument("token")
    p.add_argument("--admin", help="an admin token (disconnect reads /metrics)")
    p.add_argument("--followers", type=int, default=500)
    p.add_argument("--uploaders", type=int, default=4)
    p.add_argument("--uploads", type=int, default=25)
    p.add_argument("--changes", type=int, default=10000)
    p.add_argument("--rate", type=int, default=1024)
    p.add_argument("--limit", type=int, default=5000)
    p.add_argument("--health", help="stalls: an Apple Health export.zip")
    p.add_argument("--fit", help="stalls: a FIT file")
    p.add_argument("--heavy", type=int, default=4)
    p.add_argument("--heavy-tokens", help="stalls: a file of tokens, one per heavy upload, each of its own source")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--also", help="follow: a second server on the same store; followers and uploads alternate")
    args = p.parse_args()
    sys.exit(asyncio.run({"follow": follow, "disconnect": disconnect, "slow": slow, "catchup": catchup,
                             "stalls": stalls}[args.mode](args)))


if __name__ == "__main__":
    main()
