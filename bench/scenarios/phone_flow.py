"""4. A full phone sign-in over the REST API with test numbers (send code, sign in), driven by
bench/lua/phone_flow.lua: one wrk thread per connection, each owning one test number.
Each sign-in signs one RS256 ID token, so the target is a share of `openssl speed rsa2048`,
measured as the baseline side: in the same alternating rounds as the flow, so that each round's
ratio compares two figures taken under the same load (the machine is shared)."""
from harness import stack
from harness.scenario import Call, Scenario, SignRate, Target, describe

CONNECTIONS = 8   # ≤ the 10 test numbers a project may have


class FlowCall(Call):
    def probe(self, base):
        key = self.lua_env["BENCH_API_KEY"]
        number, code = self.lua_env["BENCH_NUMBERS"].split(",")[0].split(":")
        itk = base + "/identitytoolkit.googleapis.com/v1/accounts:"
        hdr = {"X-Bench-Client": "192.0.2.1"}
        status, _, body = stack.http("POST", itk + f"sendVerificationCode?key={key}", hdr, {"phoneNumber": number})
        if status != 200:
            return "sendVerificationCode " + describe(status, body)
        import json
        session = json.loads(body).get("sessionInfo")
        status, _, body = stack.http("POST", itk + f"signInWithPhoneNumber?key={key}", hdr, {"sessionInfo": session, "code": code})
        if status != 200 or b'"idToken"' not in body:
            return "signInWithPhoneNumber " + describe(status, body)
        return None


def gatehouse(env):
    numbers = ",".join(f"{n}:{c}" for n, c in list(env.numbers.items())[:CONNECTIONS])
    return FlowCall("/", script="phone_flow.lua", flow=True, threads=CONNECTIONS, connections=CONNECTIONS,
                    lua_env={"BENCH_API_KEY": env.api_key, "BENCH_NUMBERS": numbers})


SCENARIO = Scenario(
    key="phone_flow",
    title="phone sign-in (send + sign in)",
    gatehouse=gatehouse,
    baseline=lambda env: SignRate(),
    baseline_label="openssl speed rsa2048 sign/s",
    targets=[Target("flows_vs_sign", ">=", 0.8, "phone flows/s ≥ 80 % of RS256 sign/s")],
    growth=True,
    unit="flows/s",
)
