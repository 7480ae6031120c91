#!/usr/bin/env python3
"""App verification benchmark (not a test).

1. Server: challenges issued per second (GET /__/auth/challenge) and solutions verified and
   redeemed per second (POST /__/auth/challenge: signature, hash, expiry, replay insert, token
   mint), through nginx, sequentially and with several client threads. Solving happens in
   between and is not timed.
2. Browser: the time headless Chromium takes to solve a challenge at the default difficulty
   with public/pow.js (Web Crypto in Workers), and the time from opening the verification
   page to its redirect to the app.

Run from the worktree after `swift build`:  python3 bench/appverify/bench_appverify.py [--n 2000]
Results are printed and written to bench/out/appverify.json.
"""
import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))
from conftest import Gatehouse  # noqa: E402
from appverify_helpers import DevToolsLog, handler_path, perf_driver, wait_for, DEMO_SCHEME  # noqa: E402

GENEROUS = {"free_challenges_per_ip": 100000, "free_challenges_per_key": 10000000, "redemptions_per_ip": 1000000}


def config(**app_verification):
    return {"projects": [{"id": "demo-gatehouse", "app_verification": dict(GENEROUS, **app_verification)}]}


def solve(c):
    """Plain hashlib search (fast enough at the low difficulty used for the server phase)."""
    prefix = c["salt"].encode()
    target = bytes.fromhex(c["challenge"])
    for n in range(c["maxnumber"] + 1):
        if hashlib.sha256(prefix + str(n).encode()).digest() == target:
            import base64
            return base64.b64encode(json.dumps({"algorithm": c["algorithm"], "challenge": c["challenge"], "number": n,
                                                "salt": c["salt"], "signature": c["signature"]}).encode()).decode()
    raise RuntimeError("unsolvable")


def timed(fn, items, threads):
    local = threading.local()

    def session():
        if not hasattr(local, "s"):
            local.s = requests.Session()
        return local.s

    t0 = time.perf_counter()
    if threads == 1:
        results = [fn(session(), x) for x in items]
    else:
        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(lambda x: fn(session(), x), items))
    return results, time.perf_counter() - t0


def server_phase(n, threads_list):
    out = {}
    with tempfile.TemporaryDirectory() as d:
        g = Gatehouse(Path(d), config=config(min_difficulty=1000, max_difficulty=1000)).start()
        try:
            url = g.url("/__/auth/challenge")
            for threads in threads_list:
                issued, t_issue = timed(lambda s, _: s.get(url, params={"apiKey": "bench"}, timeout=10).json(), range(n), threads)
                payloads = [solve(c) for c in issued]
                replies, t_verify = timed(lambda s, p: s.post(url, json={"payload": p, "apiKey": "bench"}, timeout=10), payloads, threads)
                bad = [r.text for r in replies if r.status_code != 200]
                assert not bad, bad[:3]
                out[f"threads={threads}"] = {"issue_per_s": round(n / t_issue, 1), "verify_per_s": round(n / t_verify, 1), "n": n}
                print(f"server, {threads} client thread(s): issue {n / t_issue:8.1f}/s   verify+redeem {n / t_verify:8.1f}/s   (n={n})")
        finally:
            g.stop()
    return out


def browser_phase(runs, page_runs):
    with tempfile.TemporaryDirectory() as d:
        g = Gatehouse(Path(d), config=config()).start()
        driver = perf_driver()
        try:
            driver.get(g.url(handler_path("bench")))
            wait_for(lambda: driver.find_element("id", "verify-return").is_displayed())
            driver.set_script_timeout(60)
            solves = []
            for _ in range(runs):
                solves.append(driver.execute_async_script("""
                    var done = arguments[arguments.length - 1];
                    fetch('/__/auth/challenge', {cache: 'no-store'}).then(function (r) { return r.json(); })
                      .then(function (c) { return GatehousePow.solve(c).then(function (s) {
                          done({took: s.took, number: s.number, max: c.maxnumber}); }); })
                      .catch(function (e) { done({error: String(e)}); });
                """))
            errors = [s for s in solves if "error" in s]
            assert not errors, errors
            took = sorted(s["took"] for s in solves)
            rate = sum(s["number"] for s in solves) / max(1, sum(s["took"] for s in solves)) * 1000
            page = []
            for i in range(page_runs):
                log = DevToolsLog(driver)
                t0 = time.perf_counter()
                driver.get(g.url(handler_path("bench", event_id=f"BENCH{i:05d}")))
                assert wait_for(lambda: log.navigations(DEMO_SCHEME + "://"), timeout=30)
                page.append((time.perf_counter() - t0) * 1000)
            result = {
                "default_maxnumber": solves[0]["max"], "runs": runs,
                "solve_ms_median": round(statistics.median(took), 1), "solve_ms_p90": round(took[int(0.9 * (len(took) - 1))], 1),
                "solve_ms_max": round(took[-1], 1), "hashes_per_s": round(rate),
                "page_to_redirect_ms_median": round(statistics.median(page), 1), "page_runs": page_runs,
            }
            print(f"chromium: default maxnumber {result['default_maxnumber']}, solve median {result['solve_ms_median']} ms, "
                  f"p90 {result['solve_ms_p90']} ms, max {result['solve_ms_max']} ms, ~{result['hashes_per_s']} hashes/s; "
                  f"page open → redirect median {result['page_to_redirect_ms_median']} ms")
            return result
        finally:
            driver.quit()
            g.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="challenges per server run")
    ap.add_argument("--threads", default="1,4", help="client thread counts for the server phase")
    ap.add_argument("--runs", type=int, default=30, help="browser solves")
    ap.add_argument("--page-runs", type=int, default=10, help="full page runs")
    args = ap.parse_args()
    results = {"server": server_phase(args.n, [int(t) for t in args.threads.split(",")]),
               "browser": browser_phase(args.runs, args.page_runs)}
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "appverify.json").write_text(json.dumps(results, indent=2))
    print(f"written to {out / 'appverify.json'}")


if __name__ == "__main__":
    main()
