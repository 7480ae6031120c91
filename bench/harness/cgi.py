"""CGI mode: time per request of a process started for one request (hyperfine, no shell, sides
alternating round by round), Gatehouse (`gatehouse serve --config …` with GATEWAY_INTERFACE set) vs fcgi-baseline."""
import json
import os
import re
import shlex
import statistics

from . import procs


def cgi_env(call):
    path, _, query = call.path.partition("?")
    env = {"GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "GET", "DOCUMENT_URI": path, "SCRIPT_NAME": path,
           "REQUEST_URI": call.path, "QUERY_STRING": query, "SERVER_PROTOCOL": "HTTP/1.1", "SERVER_NAME": "127.0.0.1",
           "SERVER_PORT": "443", "HTTPS": "on", "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1"}
    for k, v in call.headers.items():
        env["HTTP_" + k.upper().replace("-", "_")] = v
    return env


def command(argv, env):
    """One hyperfine command line: `env -i K=V … argv` (a clean, identical environment)."""
    return " ".join(shlex.quote(x) for x in ["env", "-i", *[f"{k}={v}" for k, v in sorted(env.items())], *argv])


def status_of(argv, env):
    """The Status of one CGI response (200 when the header is absent), or a reason."""
    r = procs.run(["env", "-i", *[f"{k}={v}" for k, v in env.items()], *argv], timeout=60, check=False)
    head = r.stdout.split("\r\n\r\n", 1)[0].split("\n\n", 1)[0]
    m = re.search(r"(?mi)^Status:\s*(\d{3})", head)
    if r.returncode != 0 and not head.strip():
        return None, f"exit {r.returncode}: {r.stderr.strip()[-160:]}"
    return int(m.group(1)) if m else 200, head


def compare(pairs, runs, warmup, out_json, rounds=1):
    """pairs: [(name, argv, env)]; returns {name: {mean_ms, median_ms, stddev_ms, min_ms, runs}} and,
    with two sides, "ratio": the median over the rounds of first side's mean / second side's mean.

    The sides alternate round by round (A B, B A, A B, ...), each round one hyperfine run of
    `runs` processes per side after `warmup` ones, so a drift of the machine during the
    measurement moves both sides of a round alike (as the wrk scenarios do)."""
    times = {name: [] for name, _, _ in pairs}
    per_round = []
    for r in range(rounds):
        order = pairs if r % 2 == 0 else list(reversed(pairs))
        means = {}
        for name, a, env in order:
            path = f"{out_json}.{r}.{name}.json"
            procs.run(["hyperfine", "-N", "--style", "none", "--warmup", str(warmup), "--runs", str(runs),
                       "--export-json", path, "--command-name", name, command(a, env)], timeout=600)
            ts = json.load(open(path))["results"][0]["times"]
            times[name] += ts
            means[name] = statistics.fmean(ts)
        per_round.append(means)
    out = {}
    for name, ts in times.items():
        out[name] = {"mean_ms": statistics.fmean(ts) * 1000, "median_ms": statistics.median(ts) * 1000,
                     "stddev_ms": (statistics.stdev(ts) if len(ts) > 1 else 0) * 1000, "min_ms": min(ts) * 1000,
                     "runs": len(ts), "rounds": rounds}
    if len(pairs) == 2:
        a, b = pairs[0][0], pairs[1][0]
        out["ratio"] = statistics.median(m[a] / m[b] for m in per_round)
    json.dump(out, open(out_json, "w"), indent=1)
    return out


def pubkey_env(baseline_env):
    return {k: baseline_env[k] for k in ("BASELINE_PUBKEY", "BASELINE_COOKIE") if k in baseline_env}


def gatehouse_argv(binary, config):
    return [str(binary), "serve", "--config", config]


def exists(path):
    return os.path.exists(path)
