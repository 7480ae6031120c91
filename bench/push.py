#!/usr/bin/env python3
"""Silent-push latency and throughput: the time from `verifyIosClient` answered to the push
received by a fake APNs gateway (HTTP/2 over TLS on 127.0.0.1, Tests/integration/apns_gateway.py),
idle and under the phone-flow load, and how many pushes per second one HTTP/2 connection carries.

    python3 bench/push.py [--bin PATH] [--pushes 300] [--interval-ms 50] [--load-threads 4]
                          [--burst 2000] [--json OUT]

Not a test: it starts `gatehouse dev` (nginx + responder) on a free port with a throw-away data
folder and a production-mode configuration whose iOS app pushes to the fake gateway. The phone
load is test numbers (no SMS) looping send + sign-in, as bench/phone_flow.py. Results go to
BENCHMARKS.md "Silent push" by hand (the target: p99 ≤ 100 ms under load).
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))
from apns_gateway import FakeAPNs, make_apns_key  # noqa: E402  (the tests' fake gateway)

PROJECT, API_KEY, BUNDLE = "bench-push", "bench-push-key", "com.example.benchpush"
KEY_ID, TEAM_ID = "KEYID12345", "TEAMID1234"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(gw, key_path, numbers):
    return {
        "$comment": "written by bench/push.py",
        "mode": "production", "log_level": "warning",
        "public_origin": "https://auth.push-bench.invalid", "admin_token": "push-bench-admin-" + "x" * 32,
        "projects": [{
            "id": PROJECT, "api_keys": [API_KEY], "authorized_domains": ["127.0.0.1", "localhost"],
            "sms_origin_domain": "auth.push-bench.invalid", "sms_regions": ["US"], "test_phone_numbers": numbers,
            "phone": {"verify_attempts_per_ip_per_5min": 10000},
            # One client address sends everything here: budgets far above the run's counts.
            "push": {"verifications_per_ip_per_hour": 100000, "pushes_per_device_per_hour": 1000},
            "ios_apps": [{"bundle_id": BUNDLE, "team_id": TEAM_ID, "app_id": "1:1234567890:ios:bench",
                          "apns": {"key_id": KEY_ID, "key_file": str(key_path), "gateway": gw.url, "sandbox_gateway": gw.url,
                                   "ca_file": gw.ca_file, "allow_custom_gateway": True}}],
        }],
        "sms": {"provider": "command", "command": "/bin/true"},
        "email": {"transport": "sendmail", "from": "noreply@push-bench.invalid", "command": ["/bin/true"]},
    }


def pct(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * len(v)))]


def arrivals(gw):
    """Device token → when the gateway had the whole request (time.monotonic)."""
    return {r["path"].rsplit("/", 1)[-1]: r["received_at"] for r in gw.requests}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=None, help="gatehouse binary (default: .build-release, else swift build --show-bin-path)")
    ap.add_argument("--pushes", type=int, default=300, help="pushes timed per phase")
    ap.add_argument("--interval-ms", type=float, default=50, help="pause between timed pushes")
    ap.add_argument("--load-threads", type=int, default=4, help="phone-flow client threads during the loaded phase")
    ap.add_argument("--burst", type=int, default=2000, help="pushes for the throughput phase")
    ap.add_argument("--json", default=None, help="write the figures here too")
    args = ap.parse_args()
    binary = args.bin
    if not binary:
        release = ROOT / ".build-release" / "release" / "gatehouse"
        binary = str(release) if release.exists() else subprocess.run(
            ["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip() + "/gatehouse"

    work = Path(tempfile.mkdtemp(prefix="gh-push-bench-"))
    key_path, public_key = make_apns_key(work)
    gw = FakeAPNs(KEY_ID, TEAM_ID, public_key, work)
    gw.start()
    numbers = {f"+1555555{i:04d}": f"{100000 + i * 11111:06d}"[-6:] for i in range(100, 100 + max(1, args.load_threads))}
    data = work / "data"
    data.mkdir()
    (data / "gatehouse.json").write_text(json.dumps(config(gw, key_path, numbers)))
    port = free_port()
    proc = subprocess.Popen([binary, "dev", "--port", str(port), "--data", str(data), "--config", str(data / "gatehouse.json")],
                            stdout=subprocess.PIPE, stderr=open(work / "gatehouse.log", "wb"))
    results = {}
    try:
        line = proc.stdout.readline()
        if not line.startswith(b"ready "):
            sys.exit(f"gatehouse did not start: {line!r}\n{(work / 'gatehouse.log').read_text()[-2000:]}")
        itk = f"http://127.0.0.1:{port}/identitytoolkit.googleapis.com/v1/accounts:"
        headers = {"X-Ios-Bundle-Identifier": BUNDLE}
        serial = [0]

        def device():
            serial[0] += 1
            return f"{serial[0]:064X}"

        def timed(label):
            """`--pushes` pushes, one every --interval-ms: answered → received at the gateway."""
            s = requests.Session()
            answered = {}
            for _ in range(args.pushes):
                token = device()
                r = s.post(itk + "verifyIosClient", params={"key": API_KEY}, json={"appToken": token}, headers=headers)
                answered[token] = time.monotonic()
                if r.status_code != 200:
                    sys.exit(f"verifyIosClient: {r.status_code} {r.text[:300]}")
                time.sleep(args.interval_ms / 1000)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not set(answered) <= set(arrivals(gw)):
                time.sleep(0.05)
            seen = arrivals(gw)
            lost = [t for t in answered if t not in seen]
            # A push may reach the gateway before the client has read the answer: that counts as 0.
            ms = [max(0.0, seen[t] - answered[t]) * 1000 for t in answered if t in seen]
            results[label] = {"pushes": len(answered), "lost": len(lost), "p50_ms": round(pct(ms, 50), 2),
                              "p90_ms": round(pct(ms, 90), 2), "p99_ms": round(pct(ms, 99), 2), "max_ms": round(max(ms), 2)}
            print(f"{label:>26}: {len(ms)} pushes, p50 {pct(ms, 50):.1f} ms, p90 {pct(ms, 90):.1f} ms, "
                  f"p99 {pct(ms, 99):.1f} ms, max {max(ms):.1f} ms, lost {len(lost)}")

        # Warm-up: keys, connection to the gateway, provider token.
        requests.post(itk + "verifyIosClient", params={"key": API_KEY}, json={"appToken": device()}, headers=headers)
        gw.wait_for(1)

        timed("idle")

        stop = threading.Event()
        flows = [0]
        lock = threading.Lock()

        def phone_load(number, code):
            s = requests.Session()
            n = 0
            while not stop.is_set():
                r = s.post(itk + "sendVerificationCode", params={"key": API_KEY}, json={"phoneNumber": number})
                if r.status_code == 200:
                    s.post(itk + "signInWithPhoneNumber", params={"key": API_KEY}, json={"sessionInfo": r.json()["sessionInfo"], "code": code})
                    n += 1
            with lock:
                flows[0] += n

        load = [threading.Thread(target=phone_load, args=item) for item in numbers.items()]
        t0 = time.monotonic()
        for t in load:
            t.start()
        try:
            timed(f"under phone load ({len(load)} thr)")
        finally:
            stop.set()
            for t in load:
                t.join()
        rate = flows[0] / (time.monotonic() - t0)
        results["phone_flows_per_s_during_load"] = round(rate, 1)
        print(f"{'phone flows meanwhile':>26}: {rate:.0f}/s")

        # Throughput: a burst committed as fast as 4 clients can, then drained by the push worker.
        before = len(gw.requests)
        tokens = [device() for _ in range(args.burst)]
        chunks = [tokens[i::4] for i in range(4)]

        def burst(chunk):
            s = requests.Session()
            for token in chunk:
                s.post(itk + "verifyIosClient", params={"key": API_KEY}, json={"appToken": token}, headers=headers)

        workers = [threading.Thread(target=burst, args=(c,)) for c in chunks]
        start = time.monotonic()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        end = time.monotonic()
        committed = end - start
        got = gw.wait_for(before + args.burst, timeout=120)[before:]
        times = sorted(r["received_at"] for r in got)
        span = times[-1] - start
        # What was still queued when the commits ended, and how fast the worker drained it alone.
        backlog = sum(1 for t in times if t > end)
        drain = backlog / (times[-1] - end) if backlog > 1 and times[-1] > end else float("nan")
        connections = sorted({r["connection"] for r in gw.requests})
        results["burst"] = {"pushes": args.burst, "committed_per_s": round(args.burst / committed, 1),
                            "delivered_per_s": round(args.burst / span, 1), "backlog_at_end": backlog,
                            "drain_per_s": round(drain, 1), "connections": len(connections),
                            "invalid": sum(1 for r in got if r["problems"])}
        print(f"{'burst':>26}: {args.burst} pushes committed at {args.burst / committed:.0f}/s, all received after "
              f"{span:.2f} s ({args.burst / span:.0f} pushes/s); {backlog} still queued when the commits ended, "
              f"drained at {drain:.0f} pushes/s; {len(connections)} connection(s), {results['burst']['invalid']} invalid")
        results["cpus"] = os.cpu_count()
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        gw.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
