"""What a benchmark scenario is. Each scenario lives in its own file under bench/scenarios/
and says which request Gatehouse and the baseline get, which targets apply, and whether it
also runs in the growth (1k vs 1M accounts) and CGI sections."""
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import procs, stack


@dataclass
class Unavailable:
    """Gatehouse cannot be measured on this scenario yet, and why."""
    reason: str


@dataclass
class Call:
    """One kind of request a wrk run repeats (GET with headers), or a Lua-driven flow."""
    path: str
    headers: dict = field(default_factory=dict)
    expect: int = 200
    script: str = "http.lua"
    lua_env: dict = field(default_factory=dict)
    flow: bool = False
    # wrk threads/connections; None = the harness default (1 thread, --connections).
    threads: Optional[int] = None
    connections: Optional[int] = None

    def probe(self, base):
        """None if the endpoint answers as expected, else the reason it is not available."""
        status, _, body = stack.http("GET", base + self.path, headers=self.headers)
        if status == self.expect:
            return None
        return describe(status, body)

    def run_env(self, base, threads):
        """The Lua script's environment for one wrk run of `threads` threads. A flow whose run
        uses up what it was given (rotated refresh tokens) makes it afresh here, per run."""
        return dict(self.lua_env)


@dataclass
class SignRate:
    """Not a request: the RS256 (RSA-2048) signing rate of one core, `openssl speed rsa2048` for
    a round's duration. As a scenario's baseline side it runs in the same alternating rounds as
    the Gatehouse side, so each round's ratio compares figures taken under the same load."""
    flow: bool = False

    def probe(self, base):
        import shutil
        return None if shutil.which("openssl") else "openssl is not installed"

    def measure(self, seconds):
        rate = procs.openssl_speed(seconds)["sign_per_s"]
        return {"sign_per_s": rate, "requests": 0, "errors": 0}


def describe(status, body):
    """A short reason from a response: status plus the wire error message if there is one."""
    if status == 0:
        return f"unreachable ({body.decode(errors='replace')[:80]})"
    text = body.decode(errors="replace")
    msg = ""
    try:
        import json
        msg = json.loads(text)["error"]["message"]
    except Exception:
        if "<html" in text[:200].lower():
            import re
            parts = [re.sub(r"<[^>]+>", "", m).strip() for m in re.findall(r"(?is)<(?:h1|p)\b[^>]*>(.*?)</(?:h1|p)>", text)]
            msg = "HTML page: " + " / ".join(p for p in parts if p)[:100]
        else:
            msg = " ".join(text.split())[:120]
    return f"answered {status}" + (f" ({msg})" if msg else "")


@dataclass
class Target:
    """A target as a ratio. metric: rps_ratio (Gatehouse/baseline requests/s), p99_ratio
    (Gatehouse/baseline p99), flows_vs_sign (flows/s over RS256 sign/s), cgi_ratio
    (Gatehouse/baseline CGI time per request), growth_rps / growth_p99 (1M over 1k)."""
    metric: str
    op: str             # ">=" or "<="
    limit: float
    label: str = ""
    indicative: bool = False    # compared against a stand-in, not a like-for-like baseline


@dataclass
class Scenario:
    key: str
    title: str
    gatehouse: Callable            # (env) -> Call | Unavailable
    baseline: Optional[Callable]   # (env) -> Call, or None (no baseline side)
    baseline_label: str = ""
    stand_in: bool = False         # the baseline side is a stand-in, not the same work
    targets: list = field(default_factory=list)
    growth: bool = False
    cgi: bool = False
    unit: str = "req/s"
    part_of: str = ""              # runs with that scenario's key too (--only page runs page_large)
    instance: str = ""             # "all_regions": served by the instance whose project allows every region


@dataclass
class Env:
    """What scenarios need to build their requests."""
    gh_cookie: Optional[str] = None
    gh_cookie_problem: str = ""
    bl_cookie: str = ""
    api_key: str = stack.API_KEY
    project: str = stack.PROJECT
    numbers: dict = field(default_factory=lambda: dict(stack.TEST_NUMBERS))
    # The instance's admin token (scenarios that set users up through the admin API).
    admin_token: str = ""
