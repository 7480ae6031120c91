"""2. The hosted phone sign-in page (GET) vs the baseline's static ~2 KB page (the benchmark's
project texts the US only, so its country list has one option); and, as an indicative control,
the page of a project that allows every region (`page_all.py`: ~13 KB, ~245 options) vs the
baseline's /page-large: the same static page padded to that page's size, so that the rows together
show how much of the gap is moving the bytes (nginx, the kernel, libfcgi) rather than Gatehouse's
work."""
import os
import re

from harness import cgi
from harness.scenario import Call, Scenario, Target

PATH = "/__/auth/phone?apiKey={key}&hl=en"


def gatehouse(env):
    return Call(PATH.format(key=env.api_key), headers={"Accept-Language": "en"})


def baseline(env):
    return Call("/page", headers={"Accept-Language": "en"})


def baseline_large(env):
    return Call("/page-large", headers={"Accept-Language": "en"})


def fit_large_page(gh, bl, env):
    """Sizes the baseline's /page-large to the every-region page `gh` serves (the instance whose
    project allows every region): the Content-Length of one CGI-mode request (the same request
    the page_large scenario sends). Returns a line for the log."""
    from . import page_all
    status, head = cgi.status_of(cgi.gatehouse_argv(gh.binary, gh.config_path(2 * (os.cpu_count() or 1))),
                                 cgi.cgi_env(page_all.gatehouse(env)))
    m = re.search(r"(?mi)^Content-Length:\s*(\d+)", head or "")
    if status != 200 or not m:
        return f"baseline /page-large keeps its default size (Gatehouse's page answered {status or head})"
    bl.large_page_bytes = int(m.group(1))
    LARGE.baseline_label = f"baseline /page-large ({bl.large_page_bytes:,} bytes, control)"
    return f"baseline /page-large sized to Gatehouse's phone page with every region: {bl.large_page_bytes:,} bytes"


SCENARIO = Scenario(
    key="page",
    title="hosted phone page GET",
    gatehouse=gatehouse,
    baseline=baseline,
    baseline_label="baseline /page",
    targets=[Target("rps_ratio", ">=", 0.9, "phone page requests/s ≥ 0.9 × baseline page")],
    cgi=True,
)

def gatehouse_all(env):
    from . import page_all
    return page_all.gatehouse(env)


LARGE = Scenario(
    key="page_large",
    title="hosted phone page GET, every region listed, against a page of its size",
    gatehouse=gatehouse_all,
    baseline=baseline_large,
    baseline_label="baseline /page-large (control)",
    stand_in=True,
    part_of="page",
    instance="all_regions",
    targets=[Target("rps_ratio", ">=", 0.8, "phone page with every region listed ≥ 0.8 × a static page of the same size", indicative=True)],
)
