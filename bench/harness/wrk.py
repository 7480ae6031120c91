"""Runs wrk (bounded: fixed duration, connections and a hard timeout) and parses the
BENCH_RESULT line printed by bench/lua/report.lua."""
import json
import os
import resource
from pathlib import Path

from . import procs

LUA_DIR = Path(__file__).resolve().parent.parent / "lua"


def run(url, seconds, connections, threads=1, script="http.lua", headers=None, env=None):
    """One wrk run against url (must be on 127.0.0.1). Returns a dict of figures."""
    assert url.startswith("http://127.0.0.1:"), url
    argv = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "--timeout", "5s",
            "-s", str(LUA_DIR / script)]
    for k, v in (headers or {}).items():
        argv += ["-H", f"{k}: {v}"]
    argv.append(url)
    e = dict(os.environ, BENCH_LUA_DIR=str(LUA_DIR), **(env or {}))
    before, busy0 = resource.getrusage(resource.RUSAGE_CHILDREN), procs.machine_busy_seconds()
    r = procs.run(argv, timeout=seconds + 30, env=e)
    after, busy1 = resource.getrusage(resource.RUSAGE_CHILDREN), procs.machine_busy_seconds()
    for line in r.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            d = json.loads(line[len("BENCH_RESULT "):])
            secs = d["duration_us"] / 1e6
            d["rps"] = d["requests"] / secs if secs else 0.0
            if "flows" in d:
                d["flows_per_s"] = d["flows"] / secs if secs else 0.0
            # CPU of wrk itself (the only child that ends during the run) and of the whole machine.
            d["loadgen_cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if busy0 is not None and busy1 is not None:
                d["machine_busy_s"] = busy1 - busy0
            d["errors"] = d["err_connect"] + d["err_read"] + d["err_write"] + d["err_status"] + d["err_timeout"]
            return d
    raise RuntimeError(f"wrk printed no result: {r.stdout[-1000:]} {r.stderr[-1000:]}")
