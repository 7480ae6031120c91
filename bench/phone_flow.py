#!/usr/bin/env python3
"""Phone sign-in throughput through nginx: each client thread loops
`accounts:sendVerificationCode` + `accounts:signInWithPhoneNumber` with its own test number
(fixed code, no SMS), and the script reports complete flows per second and latency percentiles.

    python3 bench/phone_flow.py [--threads 8] [--seconds 15] [--bin PATH]

Not a test: it starts `gatehouse dev` on a free port with a throw-away data folder.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=8, help="client threads (at most 10: one test number each)")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--bin", default=None, help="gatehouse binary (default: swift build --show-bin-path)")
    args = ap.parse_args()
    threads = max(1, min(args.threads, 10))
    binary = args.bin or subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                                        check=True).stdout.strip() + "/gatehouse"

    numbers = {f"+1555555{i:04d}": f"{100000 + i * 11111:06d}"[-6:] for i in range(100, 100 + threads)}
    config = {"mode": "dev", "log_level": "warning",
              "projects": [{"id": "demo-gatehouse", "test_phone_numbers": numbers,
                            "phone": {"verify_attempts_per_ip_per_5min": 10000}}]}
    data = Path(tempfile.mkdtemp(prefix="gh-bench-"))
    (data / "gatehouse.json").write_text(json.dumps(config))
    port = free_port()
    proc = subprocess.Popen([binary, "dev", "--port", str(port), "--data", str(data), "--config", str(data / "gatehouse.json")],
                            stdout=subprocess.PIPE, stderr=open(data / "gatehouse.log", "wb"))
    try:
        line = proc.stdout.readline()
        if not line.startswith(b"ready "):
            sys.exit(f"gatehouse did not start: {line!r}\n{(data / 'gatehouse.log').read_text()[-2000:]}")
        base = f"http://127.0.0.1:{port}/identitytoolkit.googleapis.com/v1/accounts:"
        latencies, errors = [], []
        lock = threading.Lock()
        stop_at = time.perf_counter() + args.seconds

        def client(number, code):
            s = requests.Session()
            mine, bad = [], []
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                r = s.post(base + "sendVerificationCode", params={"key": "bench"}, json={"phoneNumber": number})
                if r.status_code != 200:
                    bad.append(r.text[:200]); continue
                r = s.post(base + "signInWithPhoneNumber", params={"key": "bench"},
                           json={"sessionInfo": r.json()["sessionInfo"], "code": code})
                if r.status_code != 200:
                    bad.append(r.text[:200]); continue
                mine.append(time.perf_counter() - t0)
            with lock:
                latencies.extend(mine)
                errors.extend(bad)

        # Warm-up: keys, caches, connections.
        first = next(iter(numbers.items()))
        w = requests.post(base + "sendVerificationCode", params={"key": "bench"}, json={"phoneNumber": first[0]}).json()
        requests.post(base + "signInWithPhoneNumber", params={"key": "bench"}, json={"sessionInfo": w["sessionInfo"], "code": first[1]})

        started = time.perf_counter()
        ts = [threading.Thread(target=client, args=item) for item in numbers.items()]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        elapsed = time.perf_counter() - started
        latencies.sort()

        def pct(p):
            return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1000 if latencies else float("nan")

        print(f"phone flow (send + sign-in, test numbers, through nginx), {threads} client threads, {elapsed:.1f} s, "
              f"{os.cpu_count()} CPUs")
        print(f"  flows:     {len(latencies)} ok, {len(errors)} failed")
        print(f"  rate:      {len(latencies) / elapsed:.1f} flows/s")
        print(f"  latency:   p50 {pct(50):.1f} ms, p90 {pct(90):.1f} ms, p99 {pct(99):.1f} ms, max {pct(100):.1f} ms"
              + (f", mean {statistics.mean(latencies) * 1000:.1f} ms" if latencies else ""))
        if errors:
            print("  first error:", errors[0])
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
