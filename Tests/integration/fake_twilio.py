"""A fake Twilio on 127.0.0.1 for the tests: the Messages (SMS and WhatsApp) and Calls resources of
any account, basic auth checked, answering as Twilio does (`sid`, `status`), and reporting back to
each request's `StatusCallback` as Twilio would, signed with `X-Twilio-Signature` computed by the
`twilio` library's own request validator (an implementation independent of Gatehouse's).

    fake = FakeTwilio(auth_token).start()      # or the `fake_twilio` fixture: fake_twilio(**kw)
    fake.mode = 500            # answer every request 500 (or 429, …); None: answer 201
    fake.mode = "hold"         # read the request and never answer (until the client gives up)
    fake.mode = "drop"         # read the request and close the connection without an answer
    fake.answers["+336…"] = 500                 # the same, for one recipient only
    fake.outcomes["+336…"] = ["sent", ("undelivered", "30003")]   # what to report, in order
    fake.default_outcome = []  # report nothing
    fake.messages              # what it took: kind sms|whatsapp|voice, to, from, body, …, sid
    fake.requests              # every request, taken or not: path, form, kind, to, answer
    fake.callbacks             # what it reported and the HTTP status it got back (0: no answer)
    fake.send_callback(sid, "delivered")        # one report at will (a sid or a message dict)
"""
import base64
import itertools
import json
import select
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from twilio.request_validator import RequestValidator

from conftest import free_port


class FakeTwilio:
    def __init__(self, auth_token="twilio-auth-token-0123456789", account_sid="AC0123456789"):
        self.auth_token, self.account_sid = auth_token, account_sid
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.lock = threading.Lock()
        self.messages, self.requests, self.callbacks = [], [], []
        self.mode = None
        self.answers = {}           # recipient (E.164) -> status, "hold" or "drop" (overrides mode)
        self.outcomes = {}          # recipient (E.164) -> list of status or (status, error code)
        self.default_outcome = ["sent", "delivered"]
        self.counter = itertools.count(1)
        self.validator = RequestValidator(auth_token)
        self.server = None
        self.stopping = threading.Event()

    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                form = dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))
                voice = self.path.endswith("/Calls.json")
                to = form.get("To", "")
                kind = "voice" if voice else "whatsapp" if to.startswith("whatsapp:") else "sms"
                recipient = to.removeprefix("whatsapp:")
                with fake.lock:
                    mode = fake.answers.get(recipient, fake.mode)
                    seen = {"path": self.path, "form": form, "kind": kind, "to": recipient, "answer": mode or 201,
                            "authorization": self.headers.get("Authorization")}
                    fake.requests.append(seen)
                if mode == "hold":
                    return self.hold()
                if mode == "drop":
                    self.close_connection = True
                    return
                expected = "Basic " + base64.b64encode(f"{fake.account_sid}:{fake.auth_token}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    seen["answer"] = 401
                    return self.reply(401, {"code": 20003, "message": "Authenticate", "status": 401})
                if not self.path.startswith("/2010-04-01/Accounts/") or not (voice or self.path.endswith("/Messages.json")):
                    seen["answer"] = 404
                    return self.reply(404, {"code": 20404, "message": "The requested resource was not found", "status": 404})
                if isinstance(mode, int):
                    return self.reply(mode, {"code": 20500, "message": "fake error", "status": mode})
                sid = ("CA" if voice else "SM") + f"{next(fake.counter):032x}"
                m = {"kind": kind, "to": recipient, "from": form.get("From"), "body": form.get("Body"),
                     "content_sid": form.get("ContentSid"), "content_variables": form.get("ContentVariables"),
                     "twiml": form.get("Twiml"), "status_callback": form.get("StatusCallback"), "sid": sid, "form": form,
                     "account": self.path.split("/")[3]}
                with fake.lock:
                    fake.messages.append(m)
                self.reply(201, {"sid": sid, "status": "queued", "account_sid": fake.account_sid, "to": to})
                if m["status_callback"]:
                    threading.Thread(target=fake.report, args=(m,), daemon=True).start()

            def hold(self):
                """Never answers: waits for the client to give up (its end closes) or the fake to stop."""
                self.close_connection = True
                while not fake.stopping.is_set():
                    ready, _, _ = select.select([self.connection], [], [], 0.1)
                    if ready and not self.connection.recv(1024):
                        return

            def reply(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.stopping.set()
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def report(self, m):
        """Twilio's status callbacks for `m`, in order, a little apart."""
        with self.lock:
            outcomes = list(self.outcomes.get(m["to"], self.default_outcome))
        for outcome in outcomes:
            status, code = outcome if isinstance(outcome, tuple) else (outcome, None)
            time.sleep(0.05)
            self.send_callback(m, status, code)

    def message(self, sid):
        with self.lock:
            for m in self.messages:
                if m["sid"] == sid:
                    return m
        raise KeyError(sid)

    def callback_params(self, m, status, error_code=None):
        if m["kind"] == "voice":
            params = {"CallSid": m["sid"], "CallStatus": status, "AccountSid": self.account_sid, "To": m["to"], "From": m["from"] or "",
                      "Direction": "outbound-api", "ApiVersion": "2010-04-01"}
            if status == "completed":
                params["CallDuration"] = "14"
        else:
            to, sender = m["to"], m["from"] or ""
            if m["kind"] == "whatsapp":
                to = "whatsapp:" + to
            params = {"MessageSid": m["sid"], "SmsSid": m["sid"], "SmsStatus": status, "MessageStatus": status,
                      "AccountSid": self.account_sid, "To": to, "From": sender, "ApiVersion": "2010-04-01"}
        if error_code:
            params["ErrorCode"] = str(error_code)
        return params

    def send_callback(self, m, status, error_code=None, url=None, params=None, signature=None):
        """Posts one status callback for `m` (a message dict or its sid) to its own StatusCallback
        unless `url` is given, signed by the twilio library unless `signature` is. Returns the
        HTTP status it got back (0: no answer); never raises on an error answer."""
        if isinstance(m, str):
            m = self.message(m)
        url = url or m["status_callback"]
        params = params if params is not None else self.callback_params(m, status, error_code)
        sig = signature if signature is not None else self.validator.compute_signature(url, params)
        try:
            r = requests.post(url, data=params, headers={"X-Twilio-Signature": sig}, timeout=10)
            code = r.status_code
        except requests.RequestException:
            code = 0
        with self.lock:
            self.callbacks.append({"sid": m["sid"], "status": status, "error_code": error_code, "url": url, "answer": code})
        return code

    def wait_for(self, count, timeout=10.0, kind=None):
        """The messages taken (of `kind`), once there are at least `count`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                found = [m for m in self.messages if kind is None or m["kind"] == kind]
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"expected {count} message(s) at the fake Twilio, got {len(self.messages)}")

    def wait_requests(self, count, timeout=10.0):
        """Every request (taken or not), once there are at least `count`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if len(self.requests) >= count:
                    return list(self.requests)
            time.sleep(0.05)
        raise AssertionError(f"expected {count} request(s) at the fake Twilio, got {len(self.requests)}")

    def wait_callbacks(self, count, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if len(self.callbacks) >= count:
                    return list(self.callbacks)
            time.sleep(0.05)
        raise AssertionError(f"expected {count} callback(s), got {self.callbacks}")

    @staticmethod
    def outbox_id(request_or_message):
        """The outbox message id a request names in its StatusCallback (`m=`), or None."""
        form = request_or_message.get("form") or {}
        url = form.get("StatusCallback")
        if not url:
            return None
        return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query)).get("m")


@pytest.fixture
def fake_twilio():
    """A factory of fake Twilios, each started at once and stopped when the test ends."""
    started = []

    def make(**kw):
        f = FakeTwilio(**kw).start()
        started.append(f)
        return f

    yield make
    for f in started:
        f.stop()
