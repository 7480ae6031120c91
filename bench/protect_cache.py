#!/usr/bin/env python3
"""A 2 KB static page through nginx, unprotected, behind nginx's own subrequest alone (the floor),
protected (nginx/protect.conf: one /__/auth/verify subrequest to Gatehouse per view) and
protected with the verify micro-cache (nginx/verify-cache.conf), in one run with the sides
alternating round by round.

    python3 bench/protect_cache.py [--rounds 5] [--duration 5] [--connections 8] [--binary PATH]
                                   [--cache-dir DIR] [--nginx-dir DIR]

One nginx (one worker, access log off) with the shipped nginx/ files and the micro-cache
include; its three locations serve the same file:
  /open/page.html        no auth_request (the baseline of the run)
  /floor/page.html       auth_request to an internal location that answers 204: what the
                         subrequest costs nginx when the check costs nothing (the floor)
  /protected/page.html   protect.conf, `set $gatehouse_verify_cache off;` (what a site without
                         the include gets: every view asks Gatehouse)
  /cached/page.html      protect.conf with the micro-cache (5 s per session cookie)
Gatehouse runs `serve` with a production configuration (kept FastCGI connections: upstream
keepalive 8, 16 workers, as the harness's kept mode). Every request carries the same session
cookie. The measured part holds /tmp/gatehouse-build.lock (flock), so it never overlaps a
build that takes the same lock. Everything started is stopped by pid (bench/harness/procs.py).
"""
import argparse
import fcntl
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

ROOT = stack.ROOT
LOCK = "/tmp/gatehouse-build.lock"
PAGE_BYTES = 2048
SIDES = ("open", "floor", "protected", "cached")
CHECKED = ("floor", "protected", "cached")
TARGETS = {"protected": 0.35, "cached": 0.85}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def render(d, socket, port):
    return f"""# Written by bench/protect_cache.py for one run; loopback only.
{stack.nginx_head(d)}
    include gatehouse/verify-cache.conf;
    include gatehouse/gatehouse-mime.conf;

    upstream gatehouse {{ server unix:{socket}; keepalive {stack.KEEPALIVE_POOL}; }}

    # The verifies that reached Gatehouse from /cached/ (one log line per miss, nothing on a hit).
    map $verify_cache_status $verify_reached {{
        MISS     1;
        EXPIRED  1;
        BYPASS   1;
        default  0;
    }}

    server {{
        listen 127.0.0.1:{port} backlog=4096;
        server_name 127.0.0.1;
        fastcgi_keep_conn on;
        set $gatehouse_public {ROOT}/public;
        root {d}/site;
        include gatehouse/gatehouse-locations.conf;

        location /open/ {{
        }}
        location /floor/ {{
            auth_request /__floor;
        }}
        location = /__floor {{
            internal;
            return 204;
        }}
        location /protected/ {{
            set $gatehouse_verify_cache off;
            include gatehouse/protect.conf;
        }}
        location /cached/ {{
            include gatehouse/protect.conf;
            auth_request_set $verify_cache_status $upstream_cache_status;
            access_log {d}/verify-reached.log combined if=$verify_reached;
        }}
    }}
}}
"""


class Nginx:
    def __init__(self, d, socket, nginx_dir=None, cache_dir=None):
        self.dir = d
        self.port = stack.free_port()
        conf_dir = d / "gatehouse"
        conf_dir.mkdir(parents=True)
        for f in Path(nginx_dir or ROOT / "nginx").glob("*.conf"):
            shutil.copy(f, conf_dir / f.name)
        vc = conf_dir / "verify-cache.conf"
        cache = Path(cache_dir) / f"gatehouse-bench-cache-{os.getpid()}" if cache_dir else d / "cache"
        self.cache = cache
        vc.write_text(vc.read_text().replace("/var/lib/nginx/gatehouse-verify ", f"{cache} "))
        for t in ("client_body", "fastcgi", "proxy", "uwsgi", "scgi"):
            (d / "tmp" / t).mkdir(parents=True, exist_ok=True)
        body = ("<!doctype html><title>page</title><p>" + "x" * PAGE_BYTES)[:PAGE_BYTES - 5] + "</p>\n"
        assert len(body) == PAGE_BYTES
        for side in SIDES:
            (d / "site" / side).mkdir(parents=True)
            (d / "site" / side / "page.html").write_text(body)
        self.conf = d / "nginx.conf"
        self.conf.write_text(render(d, socket, self.port))
        self.proc = None

    def url(self, side):
        return f"http://127.0.0.1:{self.port}/{side}/page.html"

    def start(self):
        nginx = "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else "nginx"
        argv = [nginx, "-p", f"{self.dir}/", "-c", str(self.conf), "-e", str(self.dir / "error.log")]
        procs.run(argv + ["-t"], timeout=30)
        self.proc = procs.start("nginx", argv, log_path=self.dir / "stdout.log")
        if not procs.wait_for(lambda: stack.http("GET", self.url("open"), timeout=1)[0] == 200, 10):
            raise RuntimeError(f"nginx did not come up; see {self.dir}/error.log")

    def worker_pids(self):
        """nginx's worker processes (children of the master we started)."""
        try:
            kids = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        except OSError:
            return []
        return [int(k) for k in kids if "worker" in Path(f"/proc/{k}/cmdline").read_text(errors="replace")]

    def verifies_reached(self):
        p = self.dir / "verify-reached.log"
        return len(p.read_text().splitlines()) if p.exists() else 0


def acquire_lock(timeout):
    """flock(2) on LOCK, as `flock /tmp/gatehouse-build.lock …` takes it; waits up to timeout."""
    f = open(LOCK, "a")
    deadline = time.monotonic() + timeout
    waited = False
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return f
        except BlockingIOError:
            if time.monotonic() > deadline:
                sys.exit(f"bench: {LOCK} still held after {timeout} s; giving up")
            if not waited:
                log(f"waiting for {LOCK} (a build holds it)")
                waited = True
            time.sleep(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds (each measures every side once; at most 9)")
    ap.add_argument("--duration", type=int, default=5, help="seconds per side and round (at most 60)")
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--binary", default=str(ROOT / ".build-release/release/gatehouse"))
    ap.add_argument("--lock-timeout", type=int, default=3600, help="seconds to wait for the build lock")
    ap.add_argument("--out", default=str(ROOT / "bench/out/protect_cache.json"))
    ap.add_argument("--cache-dir", help="the micro-cache's folder (default: in the run's temporary folder; e.g. under /dev/shm)")
    ap.add_argument("--nginx-dir", help="take the nginx/*.conf files from this folder instead (an A/B of two versions of them)")
    args = ap.parse_args()
    args.rounds = max(1, min(args.rounds, 9))
    args.duration = max(1, min(args.duration, 60))
    binary = Path(args.binary).resolve()
    if not binary.exists():
        sys.exit(f"bench: {binary} is missing (build it, or pass --binary)")
    procs.install_signal_handlers()
    tmp = Path(tempfile.mkdtemp(prefix="gatehouse-bench-cache-"))
    ngx = None
    try:
        kind, problems = stack.choose_config_kind(binary, tmp)
        log(f"Gatehouse configuration: {kind} mode" + (f" ({'; '.join(problems)})" if problems else ""))
        gh = stack.Gatehouse("gh", binary, tmp, kind, stack.admin_token())
        gh.seed(1000)
        id_token = mint_id_token(gh)
        gh.start(16)
        ngx = Nginx(tmp / "nginx", gh.socket, args.nginx_dir, args.cache_dir)
        ngx.start()
        cookie, why = session_cookie(f"http://127.0.0.1:{ngx.port}", gh, id_token)
        if not cookie:
            sys.exit("bench: no session cookie: " + why)
        headers = {"Cookie": f"{stack.COOKIE}={cookie}"}
        for side in SIDES:
            status, _, body = stack.http("GET", ngx.url(side), headers)
            if status != 200 or len(body) != PAGE_BYTES:
                sys.exit(f"bench: {side}: {status}, {len(body)} bytes (expected 200 and the page)")
        log(f"nginx on 127.0.0.1:{ngx.port}; the three pages answer 200 with {PAGE_BYTES} bytes")

        lock = acquire_lock(args.lock_timeout)
        log(f"holding {LOCK}; {args.rounds} rounds × {len(SIDES)} sides × {args.duration} s, "
            f"{args.connections} connections")
        rounds = []
        try:
            for side in SIDES:  # warm-up
                wrk.run(ngx.url(side), 1, args.connections, headers=headers)
            reached0 = ngx.verifies_reached()
            cached_requests = 0
            for i in range(args.rounds):
                order = SIDES if i % 2 == 0 else tuple(reversed(SIDES))
                order = order[i % 3:] + order[:i % 3]
                figures = {}
                for side in order:
                    pids = {"nginx": ngx.worker_pids(), "gatehouse": [gh.pid]}
                    before = {k: sum(procs.cpu_seconds(p) or 0 for p in v) for k, v in pids.items()}
                    d = wrk.run(ngx.url(side), args.duration, args.connections, headers=headers)
                    for k, v in pids.items():
                        d[f"{k}_cpu_s"] = sum(procs.cpu_seconds(p) or 0 for p in v) - before[k]
                    per = d["bytes"] / d["requests"] if d["requests"] else 0
                    if d["errors"] or per < PAGE_BYTES:
                        sys.exit(f"bench: {side}: {d['errors']} errors, {per:.0f} bytes a response (not the page?)")
                    figures[side] = d
                    if side == "cached":
                        cached_requests += d["requests"]
                row = {"order": list(order), **{s: round(figures[s]["rps"]) for s in SIDES},
                       # CPU per request, in µs: nginx's worker, Gatehouse, wrk.
                       **{f"{s}_{k}_us": 1e6 * figures[s][f"{k}_cpu_s"] / figures[s]["requests"]
                          for s in SIDES for k in ("nginx", "gatehouse", "loadgen")},
                       **{f"{s}_p99_us": figures[s]["p99_us"] for s in SIDES},
                       **{f"{s}_ratio": figures[s]["rps"] / figures["open"]["rps"] for s in CHECKED},
                       **{f"{s}_to_floor": figures[s]["rps"] / figures["floor"]["rps"] for s in ("protected", "cached")}}
                rounds.append(row)
                log(f"round {i + 1} ({' '.join(order)}): open {row['open']:,}  floor {row['floor']:,} ({row['floor_ratio']:.2f} ×)  "
                    f"protected {row['protected']:,} ({row['protected_ratio']:.2f} ×)  cached {row['cached']:,} "
                    f"({row['cached_ratio']:.2f} ×) req/s")
            reached = ngx.verifies_reached() - reached0
        finally:
            lock.close()

        med = {s: statistics.median(r[s] for r in rounds) for s in SIDES}
        ratios = {s: statistics.median(r[f"{s}_ratio"] for r in rounds) for s in CHECKED}
        to_floor = {s: statistics.median(r[f"{s}_to_floor"] for r in rounds) for s in ("protected", "cached")}
        print()
        print(f"2 KB static page, {args.rounds} rounds × {args.duration} s per side, {args.connections} connections, "
              f"{os.cpu_count()} CPUs, nginx 1 worker, Gatehouse {kind} mode (16 workers, keepalive {stack.KEEPALIVE_POOL})")
        print(f"  unprotected           {med['open']:>9,.0f} req/s (median)")
        print(f"  floor (204 subrequest){med['floor']:>9,.0f} req/s, {ratios['floor']:.2f} × unprotected")
        for s, label in (("protected", "protected, no cache"), ("cached", "protected, micro-cache")):
            ok = "met" if ratios[s] >= TARGETS[s] else "MISSED"
            print(f"  {label:<21} {med[s]:>9,.0f} req/s, {ratios[s]:.2f} × unprotected, {to_floor[s]:.2f} × the floor "
                  f"(medians of per-round ratios; target ≥ {TARGETS[s]} × unprotected: {ok})")
        cpu = {s: {k: statistics.median(r[f"{s}_{k}_us"] for r in rounds) for k in ("nginx", "gatehouse", "loadgen")}
               for s in SIDES}
        print("  CPU per request (median, µs): " + "; ".join(
            f"{s}: nginx {c['nginx']:.1f}, Gatehouse {c['gatehouse']:.1f}, wrk {c['loadgen']:.1f}" for s, c in cpu.items()))
        print(f"  verifies that reached Gatehouse from the cached side: {reached} for {cached_requests:,} page views")
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"rounds": rounds, "median_rps": med, "median_ratio": ratios, "median_ratio_to_floor": to_floor, "kind": kind, "median_cpu_us": cpu,
                                   "verifies_reached": reached, "cached_requests": cached_requests,
                                   "settings": vars(args), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())},
                                  indent=2))
        log(f"results: {out}")
    finally:
        procs.stop_all()
        if ngx is not None:
            shutil.rmtree(ngx.cache, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
