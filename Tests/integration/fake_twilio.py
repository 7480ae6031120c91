"""A fake Twilio on 127.0.0.1 for the tests: the Messages (SMS and WhatsApp) and Calls resources of
any account, basic auth checked, answering as Twilio does (`sid`, `status`), and reporting back to
each request's `StatusCallback` as Twilio would, signed with `X-Twilio-Signature` computed by the
`twilio` library's own request validator (an implementation independent of Gatehouse's).

    fake = FakeTwilio(auth_token).start()
    fake.mode = 500            # answer every request 500 (or 429, …); None: answer 201
    fake.mode = "hold"         # accept the connection and never answer (a provider held open)
    fake.outcomes["+336…"] = ["sent", ("undelivered", "30003")]   # what to report, in order
    fake.messages              # what it took: kind sms|whatsapp|voice, to, from, body, …, sid
    fake.callbacks             # what it reported and the HTTP status it got back
"""
import base64
import itertools
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
        self.outcomes = {}          # recipient (E.164) -> list of status or (status, error code)
        self.default_outcome = ["sent", "delivered"]
        self.counter = itertools.count(1)
        self.validator = RequestValidator(auth_token)
        self.server = None
        self.held = []

    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                form = dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))
                with fake.lock:
                    fake.requests.append({"path": self.path, "form": form})
                    mode = fake.mode
                if mode == "hold":
                    # Never answer: the sender's timeout ends it. The request is not taken.
                    fake.held.append(self.connection)
                    time.sleep(30)
                    return
                expected = "Basic " + base64.b64encode(f"{fake.account_sid}:{fake.auth_token}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    return self.reply(401, {"code": 20003, "message": "Authenticate"})
                if isinstance(mode, int):
                    return self.reply(mode, {"code": 20500, "message": "fake error"})
                voice = self.path.endswith("/Calls.json")
                sid = ("CA" if voice else "SM") + f"{next(fake.counter):032x}"
                to = form.get("To", "")
                kind = "voice" if voice else "whatsapp" if to.startswith("whatsapp:") else "sms"
                m = {"kind": kind, "to": to.removeprefix("whatsapp:"), "from": form.get("From"), "body": form.get("Body"),
                     "content_sid": form.get("ContentSid"), "content_variables": form.get("ContentVariables"),
                     "twiml": form.get("Twiml"), "status_callback": form.get("StatusCallback"), "sid": sid, "form": form}
                with fake.lock:
                    fake.messages.append(m)
                self.reply(201, {"sid": sid, "status": "queued", "account_sid": fake.account_sid})
                if m["status_callback"]:
                    threading.Thread(target=fake.report, args=(m,), daemon=True).start()

            def reply(self, status, payload):
                import json
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def report(self, m):
        """Twilio's status callbacks for `m`, in order, a little apart."""
        for outcome in self.outcomes.get(m["to"], self.default_outcome):
            status, code = outcome if isinstance(outcome, tuple) else (outcome, None)
            time.sleep(0.05)
            self.send_callback(m, status, code)

    def callback_params(self, m, status, error_code=None):
        if m["kind"] == "voice":
            params = {"CallSid": m["sid"], "CallStatus": status, "AccountSid": self.account_sid, "To": m["to"], "From": m["from"] or ""}
        else:
            params = {"MessageSid": m["sid"], "SmsSid": m["sid"], "MessageStatus": status, "AccountSid": self.account_sid,
                      "To": m["to"], "From": m["from"] or ""}
        if error_code:
            params["ErrorCode"] = error_code
        return params

    def send_callback(self, m, status, error_code=None, url=None, params=None, signature=None):
        """Posts one status callback (to the message's own StatusCallback unless `url` is given),
        signed by the twilio library unless `signature` is."""
        url = url or m["status_callback"]
        params = params if params is not None else self.callback_params(m, status, error_code)
        sig = signature if signature is not None else self.validator.compute_signature(url, params)
        try:
            r = requests.post(url, data=params, headers={"X-Twilio-Signature": sig}, timeout=10)
            code = r.status_code
        except requests.RequestException:
            code = 0
        with self.lock:
            self.callbacks.append({"sid": m["sid"], "status": status, "answer": code})
        return code

    def wait_for(self, count, timeout=10.0, kind=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                found = [m for m in self.messages if kind is None or m["kind"] == kind]
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"expected {count} message(s) at the fake Twilio, got {len(self.messages)}")

    def wait_callbacks(self, count, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if len(self.callbacks) >= count:
                    return list(self.callbacks)
            time.sleep(0.05)
        raise AssertionError(f"expected {count} callback(s), got {self.callbacks}")
