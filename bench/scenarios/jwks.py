"""3. The public key set. The baseline has no JWKS; its static /page (a fixed answer of a
similar size) stands in, so the target here is indicative."""
from harness.scenario import Call, Scenario, Target


def gatehouse(env):
    return Call("/.well-known/jwks.json")


def baseline(env):
    return Call("/page")


SCENARIO = Scenario(
    key="jwks",
    title="/.well-known/jwks.json",
    gatehouse=gatehouse,
    baseline=baseline,
    baseline_label="baseline /page (stand-in)",
    stand_in=True,
    targets=[Target("rps_ratio", ">=", 0.8, "jwks requests/s ≥ 0.8 × baseline page", indicative=True)],
    cgi=True,
)
