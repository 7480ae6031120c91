"""Providers that are slow or never answer: no API request waits for them, the message is retried
later, and SIGTERM with a backlog ends after the message being sent, not after the backlog."""
import json
import signal
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import free_port
from phone_helpers import dev_config, outbox, wait_outbox

SECRET = "webhook-secret-0123456789abcdef"


class Tarpit:
    """Accepts connections on 127.0.0.1 and never answers; counts them."""

    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/sms"
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(16)
        self.held = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self):
        self.sock.close()
        for c in self.held:
            c.close()


class SlowGateway:
    """Answers 200 to every POST after `delay` seconds; records each request's arrival."""

    def __init__(self, delay: float):
        self.arrivals = []
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                gateway.arrivals.append(time.monotonic())
                time.sleep(delay)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sms"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def config_with(sms):
    c = dev_config()
    c["sms"] = sms
    return c


def send(g, number):
    started = time.monotonic()
    r = g.api("sendVerificationCode", {"phoneNumber": number})
    assert r.status_code == 200, r.text
    return time.monotonic() - started


def test_a_provider_that_never_answers_holds_no_request_and_is_retried(make_gatehouse):
    tarpit = Tarpit()
    try:
        g = make_gatehouse(config=config_with({"provider": "webhook", "url": tarpit.url, "secret": SECRET, "timeout_seconds": 2}))
        assert send(g, "+33612345700") < 1.0
        # While the worker waits on the tarpit, sign-in requests still answer at once.
        deadline = time.time() + 5
        while not tarpit.held and time.time() < deadline:
            time.sleep(0.05)
        assert tarpit.held, "the worker never called the provider"
        assert send(g, "+33612345701") < 1.0
        # The first send gives up at its timeout and is retried after the backoff.
        rows = wait_outbox(g, lambda rows: len(rows) == 2 and rows[0]["attempts"] == 1, timeout=10)
        assert rows[0]["status"] in ("pending", "sending") and "timed out" in rows[0]["last_error"], dict(rows[0])
        assert rows[0]["body"] != ""
        deadline = time.time() + 15
        while len(tarpit.held) < 3 and time.time() < deadline:
            time.sleep(0.1)
        assert len(tarpit.held) >= 3, "the message was not retried"
        g.stop()
    finally:
        tarpit.close()


def test_sigterm_with_a_backlog_ends_after_the_message_being_sent(make_gatehouse):
    gateway = SlowGateway(delay=2.0)
    try:
        g = make_gatehouse(config=config_with({"provider": "webhook", "url": gateway.url, "secret": SECRET, "timeout_seconds": 10}))
        for i in range(6):
            send(g, f"+3361234571{i}")
        deadline = time.time() + 10
        while not gateway.arrivals and time.time() < deadline:
            time.sleep(0.02)
        assert gateway.arrivals, "the worker never called the provider"
        asked = time.monotonic()
        g.proc.send_signal(signal.SIGTERM)
        g.proc.wait(timeout=25)
        took = time.monotonic() - asked
        assert g.proc.returncode == 0
        assert took < 4.0, f"stopping took {took:.1f} s"
        assert len(gateway.arrivals) == 1
        rows = outbox(g)
        assert [r["status"] for r in rows].count("sent") == 1
        assert [r["status"] for r in rows].count("pending") == 5 and all(r["attempts"] == 0 for r in rows if r["status"] == "pending")
        print(f"stop with a backlog of 5 and a 2 s provider: {took:.2f} s")
    finally:
        gateway.close()
