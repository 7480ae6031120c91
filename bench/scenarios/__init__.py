"""The benchmark scenarios, in report order. Add a scenario: one file here, one line below."""
from . import ceiling, health, jwks, mfa_flow, page, page_all, phone_flow, refresh, verify, verify_mfa

ALL = [verify.SCENARIO, verify_mfa.SCENARIO, page.SCENARIO, page_all.SCENARIO, page.LARGE, jwks.SCENARIO, health.SCENARIO, phone_flow.SCENARIO, mfa_flow.SCENARIO, refresh.SCENARIO, ceiling.SCENARIO]
