"""CGI mode: time per request of a process started for one request (hyperfine, no shell),
Gatehouse (`gatehouse serve --config …` with GATEWAY_INTERFACE set) vs fcgi-baseline."""
import json
import os
import re
import shlex

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


def compare(pairs, runs, warmup, out_json):
    """pairs: [(name, argv, env)]; returns {name: {mean_ms, median_ms, stddev_ms, min_ms}}."""
    argv = ["hyperfine", "-N", "--style", "none", "--warmup", str(warmup), "--runs", str(runs), "--export-json", out_json]
    for name, a, env in pairs:
        argv += ["--command-name", name, command(a, env)]
    procs.run(argv, timeout=600)
    data = json.load(open(out_json))
    out = {}
    for r in data["results"]:
        out[r["command"]] = {"mean_ms": r["mean"] * 1000, "median_ms": r["median"] * 1000,
                             "stddev_ms": (r.get("stddev") or 0) * 1000, "min_ms": r["min"] * 1000, "runs": len(r["times"])}
    return out


def pubkey_env(baseline_env):
    return {k: baseline_env[k] for k in ("BASELINE_PUBKEY", "BASELINE_COOKIE") if k in baseline_env}


def gatehouse_argv(binary, config):
    return [str(binary), "serve", "--config", config]


def exists(path):
    return os.path.exists(path)
