"""Helpers shared by the app verification tests: ALTCHA solving, the iOS SDK's callback parsing,
Chromium with DevTools performance logs, a fake `siteverify` server, and the CGI-mode probe."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import altcha

from conftest import chromium_driver, binary

DEMO_BUNDLE = "com.example.gatehouse.demo"
DEMO_APP_ID = "1:123456789:ios:abcdef0123456789"
DEMO_SCHEME = "app-1-123456789-ios-abcdef0123456789"
TOKEN_RE = re.compile(r"ghat1\.[A-Za-z0-9_-]{43}")
# Characters Foundation's URL(string:) accepts unescaped (RFC 3986 reserved + unreserved + %).
URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def handler_path(api_key="test-api-key", event_id="ABCDEFGHIJ", bundle=DEMO_BUNDLE, app_id=DEMO_APP_ID, **extra):
    q = {"apiKey": api_key, "authType": "verifyApp", "ibi": bundle, "v": "FirebaseAuth.iOS/11.0.0 test",
         "eventId": event_id, "appId": app_id}
    q.update(extra)
    return "/__/auth/handler?" + urllib.parse.urlencode({k: v for k, v in q.items() if v is not None})


def solve(challenge_json):
    """Solves a challenge from GET /__/auth/challenge with the altcha package; returns the payload."""
    c = altcha.ChallengeV1(challenge_json["algorithm"], challenge_json["challenge"], challenge_json["maxnumber"],
                           challenge_json["salt"], challenge_json["signature"])
    solution = altcha.solve_challenge_v1(c)
    assert solution is not None, "the altcha package found no solution"
    return altcha.PayloadV1(c.algorithm, c.challenge, solution.number, c.salt, c.signature).to_base64()


# --- The iOS SDK's parsing (IOS/Utilities/AuthWebUtils.swift, PhoneAuthProvider.reCAPTCHAToken) -----

def ios_arguments(query):
    """`dictionary(withHttpArgumentsString:)`: split on &, `+` → space, percent-decode, first key wins."""
    out = {}
    for part in reversed((query or "").split("&")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        unescape = lambda s: urllib.parse.unquote(s.replace("+", " "))
        out[unescape(key)] = unescape(value) if sep else ""
    return out


def ios_query_items(query):
    """`URLComponents.queryItems`: split on & and the first =, percent-decode (no `+` rule)."""
    items = {}
    for part in (query or "").split("&"):
        key, sep, value = part.partition("=")
        items.setdefault(urllib.parse.unquote(key), urllib.parse.unquote(value) if sep else None)
    return items


def ios_parse(url, scheme, event_id):
    """Returns the inner query items the SDK reads, asserting every check it makes on the way."""
    assert URL_CHARS.fullmatch(url), f"not a valid URL string for Foundation: {url}"
    outer = urllib.parse.urlsplit(url)
    assert f"{outer.scheme}://{outer.netloc}{outer.path}" == f"{scheme}://firebaseauth/link", url
    deep = ios_arguments(outer.query).get("deep_link_id")
    assert deep, url
    assert URL_CHARS.fullmatch(deep), f"deep_link_id is not a URL: {deep}"
    match = ios_arguments(urllib.parse.urlsplit(deep).query)
    assert match.get("authType") == "verifyApp" and match.get("eventId") == event_id, match
    inner = ios_query_items(urllib.parse.urlsplit(ios_query_items(outer.query)["deep_link_id"]).query)
    return inner


# --- Chromium with DevTools performance logs ----------------------------------------------------

def perf_driver(width=420, height=900):
    driver = chromium_driver(width, height, logging_prefs={"performance": "ALL", "browser": "ALL"})
    driver.execute_cdp_cmd("Network.enable", {})
    return driver


class DevToolsLog:
    """Accumulates DevTools events (reading the log drains it)."""

    def __init__(self, driver):
        self.driver = driver
        self.events = []

    def poll(self):
        for entry in self.driver.get_log("performance"):
            self.events.append(json.loads(entry["message"])["message"])
        return self.events

    def navigations(self, prefix):
        """URLs of top-level navigations the page requested that start with `prefix`."""
        return [e["params"]["url"] for e in self.poll()
                if e["method"] == "Page.frameRequestedNavigation" and e["params"]["url"].startswith(prefix)]

    def posted_bodies(self, path):
        return [e["params"]["request"].get("postData") for e in self.poll()
                if e["method"] == "Network.requestWillBeSent" and e["params"]["request"]["method"] == "POST"
                and urllib.parse.urlsplit(e["params"]["request"]["url"]).path == path]


def wait_for(predicate, timeout=15.0, interval=0.1):
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


# --- A fake siteverify ------------------------------------------------------------------------

class FakeSiteverify:
    """POST /siteverify → the scripted JSON for the posted `response`; records every form."""

    def __init__(self, answers):
        self.answers = answers
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                form = dict(urllib.parse.parse_qsl(body))
                outer.requests.append({"path": self.path, "content_type": self.headers.get("Content-Type"), "form": form})
                answer = outer.answers.get(form.get("response"), {"success": False, "error-codes": ["invalid-input-response"]})
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/siteverify"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# --- Probe: is accounts:sendVerificationCode implemented in this build? -------------------------

def send_verification_code_implemented():
    """Runs one CGI-mode request against a throwaway data folder; False when it answers 501."""
    try:
        exe = binary()
    except Exception:
        return False
    path = "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode"
    body = json.dumps({"phoneNumber": "+15555550100"}).encode()
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, GATEWAY_INTERFACE="CGI/1.1", REQUEST_METHOD="POST", REQUEST_URI=path + "?key=probe",
                   DOCUMENT_URI=path, QUERY_STRING="key=probe", CONTENT_TYPE="application/json",
                   CONTENT_LENGTH=str(len(body)), REMOTE_ADDR="127.0.0.1", SERVER_NAME="localhost", SERVER_PORT="80")
        out = subprocess.run([str(exe), "serve", "--data", data], input=body, capture_output=True, env=env, timeout=60)
    head = out.stdout.split(b"\r\n\r\n", 1)[0].decode(errors="replace")
    return bool(out.stdout) and "Status: 501" not in head
