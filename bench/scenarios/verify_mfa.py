"""1b. nginx step-up: `/__/auth/verify?require=mfa` with a session cookie that carries a phone
second factor (made by the MFA scenario's flow and createSessionCookie) vs the baseline's
/verify, as plain verify is compared: the requirement must cost nothing measurable."""
import json

from harness import stack
from harness.scenario import Call, Scenario, Target, Unavailable, describe
from harness.stack import COOKIE

from . import mfa_flow


class VerifyMFACall(Call):
    admin_token: str = ""

    def probe(self, base):
        """A session cookie with a second factor for the first MFA user; then the check itself."""
        problem = mfa_flow.enrol_users(base, self.admin_token, self.env)
        if problem:
            return problem
        email, number = mfa_flow.users(self.env)[-1]
        id_token, problem = mfa_flow.sign_in(base, self.admin_token, self.env, email, number)
        if problem:
            return problem
        url = base + f"/identitytoolkit.googleapis.com/v1/projects/{stack.PROJECT}:createSessionCookie"
        status, _, body = stack.http("POST", url, {"Authorization": f"Bearer {self.admin_token}"},
                                     {"idToken": id_token, "validDuration": 86400})
        if status != 200:
            return "createSessionCookie " + describe(status, body)
        self.headers = {"Cookie": f"{COOKIE}={json.loads(body)['sessionCookie']}"}
        return super().probe(base)


def gatehouse(env):
    if not env.admin_token:
        return Unavailable("no admin token")
    call = VerifyMFACall("/__/auth/verify?require=mfa")
    call.admin_token = env.admin_token
    call.env = env
    return call


def baseline(env):
    return Call("/verify", headers={"Cookie": f"{COOKIE}={env.bl_cookie}"})


SCENARIO = Scenario(
    key="verify_mfa",
    title="verify a session cookie with ?require=mfa (step-up)",
    gatehouse=gatehouse,
    baseline=baseline,
    baseline_label="baseline /verify",
    targets=[Target("rps_ratio", ">=", 1.0, "verify?require=mfa requests/s ≥ 1.0 × baseline"),
             Target("p99_ratio", "<=", 1.1, "verify?require=mfa p99 ≤ 1.1 × baseline")],
    part_of="verify",
)
