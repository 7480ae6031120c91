#!/usr/bin/env python3
"""Passkey sign-in throughput through nginx, against the same round's RS256 signing rate, and
the verify of a passkey-only location (`?require=passkey`) against the plain verify
(BENCHMARKS.md "Passkeys").

A flow is two requests: `accounts/passkeySignIn:start` (a challenge) and
`accounts/passkeySignIn:finalize` with the authenticator's ES256 assertion; the server checks one
ES256 signature and signs one RS256 ID token. Setup makes every user the way the JS SDK preview
does: an anonymous `accounts:signUp`, then `passkeyEnrollment:start|finalize` with one ES256
passkey. The authenticator is the software one of Tests/integration/webauthn_support.py. Its
signature counter grows by one per assertion for each credential (a hardware key's behaviour, the
stricter path: the server compares it and writes it back); each client thread owns its users, so
no credential is used by two threads at once.

Each client thread connects from its own loopback address (127.0.<thread + 1>.1, bound as the
source address of its connections): `gatehouse dev`'s nginx passes the peer address to Gatehouse,
so each thread is one client for the per-client budgets (100 anonymous sign-ups an hour, the
passkey challenges and the finalize checks per 5 minutes), as distinct users would be.

A round is `--seconds` of flows, then `openssl speed rsa2048` for 3 s (one core), then the verify
side. Per round: flows/s and its ratio to that sign rate; p50 and p99 of a flow's latency (start
sent to finalize answered); failures; the driver's own CPU (`time.process_time()` of this process
over the flows' wall time: every client thread's JSON, HTTP and ES256 signing), in cores and as a
share of the machine; and the CPU per flow of `gatehouse dev`, its responder and its nginx
(`/proc/PID/stat`, user + system).

The verify side: a session cookie made from a passkey sign-in's ID token (admin
`createSessionCookie`) is sent as `__Host-gatehouse` to `/demo/passkey/` (protect-passkey.conf,
`?require=passkey`) and to `/demo/` (protect.conf) by `wrk -t2 -c16`: one uncounted second, then
four runs a round in the order A B B A (B A A B in even rounds). The ratio is the passkey side's
mean over the plain side's; each side's server CPU per request (Gatehouse and nginx, over its two
runs) is given too.

    python3 bench/passkey_flow.py [--threads 4] [--users 50] [--seconds 10] [--verify-seconds 4] [--rounds 3] [--bin PATH]

Not a test. Bounded: at most 30 s of flows and 9 rounds, at most 99 users a thread, and each
thread stops before its budgets (10,000 challenges and finalize checks) run out. It talks to
127.0.0.0/8 only, starts `gatehouse dev` on a free port with a throw-away data folder, stops it
by its pid and removes the folder on the way out. Needs `requests`, `cryptography`, `wrk` and
`openssl`.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests
from requests.adapters import HTTPAdapter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests/integration"))
from webauthn_support import ES256, assertion_response, decode_any, new_credential, registration_response  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
from harness.procs import descendants, sign_rate_if_alone, tree_cpu_seconds as cpu_seconds  # noqa: E402

PROJECT = "demo-gatehouse"
ITK = "/identitytoolkit.googleapis.com"
V2 = f"{ITK}/v2/accounts"
KEY = {"key": "bench"}
COOKIE = "__Host-gatehouse"
# The per-client budgets the configuration below allows (their maximum), and a margin kept free.
BUDGET = 10_000
MARGIN = 20
SIGN_UPS_PER_HOUR = 100


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rsa_sign_rate(seconds: int) -> float:
    """`openssl speed rsa2048` signs per second on one core."""
    out = subprocess.run(["openssl", "speed", "-seconds", str(seconds), "rsa2048"], capture_output=True, text=True).stdout
    m = re.search(r"rsa 2048 bits\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)", out)
    return float(m.group(1)) if m else float("nan")


def wrk_run(url: str, seconds: int, headers=()) -> tuple[float, int, int]:
    """Requests/s, requests, and the count of answers that were not 2xx/3xx."""
    cmd = ["wrk", "-t2", "-c16", f"-d{seconds}s", "--timeout", "5s"]
    for h in headers:
        cmd += ["-H", h]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=seconds + 30).stdout
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    n = re.search(r"(\d+) requests in", out)
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return (float(m.group(1)) if m else float("nan")), (int(n.group(1)) if n else 0), (int(bad.group(1)) if bad else 0)


def percentile(sorted_values, q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


class SourceAddress(HTTPAdapter):
    """Connections from one loopback address (the client address Gatehouse sees)."""

    def __init__(self, address: str, **kw):
        self.address = address
        super().__init__(**kw)

    def init_poolmanager(self, *args, **kw):
        kw["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kw)


def session(address: str) -> requests.Session:
    s = requests.Session()
    s.mount("http://", SourceAddress(address))
    return s


class Client:
    """One client thread's connection, origin and budget account."""

    def __init__(self, base: str, origin: str, address: str):
        self.base, self.origin, self.address = base, origin, address
        self.s = session(address)
        self.challenges = 0     # passkey challenges and finalize checks spent (each flow one of each)

    def post(self, path, body, **kw):
        return self.s.post(self.base + path, json=body, timeout=10, **kw)

    def v2(self, name, body):
        r = self.post(f"{V2}/{name}", body, params=KEY)
        if r.status_code != 200:
            raise RuntimeError(f"{name}: {r.status_code} {r.text[:300]}")
        return r.json()

    def enrol(self):
        """An anonymous account with one ES256 passkey: (localId, credential)."""
        r = self.post(f"{ITK}/v1/accounts:signUp", {"returnSecureToken": True}, params=KEY)
        if r.status_code != 200:
            raise RuntimeError(f"signUp: {r.status_code} {r.text[:300]}")
        user = r.json()
        options = self.v2("passkeyEnrollment:start", {"idToken": user["idToken"]})["credentialCreationOptions"]
        self.challenges += 1
        cred = new_credential(ES256, user_handle=decode_any(options["user"]["id"]))
        response = registration_response(cred, decode_any(options["challenge"]), self.origin)
        self.v2("passkeyEnrollment:finalize", {"idToken": user["idToken"], "authenticatorRegistrationResponse": response})
        return user["localId"], cred

    def sign_in(self, local_id, cred) -> dict:
        """One flow: start, the assertion (counter + 1), finalize; the answer."""
        self.challenges += 1
        challenge = decode_any(self.v2("passkeySignIn:start", {})["credentialRequestOptions"]["challenge"])
        response = assertion_response(cred, challenge, self.origin)     # counter: the credential's next
        body = self.v2("passkeySignIn:finalize", {"authenticatorAuthenticationResponse": response})
        if body.get("localId") != local_id or not body.get("idToken"):
            raise RuntimeError(f"finalize answered another account or no token: {str(body)[:300]}")
        return body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=4, help="client threads, each its own loopback address (at most 32)")
    ap.add_argument("--users", type=int, default=50, help="users (passkeys) per thread; at most 99")
    ap.add_argument("--seconds", type=float, default=10, help="of flows per round; at most 30")
    ap.add_argument("--verify-seconds", type=int, default=4, help="per wrk run of the verify side (four a round); at most 30")
    ap.add_argument("--rounds", type=int, default=3, help="at most 9")
    ap.add_argument("--bin", default=str(ROOT / ".build-release/release/gatehouse"))
    args = ap.parse_args()
    args.threads = max(1, min(args.threads, 32))
    args.users = max(1, min(args.users, SIGN_UPS_PER_HOUR - 1))
    args.seconds = max(1, min(args.seconds, 30))
    args.verify_seconds = max(1, min(args.verify_seconds, 30))
    args.rounds = max(1, min(args.rounds, 9))

    config = {"mode": "dev", "log_level": "warning", "projects": [{
        "id": PROJECT,
        "passkeys": {"enabled": True, "challenges_per_ip_per_5min": BUDGET},
        "phone": {"verify_attempts_per_ip_per_5min": BUDGET, "failure_budget_per_day": 100}}]}
    data = Path(tempfile.mkdtemp(prefix="gh-bench-passkey-"))
    (data / "gatehouse.json").write_text(json.dumps(config))
    port = free_port()
    env = dict(os.environ)
    env.setdefault("GATEHOUSE_HOME", str(ROOT))     # public/ and nginx/ of this checkout, whatever --bin is
    server_pids = []
    proc = subprocess.Popen([args.bin, "dev", "--port", str(port), "--data", str(data), "--config", str(data / "gatehouse.json")],
                            stdout=subprocess.PIPE, stderr=open(data / "gatehouse.log", "wb"), env=env)
    try:
        if not proc.stdout.readline().startswith(b"ready "):
            sys.exit("gatehouse did not start:\n" + (data / "gatehouse.log").read_text()[-2000:])
        base = f"http://127.0.0.1:{port}"
        origin = f"http://localhost:{port}"      # dev mode: the relying party is localhost
        server_pids = descendants(proc.pid)

        # --- setup: every thread enrols its own users from its own address ---------------------
        clients = [Client(base, origin, f"127.0.{k + 1}.1") for k in range(args.threads)]
        owned = [[] for _ in clients]
        setup_errors = []

        def setup(k):
            try:
                owned[k] = [clients[k].enrol() for _ in range(args.users)]
            except Exception as e:  # noqa: BLE001 - reported below
                setup_errors.append(f"thread {k}: {e}")
        t0 = time.time()
        ts = [threading.Thread(target=setup, args=(k,)) for k in range(args.threads)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        if setup_errors:
            sys.exit("setup failed: " + setup_errors[0])
        print(f"enrolled {args.threads * args.users} users with one ES256 passkey each in {time.time() - t0:.1f} s "
              f"({args.threads} client threads, addresses 127.0.1.1–127.0.{args.threads}.1)")

        # --- the verify side's cookies -----------------------------------------------------------
        main_client = Client(base, origin, "127.0.0.1")
        local_id, cred = main_client.enrol()
        id_token = main_client.sign_in(local_id, cred)["idToken"]
        admin = {"Authorization": "Bearer owner"}

        def cookie_for(token):
            r = main_client.post(f"{ITK}/v1/projects/{PROJECT}:createSessionCookie", {"idToken": token, "validDuration": 3600},
                                 headers=admin)
            if r.status_code != 200:
                sys.exit(f"createSessionCookie: {r.status_code} {r.text[:300]}")
            return r.json()["sessionCookie"]
        passkey_cookie = cookie_for(id_token)
        r = main_client.post(f"{ITK}/v1/accounts:signUp", {"returnSecureToken": True}, params=KEY)
        anonymous_cookie = cookie_for(r.json()["idToken"])

        def status(path, cookie):
            r = main_client.s.get(base + path, headers={"Cookie": f"{COOKIE}={cookie}"}, allow_redirects=False, timeout=10)
            return r.status_code
        checks = {"passkey session, /demo/passkey/": status("/demo/passkey/", passkey_cookie),
                  "passkey session, /demo/": status("/demo/", passkey_cookie),
                  "anonymous session, /demo/passkey/": status("/demo/passkey/", anonymous_cookie)}
        print("checks: " + ", ".join(f"{k} → {v}" for k, v in checks.items()))
        if checks["passkey session, /demo/passkey/"] != 200 or checks["passkey session, /demo/"] != 200 \
                or checks["anonymous session, /demo/passkey/"] == 200:
            sys.exit("the protected locations do not answer as expected; no figures")
        cookie_header = [f"Cookie: {COOKIE}={passkey_cookie}"]

        # --- rounds --------------------------------------------------------------------------------
        limit = BUDGET - MARGIN
        summary = []
        for rnd in range(1, args.rounds + 1):
            done = [0] * args.threads
            latencies = [[] for _ in clients]
            failed, capped = [], []
            stop_at = time.perf_counter() + args.seconds

            def client(k):
                c, users, i = clients[k], owned[k], 0
                while time.perf_counter() < stop_at:
                    if c.challenges >= limit:
                        capped.append(k)
                        return
                    local_id, cred = users[i % len(users)]
                    i += 1
                    t = time.perf_counter()
                    try:
                        c.sign_in(local_id, cred)
                        latencies[k].append(time.perf_counter() - t)
                        done[k] += 1
                    except Exception as e:  # noqa: BLE001 - a bench reports, it does not stop
                        failed.append(str(e))
            cpu0, srv0 = time.process_time(), cpu_seconds(server_pids)
            started = time.perf_counter()
            ts = [threading.Thread(target=client, args=(k,)) for k in range(args.threads)]
            [t.start() for t in ts]
            [t.join() for t in ts]
            wall = time.perf_counter() - started
            client_cpu, server_cpu = time.process_time() - cpu0, cpu_seconds(server_pids) - srv0
            flows = sum(done)
            rate = flows / wall
            lat = sorted(x for per in latencies for x in per)
            sign = rsa_sign_rate(3)

            # The verify side: the two locations A B B A (B A A B in even rounds), so a drift of
            # the machine's speed within the round weighs on both alike; each side's rate is the
            # mean of its two runs.
            pair = [("passkey", "/demo/passkey/"), ("plain", "/demo/")]
            if rnd % 2 == 0:
                pair.reverse()
            order = pair + pair[::-1]
            runs = {"passkey": [], "plain": []}
            wrk_run(base + "/demo/", 1, cookie_header)     # not counted: whatever the flows left to do runs here
            for name, path in order:
                before = cpu_seconds(server_pids)
                rate_, count, bad = wrk_run(base + path, args.verify_seconds, cookie_header)
                runs[name].append((rate_, count, bad, cpu_seconds(server_pids) - before))
            verify = {name: {"rate": statistics.mean(g[0] for g in got), "bad": sum(g[2] for g in got),
                             "us": sum(g[3] for g in got) / max(1, sum(g[1] for g in got)) * 1e6}
                      for name, got in runs.items()}
            vratio = verify["passkey"]["rate"] / verify["plain"]["rate"]
            row = {"round": rnd, "flows_per_s": rate, "flows": flows, "failed": len(failed), "sign": sign, "ratio": rate / sign,
                   "p50_ms": percentile(lat, 0.50) * 1000, "p99_ms": percentile(lat, 0.99) * 1000,
                   "client_cores": client_cpu / wall, "client_share": client_cpu / (wall * os.cpu_count()),
                   "client_us_per_flow": client_cpu / max(flows, 1) * 1e6, "server_us_per_flow": server_cpu / max(flows, 1) * 1e6,
                   "verify_passkey": verify["passkey"]["rate"], "verify_plain": verify["plain"]["rate"], "verify_ratio": vratio,
                   "verify_passkey_us": verify["passkey"]["us"], "verify_plain_us": verify["plain"]["us"],
                   "verify_non2xx": verify["passkey"]["bad"] + verify["plain"]["bad"]}
            row["server_ratio"] = sign_rate_if_alone(row["server_us_per_flow"], sign)
            summary.append(row)
            print(f"round {rnd}: passkey sign-ins {rate:.1f} flows/s ({flows} ok, {len(failed)} failed"
                  f"{', threads stopped at their budget: ' + str(sorted(set(capped))) if capped else ''}); "
                  f"RS256 {sign:.0f} signs/s on one core → {row['ratio']:.3f} of it; "
                  f"latency p50 {row['p50_ms']:.1f} ms, p99 {row['p99_ms']:.1f} ms; "
                  f"client CPU {client_cpu:.2f} s in {wall:.2f} s = {row['client_cores']:.2f} cores "
                  f"({row['client_share'] * 100:.0f} % of the machine, {row['client_us_per_flow']:.0f} µs a flow), "
                  f"Gatehouse + nginx {row['server_us_per_flow']:.0f} µs a flow, which on the whole machine allows "
                  f"{row['server_ratio']:.2f} × the sign rate (target ≥ 0.5)")
            print(f"  verify: /demo/passkey/ {row['verify_passkey']:.0f} req/s, /demo/ {row['verify_plain']:.0f} req/s "
                  f"→ {vratio:.2f} × (order: {', '.join(n for n, _ in order)}; non-2xx/3xx: {row['verify_non2xx']}); "
                  f"Gatehouse + nginx {row['verify_passkey_us']:.1f} / {row['verify_plain_us']:.1f} µs a request")
            if failed:
                print("  first failure:", failed[0])

        def med(key):
            return statistics.median(r[key] for r in summary)
        print(f"median of {len(summary)} rounds: {med('flows_per_s'):.1f} flows/s, RS256 {med('sign'):.0f} signs/s, "
              f"ratio {med('ratio'):.3f}; p50 {med('p50_ms'):.1f} ms, p99 {med('p99_ms'):.1f} ms; "
              f"client {med('client_cores'):.2f} cores ({med('client_share') * 100:.0f} %); "
              f"Gatehouse + nginx {med('server_us_per_flow'):.0f} µs a flow: {med('server_ratio'):.2f} × the sign rate with the "
              f"machine to themselves (target ≥ 0.5); verify ratio {med('verify_ratio'):.2f} × (target ≥ 0.9), "
              f"Gatehouse + nginx {med('verify_passkey_us'):.1f} / {med('verify_plain_us'):.1f} µs a request")
        print(f"{os.cpu_count()} CPUs; client threads, wrk, nginx and Gatehouse share them")
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)     # `dev` stops its nginx and responder
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                for pid in server_pids[1:]:      # its nginx and responder, which it could not stop
                    try:
                        os.kill(pid, signal.SIGTERM)
                    except OSError:
                        pass
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
