"""The benchmark scenarios, in report order. Add a scenario: one file here, one line below."""
from . import ceiling, health, jwks, page, page_all, phone_flow, verify

ALL = [verify.SCENARIO, page.SCENARIO, page_all.SCENARIO, page.LARGE, jwks.SCENARIO, health.SCENARIO, phone_flow.SCENARIO, ceiling.SCENARIO]
