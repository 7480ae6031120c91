#!/usr/bin/env python3
"""SMS pumping, simulated against the real binary behind the real nginx (loopback only).

    python3 bench/pumping.py [--attack 3000] [--legit 160] [--addresses 1500] [--threads 8] [--bin PATH]
                             [--channels sms,whatsapp,voice --fallback-after 20 [--receipts]]

Starts `gatehouse dev` (nginx + responder) with a production-mode configuration whose SMS go
through the signed webhook to a local fake gateway that counts them. App verification is taken
as solved (an attacker can buy solved challenges): every request carries a fresh app token
written into the store as the app verification flow stores it. Each request comes from its own
loopback source address (127.x.y.1, each in its own /24 network, so nginx's $remote_addr and the
FastCGI REMOTE_ADDR vary without trusting any header); an attacking address sends at most a few
requests, under the per-address limit and its network's.

Attack: `sendVerificationCode` to premium-rate-like ranges: two contiguous blocks of UK
premium-rate numbers (+44 909 876x xxx and 877x xxx, the concentrated kind) and Latvian mobile numbers spread
over a hundred 10,000-number blocks (the spread kind). Legitimate traffic, interleaved: random
mobile numbers in France, Germany, the US and the UK (other UK ranges). Prints what was attempted,
answered and delivered per kind, the holds (`gatehouse sms holds list`), and a JSON summary.

With `--channels` the project also sends codes by WhatsApp and voice, and with `--fallback-after`
its automatic fallback takes the next channel for every code not reported delivered in time: the
attacker's best case, since a pumped message is paid whether or not it is delivered. With
`--receipts` the gateway reports back (signed, to `/__/auth/delivery/webhook`): undelivered for
every attacking number (to drive the fallback at once), delivered for legitimate ones, each
RECEIPT_DELAY (1 s) after its message reached the gateway (a report sent within milliseconds,
before the responder has recorded which provider took the message, is answered 404). The table
then counts each kind's messages by channel and in budget units (a call is 3), and the receipts
accepted and refused (by HTTP status).
Every process it starts is stopped by its pid; the data folder is removed unless --keep.
"""
import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
import socket

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "pump-sim"
API_KEY = "pump-sim-api-key"
WEBHOOK_SECRET = "pump-sim-webhook-secret-0123456789"
# Seconds between a message reaching the gateway and its report (with --receipts).
RECEIPT_DELAY = 1.0
PATH = "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=" + API_KEY


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gateway:
    """The SMS provider's side: checks the webhook signature and counts each message once (by id)."""

    def __init__(self, report=None):
        self.lock = threading.Lock()
        self.delivered = {}  # message id -> number
        self.bad = 0
        # Where to send receipts (set once the stack is up), and what to report for a number.
        self.receipts_port = None
        self.report = report
        self.receipts = {"sent": 0, "refused": 0, "refused_by_status": {}}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                ts = self.headers.get("X-Gatehouse-Timestamp", "")
                mac = hmac.new(WEBHOOK_SECRET.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
                ok = hmac.compare_digest(self.headers.get("X-Gatehouse-Signature", ""), "v1=" + mac)
                with outer.lock:
                    if ok:
                        m = json.loads(body)
                        outer.delivered[m["id"]] = m["to"]
                    else:
                        outer.bad += 1
                self.send_response(200 if ok else 401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if ok and outer.report and outer.receipts_port:
                    # A carrier's report comes seconds after the send, never before the
                    # responder has recorded which provider took the message.
                    t = threading.Timer(RECEIPT_DELAY, outer.send_receipt, args=(m,))
                    t.daemon = True
                    t.start()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sms"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def send_receipt(self, m):
        """The provider's report on message `m`, signed as its requests are (docs/operations.md)."""
        body = json.dumps({"id": m["id"], "project": m["project"], "status": self.report(m["to"]), "error_code": "30003"}).encode()
        ts = str(int(time.time()))
        mac = hmac.new(WEBHOOK_SECRET.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
        conn = http.client.HTTPConnection("127.0.0.1", self.receipts_port, timeout=30)
        try:
            conn.request("POST", "/__/auth/delivery/webhook", body=body, headers={
                "Content-Type": "application/json", "X-Gatehouse-Timestamp": ts, "X-Gatehouse-Signature": "v1=" + mac})
            status = conn.getresponse().status
        except OSError:
            status = 0
        finally:
            conn.close()
        with self.lock:
            self.receipts["sent" if status == 200 else "refused"] += 1
            if status != 200:
                self.receipts["refused_by_status"][status] = self.receipts["refused_by_status"].get(status, 0) + 1

    def numbers(self):
        with self.lock:
            return list(self.delivered.values())

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def config(gateway_url, phone=None, callback=None):
    return {
        "$comment": "written by bench/pumping.py",
        "mode": "production",
        "log_level": "warning",
        "public_origin": "https://auth.pump-sim.invalid",
        "admin_token": "pump-sim-admin-" + "x" * 32,
        "projects": [{
            "id": PROJECT, "api_keys": [API_KEY], "authorized_domains": ["127.0.0.1", "localhost"],
            "sms_origin_domain": "auth.pump-sim.invalid", "sms_regions": ["FR", "DE", "US", "GB", "LV"],
            # The documented defaults of the pumping keys; the per-address limit stays at its default too.
            "phone": phone or {},
        }],
        "sms": dict({"provider": "webhook", "url": gateway_url, "secret": WEBHOOK_SECRET},
                    **({"status_callback_url": callback} if callback else {})),
        "email": {"transport": "sendmail", "from": "noreply@pump-sim.invalid", "command": ["/bin/true"]},
    }


# --- Traffic ---------------------------------------------------------------------------------

GB_PREMIUM_BLOCKS = ["+44909876", "+44909877"]


def attack_number(rng):
    """Half to two contiguous UK premium-rate blocks, half spread over a hundred Latvian mobile blocks."""
    if rng.random() < 0.5:
        return "gb-premium", rng.choice(GB_PREMIUM_BLOCKS) + f"{rng.randrange(10000):04d}"
    return "lv-spread", f"+3712{rng.randrange(100):02d}0{rng.randrange(10000):04d}"


def legit_number(rng, i):
    """Random mobile numbers in ranges libphonenumber takes as valid for the region."""
    kind = ["fr", "de", "us", "gb-mobile"][i % 4]
    if kind == "fr":
        return kind, f"+336{rng.choice('01245678')}{rng.randrange(10**7):07d}"
    if kind == "de":
        return kind, f"+49151{rng.randrange(10**8):08d}"
    if kind == "us":
        return kind, f"+1650{rng.randrange(200, 1000)}{rng.randrange(10000):04d}"
    return kind, f"+4477{rng.choice('123456')}{rng.randrange(10**7):07d}"


def address(n):
    """The n-th loopback source address, each in a /24 of its own (127.1.0.1, 127.1.1.1, …): the
    per-address limits also count per /24 network (8 × an address's budget), and an attacker
    with many addresses has them in many networks, none shared with a legitimate user."""
    return f"127.{1 + n // 256 % 254}.{n % 256}.1"


def mint_tokens(db_path, count):
    """App tokens as the app verification flow stores them (only their SHA-256), valid an hour."""
    now = int(time.time() * 1000)
    tokens = ["ghat1." + base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode() for _ in range(count)]
    with sqlite3.connect(str(db_path), timeout=30) as conn:
        conn.executemany("INSERT INTO app_tokens (token_hash, project_id, api_key, app_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                         [(hashlib.sha256(t.encode()).digest(), PROJECT, API_KEY, "web", now, now + 3_600_000) for t in tokens])
    return tokens


def send(port, source, number, token):
    body = json.dumps({"phoneNumber": number, "recaptchaToken": token})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    try:
        # No registered app is named, so the tokens are the ones minted for `web` (app tokens are
        # bound to their app).
        conn.request("POST", PATH, body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        if r.status == 200:
            return "sent"
        try:
            return json.loads(data)["error"]["message"]
        except (ValueError, KeyError):
            return f"HTTP {r.status}"
    finally:
        conn.close()


# --- The run ---------------------------------------------------------------------------------

class Stack:
    """`gatehouse dev` (which runs nginx and stops it on SIGTERM) on a free loopback port."""

    def __init__(self, binary, data, cfg):
        self.binary, self.data = str(binary), Path(data)
        self.config_path = self.data / "gatehouse.json"
        self.config_path.write_text(json.dumps(cfg, indent=2))
        self.port = free_port()
        self.log = open(self.data / "gatehouse.log", "ab")
        self.proc = subprocess.Popen([self.binary, "dev", "--port", str(self.port), "--data", str(self.data), "--config", str(self.config_path)],
                                     stdout=subprocess.PIPE, stderr=self.log, stdin=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if line.startswith(b"ready "):
                return
            if not line and self.proc.poll() is not None:
                break
        self.stop()
        raise RuntimeError(f"gatehouse dev did not start; see {self.data / 'gatehouse.log'}")

    def tool(self, *args):
        return subprocess.run([self.binary, *args, "--data", str(self.data), "--config", str(self.config_path)],
                              capture_output=True, text=True, timeout=60)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        # nginx is the dev command's child: stopped with it, unless the dev process was killed.
        pid_file = self.data / "nginx" / "nginx.pid"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text().strip()), signal.SIGQUIT)
            except (ProcessLookupError, ValueError):
                pass
        self.log.close()


class Run:
    """A finished simulation whose stack still runs (to look at or release holds); `close` stops it."""

    def __init__(self, stack, gateway, folder, keep):
        self.stack, self.gateway, self.folder, self.keep = stack, gateway, folder, keep
        self.summary = {}

    def close(self):
        self.stack.stop()
        self.gateway.close()
        if not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)


def simulate(binary, attack=3000, legit=160, addresses=1500, threads=8, seed=7, data=None, keep=False, phone=None, log=print,
             receipts=False):
    """Runs the traffic; returns a `Run` (close it) whose summary has the figures."""
    rng = random.Random(seed)
    traffic = [("attack",) + attack_number(rng) for _ in range(attack)] + [("legit",) + legit_number(rng, i) for i in range(legit)]
    rng.shuffle(traffic)
    # Attacking requests rotate over `addresses` sources; each legitimate user has an address of its own.
    sources, a, l = [], 0, 0
    for side, _, _ in traffic:
        if side == "attack":
            sources.append(address(a % max(1, addresses))); a += 1
        else:
            sources.append(address(addresses + l)); l += 1

    folder = Path(data or tempfile.mkdtemp(prefix="gh-pumping-"))
    folder.mkdir(parents=True, exist_ok=True)
    attacking = {number for side, _, number in traffic if side == "attack"}
    gateway = Gateway(report=(lambda n: "undelivered" if n in attacking else "delivered") if receipts else None)
    try:
        stack = Stack(binary, folder, config(gateway.url, phone, callback="https://auth.pump-sim.invalid/__/auth/delivery/webhook"
                                             if receipts else None))
    except BaseException:
        gateway.close()
        raise
    gateway.receipts_port = stack.port
    run = Run(stack, gateway, folder, keep)
    try:
        tokens = mint_tokens(folder / "gatehouse.db", len(traffic))
        outcomes = [None] * len(traffic)
        started = time.time()

        def one(i):
            outcomes[i] = send(stack.port, sources[i], traffic[i][2], tokens[i])

        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(one, range(len(traffic))))
        seconds = time.time() - started

        # The automatic fallback, if any, runs once each code's time is up (or at once on an
        # undelivered receipt): wait until no fallback is pending.
        fallback_after = int((phone or {}).get("fallback_after_seconds", 0))
        if fallback_after:
            deadline = time.time() + fallback_after + 60
            while time.time() < deadline:
                time.sleep(1)
                with sqlite3.connect(str(folder / "gatehouse.db"), timeout=30) as conn:
                    pending = conn.execute("SELECT COUNT(*) FROM outbox WHERE fallback_at IS NOT NULL").fetchone()[0]
                if pending == 0:
                    break
        with sqlite3.connect(str(folder / "gatehouse.db"), timeout=30) as conn:
            by_channel = conn.execute("SELECT recipient, channel FROM outbox WHERE channel IN ('sms', 'whatsapp', 'voice')").fetchall()
        queued = [n for n, c in by_channel if c == "sms"]
        deadline = time.time() + 60
        while len(gateway.numbers()) < len(by_channel) and time.time() < deadline:
            time.sleep(0.2)
        delivered = gateway.numbers()
        if receipts:
            # The last reports leave RECEIPT_DELAY after their message.
            deadline = time.time() + RECEIPT_DELAY + 30
            while time.time() < deadline:
                with gateway.lock:
                    if gateway.receipts["sent"] + gateway.receipts["refused"] >= len(delivered):
                        break
                time.sleep(0.2)
        holds = stack.tool("sms", "holds", "list")
        kind_of = {number: kind for _, kind, number in traffic}
        rows = {}
        for (side, kind, number), outcome in zip(traffic, outcomes):
            r = rows.setdefault(kind, {"side": side, "attempted": 0, "accepted": 0, "refused": 0, "other": 0, "queued": 0, "delivered": 0,
                                       "whatsapp": 0, "voice": 0, "units": 0})
            r["attempted"] += 1
            if outcome == "sent":
                r["accepted"] += 1
            elif outcome == "TOO_MANY_ATTEMPTS_TRY_LATER":
                r["refused"] += 1
            else:
                r["other"] += 1
                r.setdefault("other_errors", {}).setdefault(outcome, 0)
                r["other_errors"][outcome] += 1
        for number in queued:
            rows[kind_of[number]]["queued"] += 1
        for number, channel in by_channel:
            r = rows[kind_of[number]]
            if channel != "sms":
                r[channel] += 1
            r["units"] += 3 if channel == "voice" else 1
        for number in delivered:
            rows[kind_of[number]]["delivered"] += 1
        log_lines = (folder / "gatehouse.log").read_text(errors="replace").splitlines()
        hold_lines = [l for l in log_lines if "SMS pumping:" in l]
        # The fallback's warnings (refused) name the message; its sends are logged at info level.
        fallback_refused = {}
        for l in log_lines:
            if "phone fallback:" in l and " refused: " in l:
                step = l.split("phone fallback: message #", 1)[1].split(" ", 1)[1].split(" refused: ")[0]
                fallback_refused[step] = fallback_refused.get(step, 0) + 1
        run.summary = {
            "requests": len(traffic), "seconds": round(seconds, 1), "addresses": addresses + legit,
            "by_kind": rows, "holds": [l for l in holds.stdout.splitlines() if l.strip()],
            "hold_log_lines": hold_lines, "fallback_refused": fallback_refused, "bad_signatures": gateway.bad, "receipts": dict(gateway.receipts),
            "full_number_in_hold_lines": any(number in l for l in hold_lines for number in kind_of),
        }
        log(f"{len(traffic)} sendVerificationCode requests in {seconds:.1f} s from {addresses + legit} addresses")
        log(f"{'side':<7}{'traffic':<12}{'attempted':>9}{'accepted':>9}{'refused':>9}{'other':>7}{'SMS queued':>12}{'WhatsApp':>9}"
            f"{'calls':>7}{'units':>7}{'delivered':>11}")
        for kind, r in sorted(rows.items(), key=lambda kv: (kv[1]["side"], kv[0])):
            log(f"{r['side']:<7}{kind:<12}{r['attempted']:>9}{r['accepted']:>9}{r['refused']:>9}{r['other']:>7}{r['queued']:>12}"
                f"{r['whatsapp']:>9}{r['voice']:>7}{r['units']:>7}{r['delivered']:>11}")
        if receipts:
            log(f"receipts: {gateway.receipts['sent']} accepted, {gateway.receipts['refused']} refused"
                + (f" (by status: {gateway.receipts['refused_by_status']})" if gateway.receipts["refused"] else ""))
        if fallback_after:
            log(f"automatic fallback refused: {sum(fallback_refused.values())} ({fallback_refused})")
        log("holds (gatehouse sms holds list):")
        for l in run.summary["holds"]:
            log("  " + l)
        return run
    except BaseException:
        run.close()
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--attack", type=int, default=3000, help="attacking requests (at most 20000)")
    ap.add_argument("--legit", type=int, default=160, help="legitimate requests (at most 1000)")
    ap.add_argument("--addresses", type=int, default=1500, help="attacking source addresses")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--bin", default=str(ROOT / ".build-release/release/gatehouse"))
    ap.add_argument("--keep", action="store_true", help="keep the data folder (database, logs)")
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--channels", default="sms", help="the project's phone.channels, comma-separated (sms first)")
    ap.add_argument("--fallback-after", type=int, default=0, help="phone.fallback_after_seconds (0: none; else 20…600)")
    ap.add_argument("--receipts", action="store_true", help="the gateway reports back: attacking numbers undelivered, others delivered")
    args = ap.parse_args()
    if not (0 < args.attack <= 20000 and 0 <= args.legit <= 1000 and 0 < args.addresses <= 60000):
        sys.exit("counts out of bounds")
    phone = {"channels": args.channels.split(",")} if args.channels != "sms" else {}
    if args.fallback_after:
        phone["fallback_after_seconds"] = args.fallback_after
    run = simulate(args.bin, args.attack, args.legit, args.addresses, args.threads, args.seed, keep=args.keep, phone=phone or None,
                   receipts=args.receipts)
    run.close()
    if args.keep:
        print(f"data folder kept: {run.folder}")
    if args.json:
        Path(args.json).write_text(json.dumps(run.summary, indent=2))


if __name__ == "__main__":
    main()
