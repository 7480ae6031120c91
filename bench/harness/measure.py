"""Measuring one scenario: probe both sides, warm up, then rounds in alternation (Gatehouse,
baseline; next round baseline, Gatehouse; …), medians over rounds, the responders' peak RSS
(VmHWM, reset before the scenario) and CPU time per request."""
import statistics

from . import procs, wrk
from .scenario import Unavailable

METRICS = ("rps", "p50_us", "p90_us", "p99_us", "mean_us", "flows_per_s", "sign_per_s")


def median_of(rounds):
    out = {}
    for m in METRICS:
        vals = [r[m] for r in rounds if m in r]
        if vals:
            out[m] = statistics.median(vals)
    out["requests"] = sum(r["requests"] for r in rounds)
    out["errors"] = sum(r["errors"] for r in rounds)
    if any("flows" in r for r in rounds):
        out["flows"] = sum(r.get("flows", 0) for r in rounds)
        out["flow_failures"] = sum(r.get("flow_failures", 0) for r in rounds)
    return out


class Side:
    """One side of a comparison: a label, where to send it, the call, the process to watch."""

    def __init__(self, name, base, call, pid):
        self.name, self.base, self.call, self.pid = name, base, call, pid
        self.rounds = []
        self.problem = call.reason if isinstance(call, Unavailable) else None

    def wrk(self, seconds, connections):
        c = self.call
        if hasattr(c, "measure"):  # not a request (the signing rate)
            return c.measure(seconds)
        return wrk.run(self.base + ("/" if c.flow else c.path), seconds,
                       c.connections or connections, threads=c.threads or 1,
                       script=c.script, headers=c.headers, env=c.run_env(self.base, c.threads or 1))


def cpu_split(rounds):
    """Median CPU per request (per flow for flows) of the responder, of wrk, and of the rest of
    the machine (nginx, the kernel's softirq work, anything else running), in microseconds."""
    per = {"responder": [], "loadgen": [], "rest": []}
    for r in rounds:
        n = r.get("flows") or r.get("requests")
        if not n or "responder_cpu_s" not in r or "machine_busy_s" not in r:
            continue
        per["responder"].append(r["responder_cpu_s"] * 1e6 / n)
        per["loadgen"].append(r["loadgen_cpu_s"] * 1e6 / n)
        per["rest"].append(max(0.0, r["machine_busy_s"] - r["responder_cpu_s"] - r["loadgen_cpu_s"]) * 1e6 / n)
    return {k: statistics.median(v) for k, v in per.items() if v}


def run_sides(sides, cfg, log):
    """Measures every available side of one scenario; returns {side name: result dict}."""
    results = {}
    live = []
    for s in sides:
        if s.problem is None:
            s.problem = s.call.probe(s.base)
        if s.problem:
            results[s.name] = {"unavailable": s.problem}
            log(f"    {s.name}: not available: {s.problem}")
        else:
            live.append(s)
    for s in live:
        s.wrk(cfg.warmup, cfg.connections)
    pids = {s.pid for s in live if s.pid}
    cpu0 = {}
    for pid in pids:
        procs.reset_peak(pid)
        cpu0[pid] = procs.cpu_seconds(pid)
    for r in range(cfg.rounds):
        order = live if r % 2 == 0 else list(reversed(live))
        for s in order:
            c0 = procs.cpu_seconds(s.pid) if s.pid else None
            res = s.wrk(cfg.duration, cfg.connections)
            c1 = procs.cpu_seconds(s.pid) if s.pid else None
            if c0 is not None and c1 is not None:
                res["responder_cpu_s"] = c1 - c0
            s.rounds.append(res)
            if "sign_per_s" in res:
                log(f"    round {r + 1} {s.name}: {res['sign_per_s']:.0f} RS256 sign/s (openssl speed, one core)")
                continue
            extra = f", {res['flows_per_s']:.0f} flows/s" if "flows_per_s" in res else ""
            log(f"    round {r + 1} {s.name}: {res['rps']:.0f} req/s{extra}, p50 {res['p50_us'] / 1000:.2f} ms, "
                f"p99 {res['p99_us'] / 1000:.2f} ms, errors {res['errors']}")
    for s in live:
        d = median_of(s.rounds)
        d["rounds"] = s.rounds
        d["cpu_split"] = cpu_split(s.rounds)
        d["bad"] = d["errors"] > 0.01 * max(1, d["requests"]) or d.get("flow_failures", 0) > 0.01 * max(1, d.get("flows", 1))
        if s.pid:
            d["peak_rss_kb"] = procs.status_kb(s.pid, "VmHWM")
            # CPU is per process: only meaningful when one side per process was measured.
            same = [o for o in live if o.pid == s.pid]
            if len(same) == 1 and cpu0.get(s.pid) is not None:
                used = procs.cpu_seconds(s.pid) - cpu0[s.pid]
                n = d.get("flows") or sum(x["requests"] for x in s.rounds)
                d["cpu_us_per_req"] = used * 1e6 / max(1, n)
        results[s.name] = d
    if len(live) == 2 and all(len(x.rounds) == cfg.rounds for x in live):
        # Ratios of the two runs of the same round (adjacent in time), then their median:
        # steadier on a shared machine than the ratio of the two medians.
        a, b = live
        ratios = {}
        for m in ("rps", "flows_per_s", "p50_us", "p99_us"):
            per = [x[m] / y[m] for x, y in zip(a.rounds, b.rounds) if m in x and m in y and y[m]]
            if per:
                ratios[m] = statistics.median(per)
        per = [x["flows_per_s"] / y["sign_per_s"] for x, y in zip(a.rounds, b.rounds)
               if "flows_per_s" in x and y.get("sign_per_s")]
        if per:
            ratios["flows_vs_sign"] = statistics.median(per)
        results["ratios"] = {"of": a.name, "to": b.name, **ratios}
    return results
