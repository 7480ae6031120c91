#!/usr/bin/env python3
"""TOTP second-factor sign-in throughput through nginx, against the same round's RS256 signing
rate, and a CORS preflight's cost against the health check's (BENCHMARKS.md "TOTP and CORS").

A flow is four requests: an email link made by the admin API (as `generateSignInWithEmailLink`
does, no mail), `signInWithEmailLink` answering the pending credential, and
`mfaSignIn:finalize` with the user's TOTP code (pyotp); one RS256 ID token is signed per flow.
A TOTP code is accepted once per factor and 30-second step, so every client thread owns many
users and signs each in with the next step it has not used (the window is ±1 step).

    python3 bench/totp_flow.py [--threads 4] [--users 600] [--seconds 15] [--rounds 3] [--bin PATH]

Not a test: it starts `gatehouse dev` on a free port with a throw-away data folder, and `wrk`
for the preflight and health rates.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyotp
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.procs import descendants, sign_rate_if_alone, tree_cpu_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "demo-gatehouse"
ITK = "/identitytoolkit.googleapis.com"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rsa_sign_rate(seconds: int) -> float:
    """`openssl speed rsa2048` signs per second on one core."""
    out = subprocess.run(["openssl", "speed", "-seconds", str(seconds), "rsa2048"], capture_output=True, text=True).stdout
    m = re.search(r"rsa 2048 bits\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)", out)
    return float(m.group(1)) if m else float("nan")


def wrk_rate(url: str, seconds: int, script: Path | None = None) -> float:
    cmd = ["wrk", "-t2", "-c16", f"-d{seconds}s", url]
    if script:
        cmd[1:1] = ["-s", str(script)]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    return float(m.group(1)) if m else float("nan")


class User:
    def __init__(self, email, secret, enrollment):
        self.email, self.totp, self.enrollment, self.last_step = email, pyotp.TOTP(secret), enrollment, 0


def enrol(base, s, i) -> User:
    email = f"totp-bench-{i}@bench.invalid"
    auth = {"Authorization": "Bearer owner"}
    r = s.post(base + f"{ITK}/v1/projects/{PROJECT}/accounts:sendOobCode", headers=auth,
               json={"requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": True, "continueUrl": "https://127.0.0.1/"})
    r = s.post(base + f"{ITK}/v1/accounts:signInWithEmailLink", params={"key": "bench"}, json={"email": email, "oobCode": r.json()["oobCode"]})
    id_token = r.json()["idToken"]
    info = s.post(base + f"{ITK}/v2/accounts/mfaEnrollment:start", params={"key": "bench"},
                  json={"idToken": id_token, "totpEnrollmentInfo": {}}).json()["totpSessionInfo"]
    r = s.post(base + f"{ITK}/v2/accounts/mfaEnrollment:finalize", params={"key": "bench"},
               json={"idToken": id_token, "totpVerificationInfo": {"sessionInfo": info["sessionInfo"],
                                                                   "verificationCode": pyotp.TOTP(info["sharedSecretKey"]).now()}})
    assert r.status_code == 200, r.text
    lookup = s.post(base + f"{ITK}/v1/projects/{PROJECT}/accounts:lookup", headers=auth, json={"email": [email]}).json()
    u = User(email, info["sharedSecretKey"], lookup["users"][0]["mfaInfo"][0]["mfaEnrollmentId"])
    u.last_step = int(time.time()) // 30
    return u


def flow(base, s, u: User) -> bool:
    """One whole sign-in, or False when the user has no unused step in the window now."""
    now = int(time.time()) // 30
    step = max(u.last_step + 1, now - 1)
    if step > now + 1:
        return False
    auth = {"Authorization": "Bearer owner"}
    r = s.post(base + f"{ITK}/v1/projects/{PROJECT}/accounts:sendOobCode", headers=auth,
               json={"requestType": "EMAIL_SIGNIN", "email": u.email, "returnOobLink": True, "continueUrl": "https://127.0.0.1/"})
    r = s.post(base + f"{ITK}/v1/accounts:signInWithEmailLink", params={"key": "bench"}, json={"email": u.email, "oobCode": r.json()["oobCode"]})
    pending = r.json()["mfaPendingCredential"]
    r = s.post(base + f"{ITK}/v2/accounts/mfaSignIn:finalize", params={"key": "bench"},
               json={"mfaPendingCredential": pending, "mfaEnrollmentId": u.enrollment,
                     "totpVerificationInfo": {"verificationCode": u.totp.at(step * 30)}})
    if r.status_code != 200 or '"idToken"' not in r.text:
        raise RuntimeError(r.text[:300])
    u.last_step = step
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--users", type=int, default=600, help="users per thread")
    ap.add_argument("--seconds", type=float, default=10, help="per round; at most 25 (one step)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=str(ROOT / ".build-release/release/gatehouse"))
    args = ap.parse_args()
    args.seconds = min(args.seconds, 25)
    config = {"mode": "dev", "log_level": "warning", "projects": [{
        "id": PROJECT, "mfa": "ENABLED", "mfa_totp": {"enabled": True},
        "phone": {"verify_attempts_per_ip_per_5min": 10_000, "failure_budget_per_day": 100},
        "email_link": {"sends_per_ip_per_hour": 10_000}}]}
    data = Path(tempfile.mkdtemp(prefix="gh-bench-totp-"))
    (data / "gatehouse.json").write_text(json.dumps(config))
    port = free_port()
    proc = subprocess.Popen([args.bin, "dev", "--port", str(port), "--data", str(data), "--config", str(data / "gatehouse.json")],
                            stdout=subprocess.PIPE, stderr=open(data / "gatehouse.log", "wb"))
    try:
        if not proc.stdout.readline().startswith(b"ready "):
            sys.exit("gatehouse did not start:\n" + (data / "gatehouse.log").read_text()[-2000:])
        base = f"http://127.0.0.1:{port}"
        # `gatehouse dev`, its responder, nginx and its worker: the server side of every flow.
        server_pids = descendants(proc.pid)
        t0 = time.time()
        owned = [[] for _ in range(args.threads)]

        def setup(k):
            s = requests.Session()
            owned[k] = [enrol(base, s, k * args.users + i) for i in range(args.users)]
        ts = [threading.Thread(target=setup, args=(k,)) for k in range(args.threads)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print(f"enrolled {args.threads * args.users} TOTP users in {time.time() - t0:.0f} s")
        preflight = data / "preflight.lua"
        preflight.write_text('wrk.method = "OPTIONS"\nwrk.headers["Origin"] = "https://app.example.com"\n'
                             'wrk.headers["Access-Control-Request-Method"] = "POST"\n'
                             'wrk.headers["Access-Control-Request-Headers"] = "content-type,x-client-version"\n')
        for rnd in range(1, args.rounds + 1):
            # Each round starts on a fresh 30-second step: every user then has the current and the
            # next step unused, whatever the last round spent.
            time.sleep(30 - time.time() % 30 + 0.2)
            done, failed = [0] * args.threads, []
            stop_at = time.perf_counter() + args.seconds

            def client(k):
                s, i = requests.Session(), 0
                users = owned[k]
                while time.perf_counter() < stop_at:
                    u = users[i % len(users)]
                    i += 1
                    try:
                        if flow(base, s, u):
                            done[k] += 1
                    except Exception as e:  # noqa: BLE001 - a bench reports, it does not stop
                        failed.append(str(e))
            started, server0 = time.perf_counter(), tree_cpu_seconds(server_pids)
            ts = [threading.Thread(target=client, args=(k,)) for k in range(args.threads)]
            [t.start() for t in ts]
            [t.join() for t in ts]
            rate = sum(done) / (time.perf_counter() - started)
            server_us = (tree_cpu_seconds(server_pids) - server0) / max(sum(done), 1) * 1e6
            sign = rsa_sign_rate(3)
            health = wrk_rate(base + "/__/auth/health", 5)
            pre = wrk_rate(base + f"{ITK}/v1/accounts:lookup?key=bench", 5, preflight)
            print(f"round {rnd}: TOTP sign-ins {rate:.1f} flows/s ({sum(done)} ok, {len(failed)} failed); RS256 {sign:.0f} signs/s "
                  f"on one core → {rate / sign:.3f} of it; Gatehouse + nginx {server_us:.0f} µs a flow, which on the whole machine "
                  f"allows {sign_rate_if_alone(server_us, sign):.2f} × the sign rate (target ≥ 0.5); "
                  f"preflight {pre:.0f} req/s vs health {health:.0f} req/s → {pre / health:.2f} ×")
            if failed:
                print("  first failure:", failed[0])
        print(f"{os.cpu_count()} CPUs; client threads, nginx and Gatehouse share them")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
