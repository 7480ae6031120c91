"""2. The hosted phone sign-in page (GET) vs the baseline's static ~2 KB page."""
from harness.scenario import Call, Scenario, Target

PATH = "/__/auth/phone?apiKey={key}&hl=en"


def gatehouse(env):
    return Call(PATH.format(key=env.api_key), headers={"Accept-Language": "en"})


def baseline(env):
    return Call("/page", headers={"Accept-Language": "en"})


SCENARIO = Scenario(
    key="page",
    title="hosted phone page GET",
    gatehouse=gatehouse,
    baseline=baseline,
    baseline_label="baseline /page",
    targets=[Target("rps_ratio", ">=", 0.8, "phone page requests/s ≥ 0.8 × baseline page")],
    cgi=True,
)
