"""Indicative: the hosted phone page of a project that allows every SMS region, vs the baseline's
static ~2 KB page. The benchmark's project texts the US only, so its page (scenario 2) lists one
country; a project allowing every region gets all ~245 regions libphonenumber knows (~13 KB), as
the page was for every project before the list followed `sms_regions`. Served by a second
Gatehouse instance (same binary, same worker count) whose only project lists every region in
`sms_regions`, reached through the same nginx ports by its Host name."""
from harness import stack
from harness.scenario import Call, Scenario, Target

from . import page


def gatehouse(env):
    return Call(page.PATH.format(key=env.api_key), headers={"Accept-Language": "en", "Host": stack.ALL_REGIONS_HOST})


SCENARIO = Scenario(
    key="page_all",
    title="hosted phone page GET, every region listed",
    gatehouse=gatehouse,
    baseline=page.baseline,
    baseline_label="baseline /page (indicative)",
    stand_in=True,
    part_of="page",
    instance="all_regions",
    targets=[Target("rps_ratio", ">=", 0.8, "phone page with every region listed ≥ 0.8 × baseline page", indicative=True)],
)
