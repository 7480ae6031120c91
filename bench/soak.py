#!/usr/bin/env python3
"""Soak: the release binary behind the real nginx, at saturation, over a mixed workload for a
long time, sampled every 10 s (RELIABILITY.md "Soak").

    make release
    python3 bench/soak.py --minutes 10 [--threads 12] [--housekeeping-seconds 60] [--bin PATH] [--out DIR]

Starts `gatehouse dev` (nginx + the responder as its child) on a free loopback port with a
throw-away data folder and short lifetimes (codes 60 s, links 5 min, sent messages purged at
the next housekeeping), and client threads that loop, as fast as they are answered, over:
  verify  GET /demo/ with a session cookie (nginx auth_request → /__/auth/verify)
  page    GET /__/auth/phone
  phone   sendVerificationCode + signInWithPhoneNumber with the thread's own test number
  email   sendOobCode (EMAIL_SIGNIN, dev outbox) to a new address
Every `--housekeeping-seconds` it runs `gatehouse housekeeping` on the same database (what the
server's schedule runs every 10 minutes). Every 10 s it writes a CSV row: requests and 5xx so far,
the responder's RSS (VmRSS) and open descriptors, WAL and database size, and the rows of the
purged tables. Exits 1 if any answer was a 5xx, the responder restarted, or the median RSS or
descriptor count of the last minute is above the first minute's by more than 20 % (descriptors:
20 % + 4). Stops every process it started by pid; removes the data folder unless --keep.
"""
import argparse
import csv
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import requests
import requests.adapters

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "demo-gatehouse"
COOKIE = "__Host-gatehouse"
NUMBERS = {f"+1555555{i:04d}": f"{(i * 7919) % 1000000:06d}" for i in range(200, 210)}
TABLES = ["phone_verifications", "email_links", "limit_counters", "outbox", "sessions", "refresh_tokens", "audit_log", "accounts"]
KINDS = ["verify", "page", "phone", "email"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(data):
    return {
        "$comment": "written by bench/soak.py",
        "mode": "dev", "log_level": "warning", "data_dir": str(data),
        "retention": {"outbox_hours": 0},
        "projects": [{
            "id": PROJECT, "test_phone_numbers": NUMBERS, "authorized_domains": ["localhost", "127.0.0.1"],
            "phone": {"code_lifetime_seconds": 60, "verify_attempts_per_ip_per_5min": 10000, "sends_per_ip_per_hour": 10000},
            "email_link": {"link_lifetime_seconds": 300, "sends_per_ip_per_hour": 10000},
        }],
    }


def responder_pid(dev_pid, binary):
    """The child of `gatehouse dev` that runs the gatehouse binary (the other child is nginx)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == dev_pid and os.path.samefile(os.readlink(f"/proc/{entry}/exe"), binary):
                return int(entry)
        except (OSError, ValueError, IndexError):
            continue
    return None


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def size(path):
    try:
        return path.stat().st_size
    except OSError:
        return 0


class Traffic:
    def __init__(self, base, cookie):
        self.base = base
        self.cookie = cookie
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.ok = Counter()
        self.server_errors = Counter()
        self.other = Counter()
        self.first_errors = []

    def count(self, kind, r, expect=200):
        with self.lock:
            if r.status_code >= 500:
                self.server_errors[kind] += 1
                if len(self.first_errors) < 5:
                    self.first_errors.append(f"{kind} {r.status_code} {r.text[:200]}")
            elif r.status_code == expect:
                self.ok[kind] += 1
            else:
                self.other[kind] += 1

    def api(self, s, name, body):
        return s.post(f"{self.base}/identitytoolkit.googleapis.com/v1/accounts:{name}", params={"key": "soak"}, json=body, timeout=30)

    def client(self, i):
        # A new client address every 500 requests of a thread, each in its own /24.
        address = lambda n: f"127.{10 + i}.{(n // 500) % 250}.1"
        s = session_from(address(0))
        number, code = list(NUMBERS.items())[i % len(NUMBERS)]
        kinds = KINDS[i % len(KINDS):] + KINDS[:i % len(KINDS)]
        n = 0
        while not self.stop.is_set():
            kind = kinds[n % len(kinds)]
            n += 1
            if n % 500 == 0:
                s = session_from(address(n))
            try:
                if kind == "verify":
                    self.count(kind, s.get(self.base + "/demo/", headers={"Cookie": f"{COOKIE}={self.cookie}"}, timeout=30,
                                           allow_redirects=False))
                elif kind == "page":
                    self.count(kind, s.get(self.base + "/__/auth/phone", timeout=30))
                elif kind == "phone":
                    r = self.api(s, "sendVerificationCode", {"phoneNumber": number})
                    if r.status_code == 200:
                        r = self.api(s, "signInWithPhoneNumber", {"sessionInfo": r.json()["sessionInfo"], "code": code})
                    self.count(kind, r)
                else:
                    self.count(kind, self.api(s, "sendOobCode", {"requestType": "EMAIL_SIGNIN",
                                                                 "email": f"soak-{i}-{n}-{time.monotonic_ns()}@example.com",
                                                                 "continueUrl": self.base + "/__/auth/health"}))
            except requests.RequestException as e:
                with self.lock:
                    self.server_errors["connection"] += 1
                    if len(self.first_errors) < 5:
                        self.first_errors.append(f"{kind} {type(e).__name__}: {e}")
                s = session_from(address(n))


class FromAddress(requests.adapters.HTTPAdapter):
    """Connections from one loopback source address (127.x.y.z): nginx passes it as REMOTE_ADDR,
    so the per-address limits see many clients, as in real traffic, without trusting a header."""

    def __init__(self, address):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def session_from(address):
    s = requests.Session()
    s.mount("http://", FromAddress(address))
    return s


def median_of(rows, key, t_from, t_to):
    values = [r[key] for r in rows if t_from <= r["t"] <= t_to]
    return statistics.median(values) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--threads", type=int, default=12, help="client threads (each owns one of 10 test numbers for the phone flow)")
    ap.add_argument("--housekeeping-seconds", type=float, default=float(os.environ.get("GATEHOUSE_SOAK_HOUSEKEEPING_SECONDS", 60)))
    ap.add_argument("--sample-seconds", type=float, default=10)
    ap.add_argument("--bin", default=str(ROOT / ".build-release/release/gatehouse"))
    ap.add_argument("--out", default=str(ROOT / "test-output/soak"))
    ap.add_argument("--no-growth-check", action="store_true", help="check only 5xx and restarts (runs too short for medians)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--port", type=int, help="the port nginx listens on (default: one the kernel hands out)")
    args = ap.parse_args()

    binary = os.path.realpath(args.bin)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(tempfile.mkdtemp(prefix="gh-soak-"))
    config_path = data / "gatehouse.json"
    config_path.write_text(json.dumps(config(data), indent=2))
    port = args.port or free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(data / "gatehouse.log", "wb")
    proc = subprocess.Popen([binary, "dev", "--port", str(port), "--data", str(data), "--config", str(config_path)],
                            stdout=subprocess.PIPE, stderr=log)
    traffic = None
    threads = []
    failures = []
    try:
        line = proc.stdout.readline()
        if not line.startswith(b"ready "):
            sys.exit(f"gatehouse did not start: {line!r}\n{(data / 'gatehouse.log').read_text()[-2000:]}")
        pid = responder_pid(proc.pid, binary)
        if pid is None:
            sys.exit("no responder process under gatehouse dev")
        up = requests.post(f"{base}/identitytoolkit.googleapis.com/v1/accounts:signUp", params={"key": "soak"},
                           json={"returnSecureToken": True}, timeout=10).json()
        ttl = int(args.minutes * 60) + 3600
        cookie = requests.post(f"{base}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}:createSessionCookie",
                               json={"idToken": up["idToken"], "validDuration": ttl}, headers={"Authorization": "Bearer owner"},
                               timeout=10).json()["sessionCookie"]
        traffic = Traffic(base, cookie)
        threads = [threading.Thread(target=traffic.client, args=(i,), daemon=True) for i in range(args.threads)]
        started = time.time()
        for t in threads:
            t.start()

        db_path = data / "gatehouse.db"
        rows = []
        purged = Counter()
        next_sample = started + args.sample_seconds
        next_housekeeping = started + args.housekeeping_seconds
        end = started + args.minutes * 60
        csv_path = out / "soak.csv"
        fields = ["t", "requests", "rps", "server_errors", "rss_kb", "fds", "wal_bytes", "db_bytes", "purged"] + TABLES
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            last_total = 0
            while time.time() < end:
                time.sleep(0.2)
                now = time.time()
                if now >= next_housekeeping:
                    next_housekeeping += args.housekeeping_seconds
                    r = subprocess.run([binary, "housekeeping", "--data", str(data), "--config", str(config_path)],
                                       capture_output=True, text=True, timeout=120)
                    if r.returncode != 0:
                        failures.append("housekeeping failed: " + r.stderr[-500:])
                    for ln in r.stdout.splitlines():
                        name, _, n = ln.partition("\t")
                        purged[name] += int(n or 0)
                if now < next_sample:
                    continue
                next_sample += args.sample_seconds
                current = responder_pid(proc.pid, binary)
                if current != pid:
                    failures.append(f"the responder restarted (pid {pid} → {current})")
                    pid = current or pid
                with traffic.lock:
                    total = sum(traffic.ok.values()) + sum(traffic.other.values()) + sum(traffic.server_errors.values())
                    errors = sum(traffic.server_errors.values())
                row = {"t": round(now - started), "requests": total, "rps": round((total - last_total) / args.sample_seconds),
                       "server_errors": errors, "rss_kb": rss_kb(pid), "fds": len(os.listdir(f"/proc/{pid}/fd")),
                       "wal_bytes": size(Path(str(db_path) + "-wal")), "db_bytes": size(db_path), "purged": sum(purged.values())}
                last_total = total
                with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as c:
                    for t in TABLES:
                        row[t] = c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                rows.append(row)
                w.writerow(row)
                f.flush()
                print(" ".join(f"{k}={row[k]}" for k in fields), flush=True)
        traffic.stop.set()
        for t in threads:
            t.join(timeout=60)

        elapsed = time.time() - started
        total_errors = sum(traffic.server_errors.values())
        if total_errors:
            failures.append(f"{total_errors} 5xx or connection errors: {dict(traffic.server_errors)}; first: {traffic.first_errors}")
        summary = {"minutes": args.minutes, "threads": args.threads, "housekeeping_seconds": args.housekeeping_seconds,
                   "cpus": os.cpu_count(), "requests_ok": dict(traffic.ok), "requests_other": dict(traffic.other),
                   "server_errors": dict(traffic.server_errors), "rate": round(sum(traffic.ok.values()) / elapsed),
                   "purged": dict(purged)}
        if rows:
            last_t = rows[-1]["t"]
            for key, slack in (("rss_kb", 0), ("fds", 4)):
                first = median_of(rows, key, 0, 60)
                last = median_of(rows, key, last_t - 60, last_t)
                summary[key] = {"first_minute_median": first, "last_minute_median": last, "max": max(r[key] for r in rows)}
                if not args.no_growth_check and first and last > first * 1.2 + slack:
                    failures.append(f"{key} grew: first-minute median {first}, last-minute median {last}")
            summary["wal_bytes_max"] = max(r["wal_bytes"] for r in rows)
            summary["db_bytes_last"] = rows[-1]["db_bytes"]
        summary["failures"] = failures
        (out / "summary.json").write_text(json.dumps(summary, indent=2))
        print(json.dumps(summary, indent=2))
        print(f"CSV: {csv_path}")
        if failures:
            print("FAILED:\n  " + "\n  ".join(failures))
            sys.exit(1)
        print("OK")
    finally:
        if traffic:
            traffic.stop.set()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        if args.keep:
            print(f"data kept in {data}")
        else:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
