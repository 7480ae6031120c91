"""5. A sign-in with a phone second factor over the REST API: an email link as the first factor
(the link made by the admin API, as `generateSignInWithEmailLink` does, so no mail is sent),
then the second factor with the user's enrolled test number (fixed code, no SMS), driven by
bench/lua/mfa_flow.lua: one wrk thread per connection, each owning one user. Four requests a
flow (link, email-link sign-in answering the pending credential, second-factor start and
finish); one RS256 ID token is signed per flow (the first factor signs none), so the target is
a share of `openssl speed rsa2048`, measured in the same alternating rounds."""
import json

from harness import stack
from harness.scenario import Call, Scenario, SignRate, Target, Unavailable, describe

CONNECTIONS = 8   # one user (and one of the 10 test numbers) per connection


def users(env):
    """`(email, enrolled test number)` per connection."""
    numbers = list(env.numbers)[:CONNECTIONS]
    return [(f"mfa-bench-{i}@bench.invalid", n) for i, n in enumerate(numbers)]


def enrol_users(base, admin_token, env):
    """Creates each connection's user (verified email, one factor) through the admin API; None,
    or why not."""
    admin = base + f"/identitytoolkit.googleapis.com/v1/projects/{stack.PROJECT}/accounts"
    auth = {"Authorization": f"Bearer {admin_token}"}
    for email, number in users(env):
        status, _, body = stack.http("POST", admin, auth, {"email": email, "emailVerified": True})
        if status != 200 and b"EMAIL_EXISTS" not in body:
            return "admin create " + describe(status, body)
        status, _, body = stack.http("POST", admin + ":lookup", auth, {"email": [email]})
        if status != 200:
            return "admin lookup " + describe(status, body)
        local_id = json.loads(body)["users"][0]["localId"]
        status, _, body = stack.http("POST", admin + ":update", auth,
                                     {"localId": local_id, "mfa": {"enrollments": [{"phoneInfo": number}]}})
        if status != 200:
            return "admin update mfa " + describe(status, body)
    return None


def sign_in(base, admin_token, env, email, number):
    """One whole flow: (ID token carrying the second factor, None) or (None, why not)."""
    admin = base + f"/identitytoolkit.googleapis.com/v1/projects/{stack.PROJECT}/accounts"
    auth = {"Authorization": f"Bearer {admin_token}"}
    key = env.api_key
    hdr = {"X-Bench-Client": "192.0.2.2"}
    itk = base + "/identitytoolkit.googleapis.com"
    status, _, body = stack.http("POST", admin + ":sendOobCode", auth,
                                 {"requestType": "EMAIL_SIGNIN", "email": email, "returnOobLink": True,
                                  "continueUrl": "https://127.0.0.1/"})
    if status != 200:
        return None, "admin sendOobCode " + describe(status, body)
    oob = json.loads(body)["oobCode"]
    status, _, body = stack.http("POST", itk + f"/v1/accounts:signInWithEmailLink?key={key}", hdr, {"email": email, "oobCode": oob})
    if status != 200 or b"mfaPendingCredential" not in body:
        return None, "signInWithEmailLink " + describe(status, body)
    answer = json.loads(body)
    pending, enrollment = answer["mfaPendingCredential"], answer["mfaInfo"][0]["mfaEnrollmentId"]
    status, _, body = stack.http("POST", itk + f"/v2/accounts/mfaSignIn:start?key={key}", hdr,
                                 {"mfaPendingCredential": pending, "mfaEnrollmentId": enrollment})
    if status != 200:
        return None, "mfaSignIn:start " + describe(status, body)
    session = json.loads(body)["phoneResponseInfo"]["sessionInfo"]
    status, _, body = stack.http("POST", itk + f"/v2/accounts/mfaSignIn:finalize?key={key}", hdr,
                                 {"mfaPendingCredential": pending,
                                  "phoneVerificationInfo": {"sessionInfo": session, "code": env.numbers[number]}})
    if status != 200 or b'"idToken"' not in body:
        return None, "mfaSignIn:finalize " + describe(status, body)
    return json.loads(body)["idToken"], None


class MFAFlowCall(Call):
    admin_token: str = ""

    def probe(self, base):
        """Sets the users up, then runs one whole flow."""
        problem = enrol_users(base, self.admin_token, self.env)
        if problem:
            return problem
        email, number = users(self.env)[0]
        _, problem = sign_in(base, self.admin_token, self.env, email, number)
        return problem


def gatehouse(env):
    if not env.admin_token:
        return Unavailable("no admin token")
    spec = ",".join(f"{email}:{number}:{env.numbers[number]}" for email, number in users(env))
    call = MFAFlowCall("/", script="mfa_flow.lua", flow=True, threads=CONNECTIONS, connections=CONNECTIONS,
                       lua_env={"BENCH_API_KEY": env.api_key, "BENCH_ADMIN": env.admin_token, "BENCH_PROJECT": stack.PROJECT,
                                "BENCH_USERS": spec})
    call.admin_token = env.admin_token
    call.env = env
    return call


SCENARIO = Scenario(
    key="mfa_flow",
    title="sign-in with a phone second factor (email link + SMS code)",
    gatehouse=gatehouse,
    baseline=lambda env: SignRate(),
    baseline_label="openssl speed rsa2048 sign/s",
    targets=[Target("flows_vs_sign", ">=", 0.25, "MFA flows/s ≥ 25 % of RS256 sign/s (indicative)")],
    unit="flows/s",
)
