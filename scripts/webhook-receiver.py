#!/usr/bin/env python3
"""A webhook receiver for RouteKit's tests, whose signature check is the Standard Webhooks reference library's
(`standardwebhooks` on PyPI), which shares no code with RouteKit:

    webhook-receiver.py --secret-file FILE --log FILE [--port N] [--answers LIST] [--hang-seconds S]
    webhook-receiver.py --check

Listens on 127.0.0.1:PORT (0, the default: a free port) and prints "listening on http://127.0.0.1:PORT" once it
does. Every POST is checked with `standardwebhooks.Webhook(secret).verify(body, headers)`, the secret read from
--secret-file at each request (the file may appear after the receiver started: the subscription's POST answer gives
the secret), and answered from --answers, one item a request in the order they arrive, then 204 once the list is
used up: a status (500), or `hang` (no answer: the request is held until the sender gives up and closes the
connection, or --hang-seconds pass, 20 by default: past the sender's deadline, a timeout). A request that does not
verify is answered 401, and leaves the list as it was.

Each request appends one JSON line to --log as it is answered (before the answer, so the lines are in the order the
requests came): `n` (its number, from 1), `received` (seconds since 1970), `path`, `id` (webhook-id), `timestamp`
(webhook-timestamp), `verified`, `error` (why it did not verify, or null), `answer` (the list's item, 204 past its
end, or `unverified`), `status` (the status answered, 401 when it did not verify; null for `hang`), `anchor` (the
body's data.anchor), `added` and `deleted` (the uuids of data.added and data.deleted), `body_sha256` and
`data_sha256` (of the exact body, and of its data written again with sorted keys).

--check exits 0 when standardwebhooks can be imported. When it cannot (pip install standardwebhooks), the receiver
exits 77, saying so, with or without --check: the tests skip then (they fail instead when CI is set).
"""
import argparse
import hashlib
import json
import select
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    import standardwebhooks
    from standardwebhooks import Webhook
except ImportError:
    print(
        "webhook-receiver: the standardwebhooks package is missing (pip install standardwebhooks)", file=sys.stderr
    )
    sys.exit(77)


def parse_answers(text):
    """The --answers list: statuses (200 to 599) and `hang`, separated by commas."""
    answers = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        if item == "hang" or (item.isdigit() and 200 <= int(item) <= 599):
            answers.append(item)
        else:
            raise argparse.ArgumentTypeError(f"'{item}' is neither a status (200 to 599) nor hang")
    return answers


def arguments():
    parser = argparse.ArgumentParser(description="A webhook receiver checked by the standardwebhooks library.")
    parser.add_argument("--check", action="store_true", help="exit 0 when standardwebhooks can be imported")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--secret-file", help="the subscription's secret (whsec_...), read at each request")
    parser.add_argument("--log", help="the file one JSON line a request is appended to")
    parser.add_argument("--answers", type=parse_answers, default=[], help="e.g. 500,500,hang: then 204")
    parser.add_argument("--hang-seconds", type=float, default=20.0, help="the longest a `hang` holds a request")
    options = parser.parse_args()
    if not options.check and not (options.secret_file and options.log):
        parser.error("--secret-file and --log are needed")
    return options


class Receiver:
    """What the requests share: the answers still to give, the request count and the log."""

    def __init__(self, options):
        self.options = options
        self.answers = list(options.answers)
        self.count = 0
        self.lock = threading.Lock()

    def next(self, verified):
        """The next request's number, and its answer: the list's next item for a request that verified (which uses
        it up), `unverified` for one that did not."""
        with self.lock:
            self.count += 1
            if not verified:
                return self.count, "unverified"
            return self.count, self.answers.pop(0) if self.answers else "204"

    def secret(self):
        try:
            with open(self.options.secret_file, encoding="utf-8") as file:
                return file.read().strip()
        except FileNotFoundError:
            return ""

    def write(self, entry):
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self.lock, open(self.options.log, "a", encoding="utf-8") as file:
            file.write(line)
            file.flush()


def verify(secret, body, headers):
    """Whether the reference library accepts the request, and why not."""
    if not secret:
        return False, "no secret yet (the secret file is missing or empty)"
    try:
        Webhook(secret).verify(body, headers)
        return True, None
    except Exception as error:  # WebhookVerificationError, or a malformed header or secret
        return False, f"{type(error).__name__}: {error}"


def describe(body):
    """The anchor, the added and deleted routes' uuids, and a hash of the data, from a body (empty when not JSON)."""
    try:
        data = json.loads(body).get("data") or {}
    except (ValueError, AttributeError):
        return None, [], [], None
    added = [route.get("uuid") for route in data.get("added") or []]
    deleted = [route.get("uuid") for route in data.get("deleted") or []]
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return data.get("anchor"), added, deleted, hashlib.sha256(canonical).hexdigest()


class Handler(BaseHTTPRequestHandler):
    receiver = None  # set before serving

    def log_message(self, format, *args):  # no access log on stderr
        pass

    def read_body(self):
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def hold(self):
        """Holds the request without an answer until the client closes the connection or --hang-seconds pass."""
        deadline = time.monotonic() + self.receiver.options.hang_seconds
        connection = self.connection
        while time.monotonic() < deadline:
            readable, _, _ = select.select([connection], [], [], 0.1)
            if readable:
                try:
                    if connection.recv(1, socket.MSG_PEEK) == b"":
                        return
                except OSError:
                    return
                time.sleep(0.1)  # bytes beyond the request: not an answer, keep holding

    def do_POST(self):
        received = time.time()
        body = self.read_body()
        headers = {name.lower(): value for name, value in self.headers.items()}
        verified, error = verify(self.receiver.secret(), body, headers)
        number, answer = self.receiver.next(verified)
        anchor, added, deleted, data_hash = describe(body)
        status = None if answer == "hang" else 401 if answer == "unverified" else int(answer)
        entry = {
            "n": number, "received": received, "path": self.path, "id": headers.get("webhook-id"),
            "timestamp": headers.get("webhook-timestamp"), "verified": verified, "error": error, "answer": answer,
            "status": status, "anchor": anchor, "added": added, "deleted": deleted,
            "body_sha256": hashlib.sha256(body).hexdigest(), "data_sha256": data_hash,
        }
        # Written before the answer: the log's order is the requests' (the next comes only after this answer).
        self.receiver.write(entry)
        if status is None:
            self.hold()
            self.close_connection = True
            return
        try:
            self.send_response(status)
            if status not in (204, 304):  # which have no body, and no Content-Length
                self.send_header("Content-Length", "0")
            self.end_headers()
        except OSError:
            pass  # the sender is gone


def main():
    options = arguments()
    if options.check:
        print(f"webhook-receiver: standardwebhooks {getattr(standardwebhooks, '__version__', '?')}")
        return
    # A parent may start it with SIGTERM blocked or ignored (Foundation's Process passes its thread's mask on): the
    # default action, so that a test's terminate() ends it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    Handler.receiver = Receiver(options)
    server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    server.daemon_threads = True
    print(f"webhook-receiver: listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
