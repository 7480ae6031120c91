"""bench/run's harness: Gatehouse against the fcgi-baseline responder behind the same nginx,
in one run. See BENCHMARKS.md for what is measured and how to read it."""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import cgi, measure, procs, report, stack  # noqa: E402
from harness.scenario import Env, SignRate, Unavailable, describe  # noqa: E402
import scenarios  # noqa: E402

ROOT = stack.ROOT
BINARY = ROOT / ".build-release/release/gatehouse"
KEEPALIVE_WORKERS = 16


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="bench/run", description="Gatehouse vs fcgi-baseline behind nginx on 127.0.0.1.")
    ap.add_argument("--quick", action="store_true", help="one short round of everything (smoke test)")
    ap.add_argument("--rounds", type=int, help="rounds per scenario (default 5; quick 1)")
    ap.add_argument("--duration", type=int, help="seconds per wrk run (default 5; quick 2)")
    ap.add_argument("--connections", type=int, default=8, help="wrk connections (default 8)")
    ap.add_argument("--only", help="comma-separated scenario keys")
    ap.add_argument("--modes", default="plain,keepalive", help="nginx upstream modes (plain,keepalive)")
    ap.add_argument("--plain-workers", type=int, default=2 * (os.cpu_count() or 1),
                    help="responder threads in plain mode and for growth (default 2 × cores, Gatehouse's default)")
    ap.add_argument("--accounts", type=int, default=1_000_000, help="accounts in the large store (growth)")
    ap.add_argument("--no-growth", action="store_true")
    ap.add_argument("--no-cgi", action="store_true")
    ap.add_argument("--write-doc", dest="write_doc", action="store_true", default=None,
                    help="replace the results section of BENCHMARKS.md (default: yes, except with --quick)")
    ap.add_argument("--no-write-doc", dest="write_doc", action="store_false")
    ap.add_argument("--out", default=str(ROOT / "bench/out"), help="folder for results.json / results.md")
    ap.add_argument("--binary", default=str(BINARY), help="the gatehouse executable to measure (default: the release build)")
    ap.add_argument("--binary-note", default="", help="one sentence on what --binary is, for the report")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, configs, databases)")
    ap.add_argument("--store", choices=["sqlite", "postgresql", "compare"], default="sqlite",
                    help="Gatehouse's store: the SQLite file (default) or PostgreSQL (a throw-away cluster this run starts); "
                         "compare: the growth pair becomes SQLite against PostgreSQL, both with --accounts accounts (default 1,000), "
                         "alternating round by round in this run")
    a = ap.parse_args(argv)
    a.rounds = max(1, min(a.rounds or (1 if a.quick else 5), 9))
    a.duration = int(max(1, min(a.duration or (2 if a.quick else 5), 60)))
    a.warmup = 1
    a.connections = max(1, min(a.connections, 64))
    a.accounts = max(1000, min(a.accounts, 10_000_000))
    a.plain_workers = max(1, min(a.plain_workers, 64))
    if a.write_doc is None:
        a.write_doc = not a.quick
    a.modes = [m for m in a.modes.split(",") if m in ("plain", "keepalive")]
    return a


def machine():
    cpu = ""
    try:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    except OSError:
        pass

    def version(argv):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            return (r.stdout + r.stderr).strip().splitlines()[0]
        except Exception:
            return "?"
    commit = version(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "nginx": version(["/usr/sbin/nginx", "-v"]), "wrk": version(["wrk", "-v"]).split(" [")[0],
            "openssl": version(["openssl", "version"]), "hyperfine": version(["hyperfine", "--version"]),
            "commit": commit + (" (with uncommitted changes)" if dirty else ""),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def mint_id_token(gh):
    """(ID token, "") from `gatehouse tokens mint`, or (None, why not)."""
    r = procs.run([gh.binary, "tokens", "mint", "--uid", "bench-user", "--create", "--config", gh.config_path(4)],
                  timeout=120, cwd=gh.dir, check=False)
    lines = r.stdout.strip().splitlines()
    if r.returncode == 0 and lines and lines[-1].count(".") == 2:
        return lines[-1], ""
    err = (r.stderr.strip() or r.stdout.strip()).splitlines()
    return None, "`gatehouse tokens mint` failed: " + (err[-1] if err else f"exit {r.returncode}")


def session_cookie(base, gh, id_token):
    """A session cookie from the public admin API, or (None, why not)."""
    token, why = id_token
    if not token:
        return None, "no ID token: " + why
    id_token = token
    url = base + f"/identitytoolkit.googleapis.com/v1/projects/{stack.PROJECT}:createSessionCookie"
    bearers = [gh.admin_token] + (["owner"] if gh.kind == "dev" else [])
    why = ""
    for bearer in bearers:
        status, _, body = stack.http("POST", url, {"Authorization": f"Bearer {bearer}"}, {"idToken": id_token, "validDuration": 86400})
        if status == 200:
            cookie = json.loads(body).get("sessionCookie")
            if cookie:
                return cookie, ""
        why = "createSessionCookie " + describe(status, body)
    return None, why


def wait_ready(base, path, timeout=30):
    """True once the responder behind nginx answers at all (nginx itself says 502/504 until then)."""
    return procs.wait_for(lambda: stack.http("GET", base + path, timeout=2)[0] not in (0, 502, 504), timeout, 0.1)


def idle_rss(pid):
    time.sleep(0.3)
    return procs.status_kb(pid, "VmRSS")


def selected(args):
    keys = set(args.only.split(",")) if args.only else None
    return [s for s in scenarios.ALL if keys is None or s.key in keys or s.part_of in keys]


def run_mode(mode, args, gh, bl, ngx, env, state, results, all_regions=None):
    workers = KEEPALIVE_WORKERS if mode == "keepalive" else args.plain_workers
    base = ngx.base(mode)
    log(f"mode {mode}: Gatehouse listen.workers {workers}, baseline threads {workers}"
        + (f", upstream keepalive {stack.KEEPALIVE_POOL}" if mode == "keepalive" else ""))
    gh.start(workers)
    bl.start(workers)
    if all_regions:
        all_regions.start(workers)
    try:
        if not wait_ready(base, "/__/auth/health"):
            raise RuntimeError(f"Gatehouse not answering through nginx; see {gh.log}")
        if not wait_ready(base, "/page"):
            raise RuntimeError(f"baseline not answering through nginx; see {bl.log}")
        out = {"workers": workers, "idle_rss_kb": {"gatehouse": idle_rss(gh.pid), "baseline": idle_rss(bl.pid)}, "scenarios": {}}
        if "cookie_done" not in state:
            env.gh_cookie, env.gh_cookie_problem = session_cookie(base, gh, state["id_token"])
            state["cookie_done"] = True
            log("  Gatehouse session cookie: " + ("created with createSessionCookie" if env.gh_cookie else env.gh_cookie_problem))
        for sc in selected(args):
            log(f"  {sc.key}: {sc.title}")
            sides = []
            if sc.gatehouse:
                serving = all_regions if sc.instance == "all_regions" and all_regions else gh
                sides.append(measure.Side("gatehouse", base, sc.gatehouse(env), serving.pid))
            if sc.baseline:
                call = sc.baseline(env)
                pid = None if sc.key == "ceiling" or isinstance(call, SignRate) else bl.pid
                sides.append(measure.Side("baseline", base, call, pid))
            out["scenarios"][sc.key] = measure.run_sides(sides, args, log)
        out["after_rss_kb"] = {"gatehouse": procs.status_kb(gh.pid, "VmRSS"), "baseline": procs.status_kb(bl.pid, "VmRSS")}
        results["modes"][mode] = out
    finally:
        if mode == "keepalive":
            ngx.release_upstreams()
        gh.stop()
        bl.stop()
        if all_regions:
            all_regions.stop()


def run_growth(args, small, big, ngx, env, state, results):
    """Verify and phone flow with a 1k store vs the large store, alternating round by round. Both
    instances are fresh (no earlier load), so they differ only in the number of accounts."""
    workers = args.plain_workers
    if args.store == "compare":
        log(f"store: SQLite vs PostgreSQL, {args.accounts:,} accounts each (plain FastCGI, {workers} workers)")
    else:
        log(f"growth: 1k accounts vs {args.accounts:,} accounts (plain FastCGI, {workers} workers)")
    small.start(workers)
    big.start(workers)
    try:
        for port, inst in (("growth1k", small), ("growth", big)):
            if not wait_ready(ngx.base(port), "/__/auth/health"):
                raise RuntimeError(f"{inst.name} not answering; see {inst.log}")
        small_env = Env(bl_cookie=env.bl_cookie)
        small_env.gh_cookie, small_env.gh_cookie_problem = session_cookie(ngx.base("growth1k"), small, state["id_token_growth1k"])
        big_env = Env(bl_cookie=env.bl_cookie)
        big_env.gh_cookie, big_env.gh_cookie_problem = session_cookie(ngx.base("growth"), big, state["id_token_big"])
        out = {"accounts": {"small": state["accounts_small"], "big": state["accounts_big"]}, "scenarios": {}}
        for sc in selected(args):
            if not sc.growth:
                continue
            log(f"  {sc.key}: {sc.title}")
            sides = [measure.Side("small", ngx.base("growth1k"), sc.gatehouse(small_env), small.pid),
                     measure.Side("big", ngx.base("growth"), sc.gatehouse(big_env), big.pid)]
            out["scenarios"][sc.key] = measure.run_sides(sides, args, log)
        results["growth"] = out
    finally:
        small.stop()
        big.stop()


CGI_ROUNDS = 5  # CGI: rounds of 15 processes per side, sides alternating


def run_cgi(args, gh, bl, env, tmp, results):
    log("CGI: one process per request (hyperfine)")
    cfg = gh.config_path(2 * (os.cpu_count() or 1))
    out = {}
    for sc in selected(args):
        if not sc.cgi:
            continue
        gcall, bcall = sc.gatehouse(env), sc.baseline(env)
        entry = {}
        pairs = []
        if isinstance(gcall, Unavailable):
            entry["gatehouse"] = {"unavailable": gcall.reason}
        else:
            genv = cgi.cgi_env(gcall)
            status, head = cgi.status_of(cgi.gatehouse_argv(gh.binary, cfg), genv)
            if status != gcall.expect:
                entry["gatehouse"] = {"unavailable": f"answered {status}" if status else head}
            else:
                pairs.append(("gatehouse", cgi.gatehouse_argv(gh.binary, cfg), genv))
        benv = dict(cgi.cgi_env(bcall), **cgi.pubkey_env(bl.env()))
        status, head = cgi.status_of([bl.binary], benv)
        if status != bcall.expect:
            entry["baseline"] = {"unavailable": f"answered {status}" if status else head}
        else:
            pairs.append(("baseline", [bl.binary], benv))
        if pairs:
            rounds, runs = (1, 10) if args.quick else (CGI_ROUNDS, 15)
            res = cgi.compare(pairs, runs, 2 if args.quick else 3, str(Path(tmp) / f"cgi-{sc.key}.json"), rounds)
            entry.update(res)
        for side in ("gatehouse", "baseline"):
            d = entry.get(side, {})
            log(f"  {sc.key} {side}: " + (f"{d['mean_ms']:.2f} ms/request" if "mean_ms" in d else f"not available: {d.get('unavailable')}"))
        out[sc.key] = entry
    results["cgi"] = out


def main(argv):
    args = parse_args(argv)
    procs.install_signal_handlers()
    binary = Path(args.binary).resolve()
    for p in (binary, ROOT / "bench/baseline/fcgi-baseline"):
        if not p.exists():
            sys.exit(f"bench: {p} is missing; run bench/run (it builds both) or build them first")
    for tool in ("wrk", "hyperfine", "openssl"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is not installed (scripts/install-deps.sh test)")
    tmp = tempfile.mkdtemp(prefix="gatehouse-bench-")
    started = time.monotonic()
    load_before = open("/proc/loadavg").read().split()[:3]
    results = {"meta": machine(), "modes": {}, "settings": {
        "rounds": args.rounds, "duration_s": args.duration, "connections": args.connections, "quick": args.quick,
        "keepalive_pool": stack.KEEPALIVE_POOL, "keepalive_workers": KEEPALIVE_WORKERS, "plain_workers": args.plain_workers,
        "accounts_big": args.accounts}}
    try:
        log(f"temporary folder {tmp}")
        log("openssl speed -seconds 3 rsa2048")
        results["signing"] = procs.openssl_speed(1 if args.quick else 3)
        log(f"  RS256 (RSA-2048) sign/s {results['signing']['sign_per_s']:.0f}, verify/s {results['signing']['verify_per_s']:.0f}")

        if binary != BINARY.resolve():
            results["meta"]["binary"] = str(binary)
            results["meta"]["binary_note"] = args.binary_note
        kind, problems = stack.choose_config_kind(binary, tmp)
        results["config"] = {"kind": kind, "production_problems": problems}
        log(f"Gatehouse configuration: {kind} mode" + (f" (production config refused: {'; '.join(problems)})" if problems else ""))
        token = stack.admin_token()
        small = stack.Gatehouse("gh-1k", binary, tmp, kind, token)
        growth1k = stack.Gatehouse("gh-growth-1k", binary, tmp, kind, token)
        big = stack.Gatehouse("gh-big", binary, tmp, kind, token)
        all_regions = None
        if any(s.instance == "all_regions" for s in selected(args)):
            all_regions = stack.Gatehouse("gh-all-regions", binary, tmp, kind, token, all_regions=True)
        results["meta"]["store"] = args.store
        if args.store == "compare":
            # The growth pair, same accounts on both sides: "small" on SQLite, "big" on PostgreSQL.
            args.no_growth = False
            if args.accounts == 1_000_000:
                args.accounts = 1000
            results["meta"]["accounts_big"] = args.accounts
        if args.store in ("postgresql", "compare"):
            pg_dir = Path("/tmp") / f"gatehouse-bench-pg-{os.getpid()}"
            url = procs.run([str(ROOT / "scripts" / "pg-cluster.sh"), "start", str(pg_dir)], timeout=120).stdout.strip()
            procs.at_exit(lambda: procs.run([str(ROOT / "scripts" / "pg-cluster.sh"), "stop", str(pg_dir)], timeout=120, check=False))
            on_postgres = [big] if args.store == "compare" else [small, growth1k, big] + ([all_regions] if all_regions else [])
            for inst in on_postgres:
                name = inst.name.replace("-", "_")
                procs.run(["psql", url, "-qc", f"CREATE DATABASE {name}"], timeout=60)
                inst.store_url = url.rsplit("/", 1)[0] + "/" + name
            log(f"store: PostgreSQL ({url.rsplit('@', 1)[-1]}; fsync and synchronous_commit off, as SQLite's synchronous=NORMAL does not sync commits)")
        bl = stack.Baseline(tmp)
        state = {}
        log("seeding 1,000 accounts" + ("" if args.no_growth else f" and {args.accounts:,} accounts"))
        results["seed"] = {"small": small.seed(1000)}
        state["accounts_small"] = args.accounts if args.store == "compare" else 1000
        state["id_token"] = mint_id_token(small)
        if not args.no_growth:
            t0 = time.monotonic()
            results["seed"]["big"] = big.seed(args.accounts)
            results["seed"]["big_seconds"] = time.monotonic() - t0
            log("  " + results["seed"]["big"])
            state["accounts_big"] = args.accounts
            state["id_token_big"] = mint_id_token(big)
            growth1k.seed(args.accounts if args.store == "compare" else 1000)
            state["id_token_growth1k"] = mint_id_token(growth1k)
        env = Env(bl_cookie=bl.make_cookie(), admin_token=token)
        # all_regions (above): a second instance for the rows of a project that allows every region (page_all, page_large).
        if any(s.key == "page_large" for s in selected(args)):
            log("  " + scenarios.page.fit_large_page(all_regions, bl, env))

        ngx = stack.Nginx(tmp, small.socket, bl.socket, big.socket, growth1k.socket, all_regions.socket if all_regions else None)
        ngx.start()
        log(f"nginx on 127.0.0.1 ports {ngx.ports}")
        for mode in args.modes:
            run_mode(mode, args, small, bl, ngx, env, state, results, all_regions)
        if not args.no_growth:
            run_growth(args, growth1k, big, ngx, env, state, results)
        ngx.stop()
        if not args.no_cgi:
            run_cgi(args, small, bl, env, tmp, results)
        results["elapsed_s"] = time.monotonic() - started
        results["loadavg"] = {"before": load_before, "after": open("/proc/loadavg").read().split()[:3]}

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(results, indent=2))
        md = report.render(results)
        (out / "results.md").write_text(md)
        log(f"results: {out / 'results.json'}, {out / 'results.md'}")
        if args.write_doc:
            report.update_doc(ROOT / "BENCHMARKS.md", md)
            log("BENCHMARKS.md results section updated")
        print()
        print(md)
        log(f"done in {results['elapsed_s']:.0f} s")
    except SystemExit as e:
        if isinstance(e.code, int) and e.code >= 128:
            log(f"interrupted (signal {e.code - 128}); stopping everything this run started")
        raise
    finally:
        procs.stop_all()
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
