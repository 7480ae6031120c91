"""1. nginx auth_request check of a valid session cookie: Gatehouse /__/auth/verify vs the
baseline's /verify (both: RS256 signature + expiry of a cookie JWT, 200 + user id header)."""
from harness.scenario import Call, Scenario, Target, Unavailable
from harness.stack import COOKIE


def gatehouse(env):
    if not env.gh_cookie:
        return Unavailable(env.gh_cookie_problem or "no session cookie")
    return Call("/__/auth/verify", headers={"Cookie": f"{COOKIE}={env.gh_cookie}"})


def baseline(env):
    return Call("/verify", headers={"Cookie": f"{COOKIE}={env.bl_cookie}"})


SCENARIO = Scenario(
    key="verify",
    title="verify a session cookie",
    gatehouse=gatehouse,
    baseline=baseline,
    baseline_label="baseline /verify",
    targets=[Target("rps_ratio", ">=", 1.0, "verify requests/s ≥ 1.0 × baseline"),
             Target("p99_ratio", "<=", 1.1, "verify p99 ≤ 1.1 × baseline")],
    growth=True,
    cgi=True,
)
