#!/usr/bin/env python3
"""Delivery receipts under the phone flow: does a receipt per message slow the phone sign-in,
and what does one receipt cost the responder (BENCHMARKS.md "Delivery receipts").

    python3 bench/receipts.py [--rounds 5] [--seconds 8] [--receipt-seconds 10] [--bin PATH] [--json FILE]

The stack is the benchmark's plain one (bench/harness/stack.py): `gatehouse serve` with 4
threads behind one nginx worker, one FastCGI connection per request, the client address taken
from X-Bench-Client. It is not `gatehouse dev` because every request would then come from
127.0.0.1 and the per-address limits (code checks, receipts) would refuse the run within
seconds. The configuration is the harness's production one with the webhook SMS provider and
its status callback, so that `POST /__/auth/delivery/webhook` accepts signed receipts.

Before each receipt phase the script writes fresh outbox rows straight into the SQLite store,
as a webhook send leaves them (`provider = 'webhook'`, delivery `sent`), and one signed receipt
per row (`delivered`; `X-Gatehouse-Signature: v1=HMAC-SHA256(secret, timestamp "." body)`), each
client network (X-Bench-Client, a /24 of its own) sending at most 400, under the receipts'
budget of 600 a minute. Every receipt is expected to be answered 200 (the first forward move).

Rounds, each:
  (i)  the phone flow alone: wrk with bench/lua/phone_flow.lua, 8 threads × 1 connection, one
       test number each (the benchmark's phone_flow scenario);
  (ii) the same flow with one receipt after each completed flow, on the same connection
       (bench/lua/phone_flow_receipts.lua): receipts arrive at the rate messages would go out.
Each phase also reads the responder's CPU time (/proc/<pid>/stat utime + stime) per flow.
Then (iii) the receipt endpoint alone (4 wrk connections, receipts only), with the responder's
CPU time over the run, less its idle rate, per receipt.
Prints each round's flows/s and ratio (ii)/(i), their medians and the receipts' figures.
Loopback only; every process it starts is stopped by its pid (bench/harness/procs.py), its
folder removed.
"""
import argparse
import hashlib
import hmac
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import procs, stack, wrk  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-receipts-webhook-secret-0123456789"
WORKERS = 4            # the plain-FastCGI configuration of the benchmark
FLOW_THREADS = 8       # as the phone_flow scenario
RECEIPT_THREADS = 4    # wrk threads (one connection each) posting receipts alone
PER_NETWORK = 400      # receipts per client network (the budget is 600 a minute)


class ReceiptGatehouse(stack.Gatehouse):
    """The harness's Gatehouse with the webhook SMS provider and its status callback."""

    def config_path(self, workers, store=True):
        path = Path(super().config_path(workers, store))
        config = json.loads(path.read_text())
        config["sms"] = {"provider": "webhook", "url": "http://127.0.0.1:9/unused", "secret": SECRET,
                         "status_callback_url": "https://auth.bench.invalid/__/auth/delivery/webhook"}
        path.write_text(json.dumps(config, indent=2))
        return str(path)


def nginx_conf(d, socket_path, port):
    return f"""# Written by bench/receipts.py; loopback only.
{stack.nginx_head(d)}
    map $http_x_bench_client $bench_remote_addr {{
        ""      $remote_addr;
        default $http_x_bench_client;
    }}
    upstream gh_plain {{ server unix:{socket_path}; }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        server_name 127.0.0.1;
        location / {{ include {d}/bench-fastcgi.conf; fastcgi_pass gh_plain; }}
    }}
}}
"""


def seed(db, count):
    """`count` outbox rows as a webhook send leaves them; returns their ids."""
    now = int(time.time() * 1000)
    with sqlite3.connect(str(db), timeout=60) as conn:
        first = conn.execute("SELECT COALESCE(MAX(id), 0) FROM outbox").fetchone()[0]
        conn.executemany(
            "INSERT INTO outbox (project_id, channel, recipient, body, status, attempts, next_attempt_at, created_at, provider, "
            "provider_message_id, delivery) VALUES (?, 'sms', ?, '', 'sent', 1, 0, ?, 'webhook', ?, 'sent')",
            [(stack.PROJECT, f"+1650555{(first + i) % 10000:04d}", now, f"bench-{first + i}") for i in range(count)])
        return [r[0] for r in conn.execute("SELECT id FROM outbox WHERE id > ? ORDER BY id", (first,))]


def write_receipts(prefix, ids, threads, network):
    """One file per wrk thread (prefix-N.txt), one signed `delivered` receipt per id, each client
    network (X-Bench-Client, a /24 of its own) sending at most PER_NETWORK. Returns the next
    unused network number."""
    ts = str(int(time.time()))
    used = network
    for t in range(threads):
        lines = []
        for k, message_id in enumerate(ids[t::threads]):
            n = network + (k // PER_NETWORK) * threads + t
            used = max(used, n + 1)
            client = f"{11 + (n >> 16) % 200}.{(n >> 8) & 255}.{n & 255}.1"
            body = json.dumps({"id": message_id, "project": stack.PROJECT, "status": "delivered"}, separators=(",", ":"))
            sig = hmac.new(SECRET.encode(), ts.encode() + b"." + body.encode(), hashlib.sha256).hexdigest()
            lines.append(f"{ts} v1={sig} {client} {body}\n")
        Path(f"{prefix}-{t + 1}.txt").write_text("".join(lines))
    return used


def run_flow(base, seconds, receipts=None, only=False, threads=FLOW_THREADS):
    """wrk with phone_flow.lua, or with phone_flow_receipts.lua when `receipts` (a file prefix)."""
    numbers = ",".join(f"{n}:{c}" for n, c in list(stack.TEST_NUMBERS.items())[:threads])
    env = {"BENCH_API_KEY": stack.API_KEY, "BENCH_NUMBERS": numbers}
    if receipts:
        env.update(BENCH_RECEIPTS=str(receipts), BENCH_RECEIPTS_ONLY="1" if only else "0")
    return wrk.run(base + "/", seconds, threads, threads=threads, script="phone_flow_receipts.lua" if receipts else "phone_flow.lua",
                   env=env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=8, help="length of each flow phase")
    ap.add_argument("--receipt-seconds", type=int, default=10, help="length of the receipts-alone phase")
    ap.add_argument("--bin", default=str(ROOT / ".build-release/release/gatehouse"))
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    if not (1 <= args.rounds <= 20 and 1 <= args.seconds <= 60 and 1 <= args.receipt_seconds <= 60):
        sys.exit("rounds 1…20, seconds 1…60")

    procs.install_signal_handlers()
    root = Path(tempfile.mkdtemp(prefix="gh-receipts-"))
    results = {"rounds": [], "cpus": os.cpu_count()}
    try:
        gh = ReceiptGatehouse("gatehouse", args.bin, root, "production", stack.admin_token())
        gh.start(WORKERS)
        ndir = root / "nginx"
        for t in ("client_body", "fastcgi", "proxy", "uwsgi", "scgi"):
            (ndir / "tmp" / t).mkdir(parents=True, exist_ok=True)
        (ndir / "bench-fastcgi.conf").write_text(stack.fastcgi_params())
        port = stack.free_port()
        (ndir / "nginx.conf").write_text(nginx_conf(ndir, gh.socket, port))
        nginx = "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else "nginx"
        procs.run([nginx, "-t", "-p", str(ndir) + "/", "-c", str(ndir / "nginx.conf"), "-e", str(ndir / "error.log")], timeout=30)
        procs.start("nginx", [nginx, "-p", str(ndir) + "/", "-c", str(ndir / "nginx.conf"), "-e", str(ndir / "error.log")],
                    log_path=ndir / "stdout.log")
        base = f"http://127.0.0.1:{port}"
        if not procs.wait_for(lambda: stack.http("GET", base + "/__/auth/health", timeout=1)[0] in (200, 204), 15):
            raise RuntimeError(f"nginx/gatehouse did not answer; see {root}")
        db = gh.data / "gatehouse.db"

        files = root / "receipts"
        # Warm-up: a short flow, then the same with receipts (keys, caches, the first transactions).
        run_flow(base, 2)
        network = write_receipts(files, seed(db, 2000), FLOW_THREADS, 0)
        warm = run_flow(base, 2, receipts=files)
        if warm["receipt_failures"] or not warm["receipts"]:
            raise RuntimeError(f"warm-up receipts refused: {warm}")

        print(f"{os.cpu_count()} CPUs; {args.rounds} rounds of {args.seconds} s per phase")
        for i in range(args.rounds):
            c0 = procs.cpu_seconds(gh.pid)
            alone = run_flow(base, args.seconds)
            c1 = procs.cpu_seconds(gh.pid)
            rate = alone["flows_per_s"]
            # Enough receipts for the next phase at twice this round's rate.
            network = write_receipts(files, seed(db, int(rate * args.seconds * 2) + 800), FLOW_THREADS, network)
            c2 = procs.cpu_seconds(gh.pid)
            together = run_flow(base, args.seconds, receipts=files)
            c3 = procs.cpu_seconds(gh.pid)
            secs = together["duration_us"] / 1e6
            row = {"alone_flows_per_s": round(rate, 1), "with_receipts_flows_per_s": round(together["flows_per_s"], 1),
                   "ratio": round(together["flows_per_s"] / rate, 3), "receipts": together["receipts"],
                   "receipts_per_s": round(together["receipts"] / secs, 1), "receipts_refused": together["receipt_failures"],
                   "receipts_missing": together["receipts_missing"],
                   "responder_us_per_flow_alone": round((c1 - c0) / max(1, alone["flows"]) * 1e6, 1),
                   "responder_us_per_flow_with_receipt": round((c3 - c2) / max(1, together["flows"]) * 1e6, 1),
                   "machine_us_per_flow_alone": round(alone.get("machine_busy_s", 0) / max(1, alone["flows"]) * 1e6, 1),
                   "machine_us_per_flow_with_receipt": round(together.get("machine_busy_s", 0) / max(1, together["flows"]) * 1e6, 1),
                   "flow_failures": alone["flow_failures"] + together["flow_failures"], "errors": alone["errors"] + together["errors"]}
            results["rounds"].append(row)
            print(f"round {i + 1}: alone {rate:,.1f} flows/s; with receipts {row['with_receipts_flows_per_s']:,.1f} flows/s "
                  f"(ratio {row['ratio']:.3f}), {row['receipts']:,} receipts accepted ({row['receipts_per_s']:,.1f}/s), "
                  f"{row['receipts_refused']} refused, {row['receipts_missing']} flows without one; "
                  f"flow failures {row['flow_failures']}, wrk errors {row['errors']}; responder CPU per flow "
                  f"{row['responder_us_per_flow_alone']:.0f} µs alone, {row['responder_us_per_flow_with_receipt']:.0f} µs with its receipt; "
                  f"machine CPU per flow {row['machine_us_per_flow_alone']:.0f} / {row['machine_us_per_flow_with_receipt']:.0f} µs")

        # (iii) receipts alone, with the responder's CPU (less its idle rate).
        pid = gh.pid
        time.sleep(1)
        c0, t0 = procs.cpu_seconds(pid), time.perf_counter()
        time.sleep(5)
        idle_rate = (procs.cpu_seconds(pid) - c0) / (time.perf_counter() - t0)
        network = write_receipts(files, seed(db, args.receipt_seconds * 12000), RECEIPT_THREADS, network)
        c0 = procs.cpu_seconds(pid)
        got = run_flow(base, args.receipt_seconds, receipts=files, only=True, threads=RECEIPT_THREADS)
        c1 = procs.cpu_seconds(pid)
        secs = got["duration_us"] / 1e6
        if got["receipts_missing"]:
            print(f"warning: the receipts ran out ({got['receipts_missing']} health checks instead)")
        cpu = (c1 - c0) - idle_rate * secs
        results["receipts_alone"] = {
            "receipts": got["receipts"], "refused": got["receipt_failures"], "seconds": round(secs, 2),
            "receipts_per_s": round(got["receipts"] / secs, 1), "p50_us": got["p50_us"], "p99_us": got["p99_us"],
            "responder_cpu_s": round(c1 - c0, 2), "responder_idle_cpu_per_s": round(idle_rate, 4),
            "responder_us_per_receipt": round(cpu / max(1, got["receipts"]) * 1e6, 1),
            "machine_busy_s": round(got.get("machine_busy_s", 0), 2), "wrk_cpu_s": round(got["loadgen_cpu_s"], 2),
        }
        ratios = [r["ratio"] for r in results["rounds"]]
        results["median_ratio"] = round(statistics.median(ratios), 3)
        results["median_alone"] = round(statistics.median(r["alone_flows_per_s"] for r in results["rounds"]), 1)
        results["median_with_receipts"] = round(statistics.median(r["with_receipts_flows_per_s"] for r in results["rounds"]), 1)
        for k in ("responder_us_per_flow_alone", "responder_us_per_flow_with_receipt", "machine_us_per_flow_alone",
                  "machine_us_per_flow_with_receipt"):
            results["median_" + k] = round(statistics.median(r[k] for r in results["rounds"]), 1)
        ra = results["receipts_alone"]
        print(f"median: alone {results['median_alone']:,.1f} flows/s, with receipts {results['median_with_receipts']:,.1f} flows/s, "
              f"median of the rounds' ratios {results['median_ratio']:.3f} (target ≥ 0.95); responder CPU per flow (medians) "
              f"{results['median_responder_us_per_flow_alone']:.0f} µs alone, {results['median_responder_us_per_flow_with_receipt']:.0f} µs "
              f"with its receipt")
        print(f"receipts alone ({RECEIPT_THREADS} connections): {ra['receipts']:,} accepted in {ra['seconds']} s = "
              f"{ra['receipts_per_s']:,.1f}/s, {ra['refused']} refused, p50 {ra['p50_us'] / 1000:.2f} ms, p99 {ra['p99_us'] / 1000:.2f} ms; "
              f"responder CPU {ra['responder_cpu_s']} s (idle {ra['responder_idle_cpu_per_s']} s/s subtracted) = "
              f"{ra['responder_us_per_receipt']} µs per receipt; machine busy {ra['machine_busy_s']} CPU-s, wrk {ra['wrk_cpu_s']} CPU-s")
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
    finally:
        procs.stop_all()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
