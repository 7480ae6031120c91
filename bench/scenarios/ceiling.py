"""5. nginx answering `return 200` itself: the most this machine and wrk can do (ceiling)."""
from harness.scenario import Call, Scenario


def ceiling(env):
    return Call("/ceiling")


SCENARIO = Scenario(
    key="ceiling",
    title="nginx `return 200` (ceiling)",
    gatehouse=None,
    baseline=ceiling,
    baseline_label="nginx only",
)
