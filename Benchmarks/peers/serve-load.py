#!/usr/bin/env python3
"""Load tests of `routekit serve`'s change feed, with the standard library only (asyncio sockets).

    serve-load.py follow     URL TOKEN [--followers 500] [--uploaders 4] [--uploads 25] [--also URL2]
    serve-load.py disconnect URL TOKEN [--followers 1000]
    serve-load.py slow       URL TOKEN [--changes 10000] [--rate 1024]
    serve-load.py catchup    URL TOKEN [--limit 5000]
    serve-load.py stalls     URL TOKEN --health ZIP --fit FIT --heavy-tokens FILE [--heavy 4] [--rounds 3]
    serve-load.py people     URL ADMIN_TOKEN [--people 1000] [--followers 5000] [--rate 50] [--seconds 60]
                             [--pid SERVER_PID]... [--second-server URL2]

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
people      fan-out by person (issue 28): with the admin token, makes PEOPLE people and a read,write token for each
            (the admin API, 32 requests at a time), opens FOLLOWERS SSE followers spread round-robin over the people
            and waits until each has its first `up-to-date`; then uploads RATE small GPX files a second for SECONDS
            seconds, each to a random person with that person's token (open loop: an upload starts on schedule
            whatever the earlier ones are doing; 429 and 503 are retried after Retry-After, up to 5 times). Every
            follower must receive exactly its person's uploads: 0 missing, 0 extra (another person's routes, or
            any deletion), 0 repeated. Prints the upload's answer latency, commit-to-delivery latency from the
            upload's answer (after its commit: a lower bound, deliveries that beat the answer count 0) and from its
            request (an upper bound), p50/p99/max over every (follower, route), and with --pid the server's VmRSS
            and VmHWM (its peak) from /proc, idle, with the followers connected, and at the end; then one JSON line
            of every figure. With --second-server (a second server on the same PostgreSQL store), each person's
            followers alternate between the two servers, and so do the uploads. The server needs
            --max-streams-per-token of at least FOLLOWERS / PEOPLE (serve-people.sh starts one suitably). Exits 1
            when anything is missing, extra or repeated, an upload failed, or a follower lost its stream.
"""
import argparse
import asyncio
import subprocess
import json
import random
import re
import resource
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


class PersonFollower(Follower):
    """A follower of one person's feed: every route it is sent, with the time the first copy arrived."""

    def __init__(self, n, person):
        super().__init__(n)
        self.person = person
        self.deleted = 0
        self.ended = False  # the server ended the stream
        self.failure = None  # why the stream could not be opened or broke
        self.events = []  # `error` or `shutdown` events

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
                self.deleted += len(body["deleted"])
                for a in body["added"]:
                    if a["uuid"] in self.received:
                        self.repeats += 1
                    else:
                        self.received[a["uuid"]] = now
            elif event == "up-to-date":
                self.up_to_date.set()
            elif event in ("error", "shutdown"):
                self.events.append(event)

    async def serve(self, host, port, token, gate):
        """Follows until cancelled; `gate` is held from the connection until the first `up-to-date` (or a failure),
        so that only so many streams are being opened at once."""
        await gate.acquire()
        held = True
        inner = asyncio.create_task(self.run(host, port, token))
        ready = asyncio.create_task(self.up_to_date.wait())
        try:
            await asyncio.wait({inner, ready}, return_when=asyncio.FIRST_COMPLETED)
            gate.release()
            held = False
            await inner
            self.ended = True
        except asyncio.CancelledError:
            inner.cancel()
            raise
        except Exception as e:  # a refused or broken connection, or a status other than 200
            self.failure = re.sub(r"follower \d+: ", "", f"{type(e).__name__}: {e}")
        finally:
            ready.cancel()
            if held:
                gate.release()

    def close(self):
        if self.writer is not None:
            self.writer.transport.abort()


def process_memory(pids):
    """VmRSS and VmHWM (the peak) of each process, in KiB (None for a process that is gone)."""
    out = {}
    for pid in pids:
        figures = {}
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key in ("VmRSS", "VmHWM"):
                        figures[key] = int(value.split()[0])
        except OSError:
            figures = None
        out[pid] = figures
    return out


def raise_open_files(wanted):
    """Raises this process's soft RLIMIT_NOFILE to its hard limit; warns when that is below `wanted`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    elif hard == resource.RLIM_INFINITY and soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        soft = wanted
    if soft != resource.RLIM_INFINITY and soft < wanted:
        print(f"warning: at most {soft} open files (the hard limit), and this run needs about {wanted}",
              file=sys.stderr)


def milliseconds(xs):
    """p50, p99 and max of `xs` (seconds), in milliseconds rounded to 0.1; None for no values."""
    if not xs:
        return {"p50": None, "p99": None, "max": None}
    xs = sorted(xs)
    q = lambda p: round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1000, 1)
    return {"p50": q(.5), "p99": q(.99), "max": q(1)}


def ms_text(figures):
    f = lambda v: "n/a" if v is None else f"{v:.1f}"
    return f"p50 {f(figures['p50'])} p99 {f(figures['p99'])} max {f(figures['max'])}"


async def make_people(host, port, admin, count, run):
    """`count` people, each with a read,write token of source `load`, made through the admin API 32 at a time;
    returns [(person id, token)]."""
    gate = asyncio.Semaphore(32)
    made = [None] * count
    json_header = {"Content-Type": "application/json"}

    async def one(k):
        async with gate:
            body = json.dumps({"name": f"load {run} {k}"}).encode()
            status, _, answer = await request(host, port, "POST", "/v1/people", admin, body, json_header)
            if status != 201:
                raise RuntimeError(f"POST /v1/people answered {status}: {answer[:300]!r}")
            person = json.loads(answer)["id"]
            body = json.dumps({"source": "load", "scopes": ["read", "write"]}).encode()
            status, _, answer = await request(host, port, "POST", f"/v1/people/{person}/tokens", admin, body,
                                              json_header)
            if status != 201:
                raise RuntimeError(f"POST /v1/people/{person}/tokens answered {status}: {answer[:300]!r}")
            made[k] = (person, json.loads(answer)["token"])

    await asyncio.gather(*(one(k) for k in range(count)))
    return made


async def people(args):
    servers = [parse_url(args.url)] + ([parse_url(args.second_server)] if args.second_server else [])
    pids = args.pid or []
    n_people, n_followers, rate, seconds = args.people, args.followers, args.rate, args.seconds
    if n_people < 1 or n_followers < 1 or rate < 1 or seconds <= 0:
        raise SystemExit("people: --people, --followers and --rate must be at least 1, --seconds above 0")
    raise_open_files(n_followers + 2 * rate * 10 + 1024)
    log = lambda text: print(text, file=sys.stderr, flush=True)
    memory = {"idle": process_memory(pids)}
    run = random.randrange(1_000_000_000)

    # 1. People and their tokens.
    started = time.monotonic()
    try:
        made = await make_people(*servers[0], args.token, n_people, run)
    except (RuntimeError, OSError) as e:
        print(f"serve-load.py people: {e}", file=sys.stderr)
        return 2
    tokens = [token for _, token in made]
    setup_people = time.monotonic() - started
    log(f"{n_people} people and their tokens made in {setup_people:.1f} s")

    # 2. Followers: follower n follows person n % PEOPLE; a person's k-th follower is on server k % SERVERS.
    started = time.monotonic()
    gate = asyncio.Semaphore(128)
    followers = [PersonFollower(n, n % n_people) for n in range(n_followers)]
    tasks = [asyncio.create_task(f.serve(*servers[(n // n_people) % len(servers)], tokens[f.person], gate))
             for n, f in enumerate(followers)]
    deadline = started + max(120, n_followers / 20)
    shown = started
    while True:
        ready = sum(1 for f in followers if f.up_to_date.is_set())
        broken = sum(1 for f in followers if not f.up_to_date.is_set() and (f.failure or f.ended))
        if ready + broken == n_followers or time.monotonic() > deadline:
            break
        if time.monotonic() - shown > 5:
            shown = time.monotonic()
            log(f"  {ready} of {n_followers} followers up to date")
        await asyncio.sleep(0.1)
    followers_ready = time.monotonic() - started

    async def stop():
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for f in followers:
            f.close()

    if ready < n_followers:
        why = {}
        for f in followers:
            if not f.up_to_date.is_set():
                reason = f.failure or ("the server ended the stream" if f.ended else "no up-to-date in time")
                why[reason] = why.get(reason, 0) + 1
        print(f"only {ready} of {n_followers} followers got their first up-to-date in {followers_ready:.1f} s:",
              file=sys.stderr)
        for reason, count in sorted(why.items(), key=lambda kv: -kv[1])[:5]:
            print(f"  {count} × {reason}", file=sys.stderr)
        await stop()
        return 1
    log(f"{n_followers} followers up to date in {followers_ready:.1f} s")
    memory["connected"] = process_memory(pids)

    # 3. Uploads, open loop: upload k starts at k / RATE seconds, to a random person, on server k % SERVERS.
    uploads = []
    rng = random.Random()
    base = random.randrange(1_000_000_000)

    async def upload(k, person):
        host, port = servers[k % len(servers)]
        i = base + k
        record = {"person": person, "routes": [], "t0": time.monotonic(), "t1": None, "status": None,
                  "retries": 0, "unchanged": 0, "error": None}
        body = gpx(i, 20)
        for attempt in range(6):
            try:
                status, fields, answer = await asyncio.wait_for(
                    request(host, port, "POST", f"/v1/uploads?name=p{i}.gpx", tokens[person], body), 60)
            except Exception as e:  # refused, reset, timed out, or an answer that is not HTTP
                record["error"] = type(e).__name__
                break
            record["status"] = status
            if status in (429, 503) and attempt < 5:
                record["retries"] += 1
                try:
                    wait = float(fields.get("retry-after", "1"))
                except ValueError:
                    wait = 1.0
                await asyncio.sleep(min(max(wait, 0.05), 2.0))
                continue
            break
        record["t1"] = time.monotonic()
        if record["error"] is None and record["status"] in (200, 201):
            try:
                for result in json.loads(answer)["results"]:
                    if result.get("status") == "unchanged":
                        record["unchanged"] += 1
                        continue
                    record["routes"].extend(r["route"] for r in result["routes"] if r.get("route"))
            except (ValueError, KeyError, TypeError):
                record["error"] = "an answer without results"
        elif record["error"] is None:
            record["error"] = f"status {record['status']}"
        uploads.append(record)

    total = int(rate * seconds)
    upload_tasks = []
    lag = 0.0
    started = time.monotonic()
    for k in range(total):
        due = started + k / rate
        wait = due - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        lag = max(lag, time.monotonic() - due)
        upload_tasks.append(asyncio.create_task(upload(k, rng.randrange(n_people))))
    send_span = time.monotonic() - started
    await asyncio.gather(*upload_tasks)
    upload_span = time.monotonic() - started
    log(f"{total} uploads started over {send_span:.1f} s, all answered after {upload_span:.1f} s")

    # 4. Deliveries: wait up to 10 s after the last answer for every follower to have its person's routes, then 1 s
    # more for anything extra or repeated.
    expected = [set() for _ in range(n_people)]
    answered, requested = {}, {}
    for u in uploads:
        if u["error"] is None:
            expected[u["person"]].update(u["routes"])
            for route in u["routes"]:
                answered[route], requested[route] = u["t1"], u["t0"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(expected[f.person].issubset(f.received) for f in followers):
        await asyncio.sleep(0.1)
    await asyncio.sleep(1)
    memory["end"] = process_memory(pids)

    missing = extra = repeated = deleted = lost = early = 0
    from_answer, from_request = [], []
    for f in followers:
        mine = expected[f.person]
        missing += len(mine.difference(f.received))
        extra += len(set(f.received).difference(mine))
        deleted += f.deleted
        repeated += f.repeats
        if f.failure or f.ended or f.events:
            lost += 1
        for route in mine:
            arrived = f.received.get(route)
            if arrived is None:
                continue
            if arrived < answered[route]:
                early += 1
            from_answer.append(max(0.0, arrived - answered[route]))
            from_request.append(arrived - requested[route])
    await stop()

    failed = [u for u in uploads if u["error"] is not None]
    failures = {}
    for u in failed:
        failures[u["error"]] = failures.get(u["error"], 0) + 1
    answer_ms = milliseconds([u["t1"] - u["t0"] for u in uploads if u["error"] is None])
    delivery_answer = milliseconds(from_answer)
    delivery_request = milliseconds(from_request)
    routes = sum(len(e) for e in expected)
    expected_deliveries = sum(len(expected[f.person]) for f in followers)

    def mib(pid, phase, key):
        figures = memory.get(phase, {}).get(pid)
        return round(figures[key] / 1024, 1) if figures and key in figures else None

    rss = [{"pid": pid, "rss_mib_idle": mib(pid, "idle", "VmRSS"), "rss_mib_connected": mib(pid, "connected", "VmRSS"),
            "rss_mib_end": mib(pid, "end", "VmRSS"), "peak_mib": mib(pid, "end", "VmHWM")} for pid in pids]
    ok = missing == 0 and extra == 0 and repeated == 0 and deleted == 0 and not failed and lost == 0

    print(f"people: {n_people} people, {n_followers} followers ({n_followers / n_people:.1f} a person) on "
          f"{len(servers)} server(s); {rate} uploads/s for {seconds:g} s")
    print(f"setup: people and tokens {setup_people:.1f} s; followers up to date {followers_ready:.1f} s")
    print(f"uploads: {len(uploads)} sent over {send_span:.1f} s (start lag at most {lag * 1000:.0f} ms), "
          f"{len(uploads) - len(failed)} answered 2xx, {len(failed)} failed"
          + (" (" + ", ".join(f"{n} × {why}" for why, n in failures.items()) + ")" if failures else "")
          + f", {sum(u['retries'] for u in uploads)} retries after 429/503, "
          f"{sum(u['unchanged'] for u in uploads)} unchanged; {routes} routes")
    print(f"upload answer ms: {ms_text(answer_ms)}")
    print(f"followers: {missing} missing, {extra} extra, {repeated} repeated, {deleted} deletions "
          f"(of {expected_deliveries} deliveries expected); {lost} followers lost their stream")
    print(f"commit-to-delivery ms over {len(from_answer)} deliveries: from the upload's answer "
          f"{ms_text(delivery_answer)} ({early} arrived before the answer, counted 0); from its request "
          f"{ms_text(delivery_request)}")
    for r in rss:
        print(f"server {r['pid']}: RSS idle {r['rss_mib_idle']} MiB, with the followers {r['rss_mib_connected']} "
              f"MiB, at the end {r['rss_mib_end']} MiB; peak (VmHWM) {r['peak_mib']} MiB")
    p99 = delivery_answer["p99"]
    peaks = [r["peak_mib"] for r in rss if r["peak_mib"] is not None]
    print("targets (issue 28): exact " + ("met" if ok else "NOT met")
          + "; p99 from the answer ≤ 250 ms " + ("n/a" if p99 is None else "met" if p99 <= 250 else "NOT met")
          + "; peak RSS ≤ 600 MB " + ("n/a (no --pid)" if not peaks else
                                      "met" if max(peaks) * 1048576 <= 600e6 else "NOT met"))
    print(json.dumps({
        "mode": "people", "servers": len(servers), "people": n_people, "followers": n_followers, "rate": rate,
        "seconds": seconds, "setup_people_s": round(setup_people, 2), "followers_ready_s": round(followers_ready, 2),
        "uploads": len(uploads), "uploads_failed": len(failed), "upload_failures": failures,
        "uploads_retried": sum(u["retries"] for u in uploads),
        "uploads_unchanged": sum(u["unchanged"] for u in uploads), "routes": routes,
        "upload_send_s": round(send_span, 2), "upload_start_lag_max_ms": round(lag * 1000, 1),
        "upload_answer_ms": answer_ms, "deliveries_expected": expected_deliveries, "deliveries": len(from_answer),
        "missing": missing, "extra": extra, "repeated": repeated, "deleted": deleted, "followers_lost": lost,
        "delivery_ms_from_answer": delivery_answer, "delivered_before_answer": early,
        "delivery_ms_from_request": delivery_request, "rss": rss, "exact": ok}, sort_keys=True))
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["follow", "disconnect", "slow", "catchup", "stalls", "people"])
    p.add_argument("url")
    p.add_argument("token", help="people: an admin token (scope admin only)")
    p.add_argument("--admin", help="an admin token (disconnect reads /metrics)")
    p.add_argument("--followers", type=int, help="default 500; people: 5000")
    p.add_argument("--uploaders", type=int, default=4)
    p.add_argument("--uploads", type=int, default=25)
    p.add_argument("--changes", type=int, default=10000)
    p.add_argument("--rate", type=int, help="slow: bytes a second (default 1024); people: uploads a second (50)")
    p.add_argument("--limit", type=int, default=5000)
    p.add_argument("--health", help="stalls: an Apple Health export.zip")
    p.add_argument("--fit", help="stalls: a FIT file")
    p.add_argument("--heavy", type=int, default=4)
    p.add_argument("--heavy-tokens", help="stalls: a file of tokens, one per heavy upload, each of its own source")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--also", help="follow: a second server on the same store; followers and uploads alternate")
    p.add_argument("--people", type=int, default=1000, help="people: how many people to make")
    p.add_argument("--seconds", type=float, default=60, help="people: how long to upload")
    p.add_argument("--pid", type=int, action="append", help="people: a server's process id, for its memory "
                   "(once per server)")
    p.add_argument("--second-server", help="people: a second server on the same store; each person's followers and "
                   "the uploads alternate between the two")
    args = p.parse_args()
    if args.followers is None:
        args.followers = 5000 if args.mode == "people" else 500
    if args.rate is None:
        args.rate = 50 if args.mode == "people" else 1024
    sys.exit(asyncio.run({"follow": follow, "disconnect": disconnect, "slow": slow, "catchup": catchup,
                             "stalls": stalls, "people": people}[args.mode](args)))


if __name__ == "__main__":
    main()
