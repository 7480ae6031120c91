#!/usr/bin/env python3
"""The operator console on a million accounts, against the same console on a thousand, and the
verify of a protected location on both (BENCHMARKS.md "Console").

Two `gatehouse dev` instances of the same binary, each on a throw-away data folder:
- big:   `gatehouse seed --count 1000000 --audit 2000000` (a million accounts, two million audit
         rows of sign-ins over the last 30 days, ids growing with time as the flows write them);
- small: `gatehouse seed --count 1000 --audit 2000`.
On each, one operator: an email-link user with an authenticator app who signs in with both
factors over the wire; its ID token becomes a session cookie (admin `createSessionCookie`, which
keeps the second factor's claims) and `gatehouse operators add` makes it an operator.

Each console request below is fetched `--repeat` times after two unmeasured fetches, one at a
time, the sides alternating request by request (big, small, small, big, …) so a drift of the
machine weighs on both; per request and side: median and 95th percentile of the time to the last
byte. The first view of the 30-day activity (which rolls the closed hours of the audit log up
into counters) is timed once per side, on its own, before anything else reads the activity.

Then the verify side: the operator's cookie on `/demo/` (protect.conf) by `wrk -t2 -c16`, four
runs a round in the order big small small big (small big big small in even rounds), `--rounds`
rounds; the ratio is big's mean over small's.

    python3 bench/console_scale.py [--accounts 1000000] [--audit 2000000] [--repeat 20] [--rounds 3] [--bin PATH]

Not a test. Bounded: at most 5,000,000 accounts and 20,000,000 audit rows, 100 repeats, 9
rounds of 4 × 4 s. Loopback only; both instances are stopped by their pids and their folders
removed on the way out. Needs `requests`, `pyotp` and `wrk`; uses the integration tests' helpers (conftest, mfa_support,
console_support).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests/integration"))


def wrk_run(url: str, seconds: int, headers=()) -> tuple[float, int]:
    cmd = ["wrk", "-t2", "-c16", f"-d{seconds}s", "--timeout", "5s"]
    for h in headers:
        cmd += ["-H", h]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=seconds + 30).stdout
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return (float(m.group(1)) if m else float("nan")), (int(bad.group(1)) if bad else 0)


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))] if v else float("nan")


def operator_cookie(gh, mfa_support) -> tuple[str, str]:
    """(cookie value, uid) of a new operator signed in with both factors."""
    user = mfa_support.totp_user(gh, "operator")
    pending = mfa_support.challenge(gh, user["email"])["mfaPendingCredential"]
    code = user["totp"].now()
    r = mfa_support.mfa(gh, "mfaSignIn:finalize", {"mfaPendingCredential": pending, "mfaEnrollmentId": user["enrollmentId"],
                                                   "totpVerificationInfo": {"verificationCode": code}})
    if r.status_code != 200:
        # The enrolment took the step before the current one; the current one is still unused.
        sys.exit(f"second factor sign-in: {r.status_code} {r.text[:300]}")
    r = gh.admin(":createSessionCookie", {"idToken": r.json()["idToken"], "validDuration": 14 * 86400})
    if r.status_code != 200:
        sys.exit(f"createSessionCookie: {r.status_code} {r.text[:300]}")
    gh.tool("operators", "add", user["localId"])
    return r.json()["sessionCookie"], user["localId"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--accounts", type=int, default=1_000_000)
    ap.add_argument("--audit", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--verify-seconds", type=int, default=4)
    ap.add_argument("--bin", default=str(ROOT / ".build-release/release/gatehouse"))
    args = ap.parse_args()
    args.accounts = max(1000, min(args.accounts, 5_000_000))
    args.audit = max(0, min(args.audit, 20_000_000))
    args.repeat = max(3, min(args.repeat, 100))
    args.rounds = max(1, min(args.rounds, 9))
    args.verify_seconds = max(1, min(args.verify_seconds, 30))
    os.environ["GATEHOUSE_BIN"] = args.bin
    os.environ.setdefault("GATEHOUSE_HOME", str(ROOT))
    import requests
    import console_support
    import mfa_support
    from conftest import Gatehouse

    config = console_support.config()
    root = Path(tempfile.mkdtemp(prefix="gh-bench-console-"))
    sides = {}
    try:
        for name, accounts, audit in (("big", args.accounts, args.audit), ("small", 1000, min(args.audit, 2000))):
            (root / name).mkdir()
            gh = Gatehouse(root / name, config=config)
            t0 = time.monotonic()
            seeded = gh.tool("seed", "--count", str(accounts), "--audit", str(audit)).stdout.strip()
            print(f"{name}: {seeded} ({time.monotonic() - t0:.1f} s with the command's start)")
            gh.start(timeout=120)
            cookie, uid = operator_cookie(gh, mfa_support)
            sides[name] = {"gh": gh, "cookie": cookie, "uid": uid, "http": requests.Session()}

        def fetch(side, path):
            s = sides[side]
            t = time.perf_counter()
            r = s["http"].get(s["gh"].base + path, headers={"Cookie": f"__Host-gatehouse={s['cookie']}"}, allow_redirects=False,
                              timeout=60)
            dt = time.perf_counter() - t
            if r.status_code != 200:
                sys.exit(f"{side} {path}: {r.status_code} {r.text[:300]}")
            return dt, r.text

        # A seeded account of each side with audit rows, and prefixes that match some.
        for side in sides:
            _, page = fetch(side, "/__/auth/console/users")
            ids = re.findall(r"/__/auth/console/users/([A-Za-z0-9]{28})", page)
            if not ids:
                sys.exit(f"{side}: no account on the users page")
            sides[side]["some_uid"] = ids[len(ids) // 2]

        first = {side: fetch(side, "/__/auth/console/?range=30d")[0] for side in sides}
        print(f"first 30-day activity view (rolls up every closed hour): big {first['big'] * 1000:.0f} ms, "
              f"small {first['small'] * 1000:.0f} ms")

        requests_ = [
            ("users, newest first", lambda s: "/__/auth/console/users"),
            ("users, by last sign-in", lambda s: "/__/auth/console/users?sort=last_sign_in"),
            ("search: email prefix", lambda s: "/__/auth/console/users?in=email&q=seed12"),
            ("search: phone prefix", lambda s: "/__/auth/console/users?q=%2B12010001"),
            ("search: uid prefix", lambda s: "/__/auth/console/users?q=" + sides[s]["some_uid"][:4]),
            ("a user's page", lambda s: "/__/auth/console/users/" + sides[s]["some_uid"]),
            ("audit log", lambda s: "/__/auth/console/audit"),
            ("audit log: one user", lambda s: "/__/auth/console/audit?user=" + sides[s]["some_uid"]),
            ("audit log: 2 % of events", lambda s: "/__/auth/console/audit?event=admin.update"),
            ("audit log: an absent event", lambda s: "/__/auth/console/audit?event=passkey.counter_regression"),
            ("activity, 24 h", lambda s: "/__/auth/console/"),
            ("activity, 30 days", lambda s: "/__/auth/console/?range=30d"),
            ("delivery", lambda s: "/__/auth/console/delivery"),
            ("keys", lambda s: "/__/auth/console/keys"),
        ]
        results = []
        for label, path in requests_:
            times = {"big": [], "small": []}
            for side in ("big", "small"):
                fetch(side, path(side))
                fetch(side, path(side))
            for i in range(args.repeat):
                order = ("big", "small") if i % 2 == 0 else ("small", "big")
                for side in order:
                    times[side].append(fetch(side, path(side))[0])
            row = {side: (statistics.median(t) * 1000, percentile(t, 0.95) * 1000) for side, t in times.items()}
            results.append((label, row))
            print(f"{label:26s} big p50 {row['big'][0]:7.1f} ms p95 {row['big'][1]:7.1f} ms | "
                  f"small p50 {row['small'][0]:6.1f} ms p95 {row['small'][1]:6.1f} ms")

        ratios = []
        for rnd in range(1, args.rounds + 1):
            pair = ["big", "small"] if rnd % 2 else ["small", "big"]
            runs = {"big": [], "small": []}
            for side in pair:                                     # one uncounted second each
                wrk_run(sides[side]["gh"].base + "/demo/", 1, [f"Cookie: __Host-gatehouse={sides[side]['cookie']}"])
            for side in pair + pair[::-1]:
                rate, bad = wrk_run(sides[side]["gh"].base + "/demo/", args.verify_seconds,
                                    [f"Cookie: __Host-gatehouse={sides[side]['cookie']}"])
                if bad:
                    sys.exit(f"verify {side}: {bad} answers not 2xx/3xx")
                runs[side].append(rate)
            big, small = statistics.mean(runs["big"]), statistics.mean(runs["small"])
            ratios.append(big / small)
            print(f"round {rnd}: verify /demo/ big {big:.0f} req/s, small {small:.0f} req/s → {big / small:.3f} ×")
        print(f"verify: median ratio big/small {statistics.median(ratios):.3f} × over {len(ratios)} rounds")
        print(f"{os.cpu_count()} CPUs; wrk, nginx and both instances share them")
    finally:
        for s in sides.values():
            try:
                s["gh"].stop()
            except Exception:  # noqa: BLE001 - stopping what started is best effort on the way out
                pass
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
