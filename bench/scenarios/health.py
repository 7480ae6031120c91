"""Extra: the health probe (one store read + key ring), against the baseline /page stand-in.
Available today, so it shows Gatehouse's per-request floor before the feature endpoints land."""
from harness.scenario import Call, Scenario, Target


def gatehouse(env):
    return Call("/__/auth/health")


def baseline(env):
    return Call("/page")


SCENARIO = Scenario(
    key="health",
    title="/__/auth/health",
    gatehouse=gatehouse,
    baseline=baseline,
    baseline_label="baseline /page (stand-in)",
    stand_in=True,
    targets=[Target("rps_ratio", ">=", 0.8, "health requests/s ≥ 0.8 × baseline page", indicative=True)],
    cgi=True,
)
