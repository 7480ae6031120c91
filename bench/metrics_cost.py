#!/usr/bin/env python3
"""What metrics cost the verify path: /__/auth/verify of one session cookie on two `serve`
instances of the same binary, one with the metrics backend (the default) and one with
`metrics.enabled: false`, in one run with the sides alternating round by round.

    python3 bench/metrics_cost.py [--rounds 7] [--duration 5] [--connections 8] [--binary PATH]

One nginx (one worker, access log off, kept FastCGI connections) with a server per instance
passing every path to it. The measured part holds /tmp/gatehouse-build.lock (flock). The issue's
rule: metrics may cost the verify path at most 3 % of its requests/s. Everything started is
stopped by pid (bench/harness/procs.py).
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import procs, stack, wrk  # noqa: E402
from harness.main import mint_id_token, session_cookie  # noqa: E402
from protect_cache import acquire_lock  # noqa: E402

ROOT = stack.ROOT
SIDES = ("metrics", "no-metrics")
BUDGET = 0.03


class Instance(stack.Gatehouse):
    """A Gatehouse whose configuration may switch the metrics backend off."""

    def __init__(self, name, binary, root, kind, token, metrics):
        super().__init__(name, binary, root, kind, token)
        self.metrics = metrics

    def config_path(self, workers, store=True):
        path = Path(super().config_path(workers, store))
        config = json.loads(path.read_text())
        config["metrics"] = {"enabled": self.metrics}
        path.write_text(json.dumps(config, indent=2))
        return str(path)


def render(d, ports, sockets):
    servers = "".join(f"""
    upstream up_{i} {{ server unix:{sockets[i]}; keepalive {stack.KEEPALIVE_POOL}; }}
    server {{
        listen 127.0.0.1:{ports[i]} backlog=4096;
        fastcgi_keep_conn on;
        location / {{ include {d}/bench-fastcgi.conf; fastcgi_pass up_{i}; }}
    }}""" for i in range(len(ports)))
    return f"""# Written by bench/metrics_cost.py for one run; loopback only.
{stack.nginx_head(d)}
    map $http_x_bench_client $bench_remote_addr {{
        ""      $remote_addr;
        default $http_x_bench_client;
    }}
{servers}
}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--binary", default=str(ROOT / ".build-release/release/gatehouse"))
    ap.add_argument("--out", default=str(ROOT / "bench/out/metrics_cost.json"))
    args = ap.parse_args()
    args.rounds = max(1, min(args.rounds, 15))
    args.duration = max(1, min(args.duration, 60))
    binary = Path(args.binary).resolve()
    if not binary.exists():
        sys.exit(f"bench: {binary} is missing (build it, or pass --binary)")
    procs.install_signal_handlers()
    tmp = Path(tempfile.mkdtemp(prefix="gatehouse-bench-metrics-"))
    try:
        kind, problems = stack.choose_config_kind(binary, tmp)
        token = stack.admin_token()
        instances = {s: Instance(s, binary, tmp, kind, token, metrics=(s == "metrics")) for s in SIDES}
        ports = {s: stack.free_port() for s in SIDES}
        d = tmp / "nginx"
        for t in ("client_body", "fastcgi", "proxy", "uwsgi", "scgi"):
            (d / "tmp" / t).mkdir(parents=True, exist_ok=True)
        (d / "bench-fastcgi.conf").write_text(stack.fastcgi_params())
        conf = d / "nginx.conf"
        conf.write_text(render(d, [ports[s] for s in SIDES], [instances[s].socket for s in SIDES]))
        cookies = {}
        for s, g in instances.items():
            g.seed(1000)
            id_token = mint_id_token(g)
            g.start(16)
        nginx = "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else "nginx"
        argv = [nginx, "-p", f"{d}/", "-c", str(conf), "-e", str(d / "error.log")]
        procs.run(argv + ["-t"], timeout=30)
        procs.start("nginx", argv, log_path=d / "stdout.log")
        for s, g in instances.items():
            base = f"http://127.0.0.1:{ports[s]}"
            if not procs.wait_for(lambda: stack.http("GET", base + "/__/auth/health", timeout=1)[0] == 200, 20):
                sys.exit(f"bench: {s} not answering")
            cookie, why = session_cookie(base, g, mint_id_token(g))
            if not cookie:
                sys.exit("bench: no session cookie: " + why)
            cookies[s] = cookie
            status = stack.http("GET", base + "/__/auth/metrics")[0]
            if status != (200 if s == "metrics" else 404):
                sys.exit(f"bench: {s}: /__/auth/metrics answered {status}")
        url = {s: f"http://127.0.0.1:{ports[s]}/__/auth/verify" for s in SIDES}
        headers = {s: {"Cookie": f"{stack.COOKIE}={cookies[s]}"} for s in SIDES}
        lock = acquire_lock(3600)
        rounds = []
        try:
            for s in SIDES:
                wrk.run(url[s], 1, args.connections, headers=headers[s])
            for i in range(args.rounds):
                order = SIDES if i % 2 == 0 else tuple(reversed(SIDES))
                row = {}
                for s in order:
                    r = wrk.run(url[s], args.duration, args.connections, headers=headers[s])
                    if r["errors"]:
                        sys.exit(f"bench: {s}: {r['errors']} errors")
                    row[s] = r["rps"]
                    row[f"{s}_p99_us"] = r["p99_us"]
                row["ratio"] = row["metrics"] / row["no-metrics"]
                rounds.append(row)
                print(f"round {i + 1}: with metrics {row['metrics']:,.0f}  without {row['no-metrics']:,.0f} req/s  ({row['ratio']:.3f} ×)",
                      flush=True)
        finally:
            lock.close()
        ratio = statistics.median(r["ratio"] for r in rounds)
        verdict = "within" if ratio >= 1 - BUDGET else "OVER"
        print(f"\nverify with the metrics backend: {ratio:.3f} × without (median of {args.rounds} per-round ratios); "
              f"budget ≥ {1 - BUDGET:.2f}: {verdict}")
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"rounds": rounds, "median_ratio": ratio, "settings": vars(args),
                                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, indent=2))
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
