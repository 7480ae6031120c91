"""The real, unmodified Firebase JS SDK (firebase 11.10.0, @firebase/auth 1.10.8) in headless
Chromium against Gatehouse: one test per flow, each run four ways:
  - dev: a dev-mode Gatehouse, the SDK in emulator mode (connectAuthEmulator), codes and links read
    from the dev outbox;
  - production: a production-mode Gatehouse, the stock SDK outside emulator mode (auth.config's
    hosts pointed at Gatehouse's path prefixes), app verification on and done by verifier.js
    imported from Gatehouse's origin (GatehouseVerifier for phone sends, the grecaptcha.enterprise
    stand-in for email links), SMS read from a webhook gateway and mail from an SMTP server;
and each from Gatehouse's own origin and from another origin (a second HTTP server). Last, pages on
origins production does not allow. The page and the SDK's layout: sdk_support.py.
"""
import base64
import contextlib
import email
import email.policy
import json
import os
import time
import uuid
from email.utils import parseaddr, parsedate_to_datetime

import pytest
import requests

import sdk_support
from sdk_support import SdkError, jwt_claims

missing = sdk_support.sdk_missing()
if missing:
    pytest.skip(missing, allow_module_level=True)

pyotp = pytest.importorskip("pyotp")

from conftest import free_port  # noqa: E402
from email_support import SMTPSink, latest_link, link_from_mail, smtp_section  # noqa: E402
from mfa_support import code_entry, number, wrong  # noqa: E402
from mfa_support import config as mfa_config  # noqa: E402
from phone_helpers import PROD_API_KEY, FakeGateway, code_in, production_config, sql  # noqa: E402

PROD_PROJECT = "prod-project"
SMS_SECRET = "webhook-secret-" + "s" * 20


class Side:
    """One Gatehouse the pages talk to, how the page reaches it, and where its codes and links
    arrive: the dev outbox (dev), or the SMS webhook and the SMTP server (production)."""

    def __init__(self, name, gh, api_key, project, sms=None, mail=None):
        self.name = name
        self.gh = gh
        self.api_key = api_key
        self.project = project
        self.sms = sms
        self.mail = mail
        self.production = name == "production"
        self.taken_sms = set()
        self.taken_mail = set()

    def phone_code(self, verification_id: str, phone: str) -> str:
        """The code sent for `verification_id` (dev) or the newest SMS to `phone` not read yet
        (production)."""
        if not self.production:
            return code_entry(self.gh, verification_id)["code"]
        deadline = time.time() + 20
        while time.time() < deadline:
            with self.sms.lock:
                received = list(enumerate(self.sms.requests))
            for i, r in reversed(received):
                body = json.loads(r["body"])
                if i not in self.taken_sms and body["to"] == phone:
                    self.taken_sms.add(i)
                    assert body["project"] == self.project, body
                    return code_in(body["body"])
            time.sleep(0.05)
        raise AssertionError(f"no SMS to {phone} at the webhook")

    def sms_count(self) -> int:
        with self.sms.lock:
            return len(self.sms.requests)

    def email_link(self, address: str) -> str:
        """The newest sign-in link for `address`: from the dev outbox, or from a message the
        SMTP server received and no step has read yet."""
        if not self.production:
            return latest_link(self.gh, address)["oobLink"]
        deadline = time.time() + 20
        while time.time() < deadline:
            with self.mail.cond:
                received = list(enumerate(self.mail.messages))
            for i, raw in reversed(received):
                if i in self.taken_mail:
                    continue
                msg = email.message_from_bytes(raw, policy=email.policy.default)
                if parseaddr(str(msg["To"]))[1].lower() == address.lower():
                    self.taken_mail.add(i)
                    return link_from_mail(msg)
            time.sleep(0.05)
        raise AssertionError(f"no mail to {address} at the SMTP server")

    def mail_count(self) -> int:
        with self.mail.cond:
            return len(self.mail.messages)


# --- the two Gatehouses, the other origins ------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("js-sdk")
    return base, sdk_support.make_site(base)


@pytest.fixture(scope="module")
def home(site):
    base, root = site
    return sdk_support.make_home(base, root)


@pytest.fixture(scope="module")
def dev(home, tmp_path_factory):
    """Dev mode: the project of the MFA tests, with TOTP on (dev mode makes its key)."""
    config = mfa_config()
    config["projects"][0]["mfa_totp"] = {"enabled": True}
    gh = sdk_support.start_gatehouse(tmp_path_factory.mktemp("gh-dev"), home, config)
    yield Side("dev", gh, sdk_support.DEFAULT_API_KEY, sdk_support.PROJECT)
    gh.stop()


@pytest.fixture(scope="module")
def production(home, tmp_path_factory):
    """Production mode: app verification and send limits on (the per-client limits raised, since
    every test comes from 127.0.0.1), SMS through a webhook, mail through SMTP, MFA with phone and
    TOTP, and 127.0.0.1 the only authorized domain (so the pages on 127.0.0.1 are allowed and
    `localhost` or 127.0.0.2 are not)."""
    folder = tmp_path_factory.mktemp("gh-prod-config")
    key_file = folder / "totp.key"
    key_file.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    key_file.chmod(0o600)
    gateway = FakeGateway().start()
    try:
        with SMTPSink(free_port()) as sink:
            config = production_config(
                folder, {"provider": "webhook", "url": gateway.url + "/sms", "secret": SMS_SECRET},
                authorized_domains=["127.0.0.1"],
                mfa="ENABLED",
                phone={"sends_per_ip_per_hour": 10000, "verify_attempts_per_ip_per_5min": 10000, "failure_budget_per_day": 100},
                email_link={"sends_per_ip_per_hour": 10000},
                app_verification={"free_challenges_per_ip": 10000, "redemptions_per_ip": 10000})
            # Added after production_config's own check, which knows nothing of them.
            config["email"] = smtp_section(sink.port)
            config["projects"][0]["mfa_totp"] = {"enabled": True}
            config["totp_key_file"] = str(key_file)
            gh = sdk_support.start_gatehouse(tmp_path_factory.mktemp("gh-prod"), home, config)
            try:
                yield Side("production", gh, PROD_API_KEY, PROD_PROJECT, sms=gateway, mail=sink)
            finally:
                gh.stop()
    finally:
        gateway.stop()


@pytest.fixture(scope="module")
def other_origin(site):
    server = sdk_support.StaticServer(site[1]).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def loopback_two(site):
    """The site from 127.0.0.2: a loopback address that is not an authorized domain."""
    server = sdk_support.StaticServer(site[1], host="127.0.0.2").start()
    yield server
    server.stop()


class Env:
    """A loaded page on one side, the test's output folder, and the checks every flow shares."""

    def __init__(self, page, side, output_dir):
        self.page = page
        self.side = side
        self.gh = side.gh
        self.output_dir = output_dir

    def run(self, body, *args):
        return self.page.run(body, *args)

    def fails(self, body, *args) -> SdkError:
        return self.page.fails(body, *args)

    def screenshot(self, name: str):
        self.page.screenshot(self.output_dir / name)

    def expect_app_tokens(self, phone: int = 0, email: int = 0):
        """In production, how many app tokens verifier.js handed the SDK since the page loaded:
        one per phone send (GatehouseVerifier), one per email send (grecaptcha.enterprise). The
        SDK in emulator mode uses none."""
        expected = {"verifier": phone, "enterprise": email} if self.side.production else {"verifier": 0, "enterprise": 0}
        assert self.run("return gh.appTokens;") == expected


SIDES = [("dev", "same"), ("dev", "cross"), ("production", "same"), ("production", "cross")]


@contextlib.contextmanager
def open_page(url: str, output_dir):
    """A Chromium on `url` (not loaded yet); on the way out, a screenshot of where it stopped (a
    failed step shows in its list)."""
    p = sdk_support.Page(url)
    try:
        yield p
    finally:
        try:
            p.driver.save_screenshot(str(output_dir / "at-teardown.png"))
        finally:
            p.quit()


@pytest.fixture(params=[pytest.param(s, id=f"{s[0]}-{s[1]}-origin") for s in SIDES])
def env(request, output_dir):
    mode, origin = request.param
    side = request.getfixturevalue(mode)
    if origin == "same":
        url = sdk_support.page_url(side.gh.base, sdk_support.SAME_ORIGIN_PATH, side.gh, side.api_key, side.project)
    else:
        other = request.getfixturevalue("other_origin")
        url = sdk_support.page_url(other.base, sdk_support.OTHER_ORIGIN_PATH, side.gh, side.api_key, side.project)
    if side.production:
        url += "&emulator=0"
    with open_page(url, output_dir) as page:
        page.load()
        state = page.run("return {emulator: !!auth.emulatorConfig, testing: !!auth.settings.appVerificationDisabledForTesting,"
                         " origin: location.origin};")
        assert state["emulator"] == state["testing"] == (not side.production)
        assert (state["origin"] == side.gh.base) == (origin == "same")
        yield Env(page, side, output_dir)


def address(tag: str) -> str:
    return f"sdk-{tag}-{uuid.uuid4().hex[:10]}@example.com"


# --- steps shared by the flows ---------------------------------------------------------------


def send_phone_code(env, phone: str, how: str = "signIn") -> str:
    """signInWithPhoneNumber (or linkWithPhoneNumber on the current user) with a fresh verifier
    (gh.verifier(): the SDK's RecaptchaVerifier in emulator mode, GatehouseVerifier in
    production); keeps the ConfirmationResult in the page; returns the code Gatehouse sent."""
    verification_id = env.run("""
        const [phone, how] = args;
        const verifier = gh.verifier();
        gh.state.confirmation = how === 'link'
            ? await sdk.linkWithPhoneNumber(auth.currentUser, phone, verifier)
            : await sdk.signInWithPhoneNumber(auth, phone, verifier);
        gh.log(`${how === 'link' ? 'linkWithPhoneNumber' : 'signInWithPhoneNumber'} ${phone}: code sent`);
        return gh.state.confirmation.verificationId;
    """, phone, how)
    return env.side.phone_code(verification_id, phone)


CONFIRM = """
    const cred = await gh.state.confirmation.confirm(args[0]);
    gh.log(`confirm: ${cred.operationType} as ${cred.user.uid}`);
    return {operationType: cred.operationType, user: gh.user()};
"""


def confirm_phone_code(env, code: str) -> dict:
    return env.run(CONFIRM, code)


def phone_user(env) -> tuple[str, dict]:
    phone = number()
    result = confirm_phone_code(env, send_phone_code(env, phone))
    assert result["operationType"] == "signIn"
    return phone, result["user"]


def send_email_link(env, email_address: str) -> str:
    """sendSignInLinkToEmail (continue URL: the page); the link as the outbox or the mail has it."""
    env.run("""
        await sdk.sendSignInLinkToEmail(auth, args[0], {url: location.href, handleCodeInApp: true});
        gh.log(`sendSignInLinkToEmail ${args[0]}`);
    """, email_address)
    return env.side.email_link(email_address)


EMAIL_LINK_SIGN_IN = """
    const [email, link] = args;
    if (!sdk.isSignInWithEmailLink(auth, link)) throw new Error(`not an email sign-in link: ${link}`);
    const cred = await sdk.signInWithEmailLink(auth, email, link);
    gh.log(`signInWithEmailLink: ${cred.operationType} as ${cred.user.uid}`);
    return {operationType: cred.operationType, user: gh.user()};
"""


def sign_in_with_email_link(env, email_address: str, link: str) -> dict:
    return env.run(EMAIL_LINK_SIGN_IN, email_address, link)


def email_link_meets_second_factor(env, email_address: str) -> dict:
    """The first factor of an enrolled user: signInWithEmailLink ends in
    auth/multi-factor-auth-required; the resolver stays in the page; its hints."""
    link = send_email_link(env, email_address)
    return env.run("""
        const [email, link] = args;
        try {
            await sdk.signInWithEmailLink(auth, email, link);
        } catch (e) {
            if (e.code !== 'auth/multi-factor-auth-required') throw e;
            gh.state.resolver = sdk.getMultiFactorResolver(auth, e);
            gh.log('signInWithEmailLink: multi-factor-auth-required');
            return gh.state.resolver.hints.map(h => ({uid: h.uid, factorId: h.factorId, displayName: h.displayName || null,
                                                      phoneNumber: h.phoneNumber || null}));
        }
        throw new Error('signed in without the second factor');
    """, email_address, link)


def sign_out(env):
    assert env.run("await sdk.signOut(auth); gh.log('signed out'); return auth.currentUser;") is None


# --- flows -------------------------------------------------------------------------------------


def test_phone_sign_in(env):
    phone = number()
    result = confirm_phone_code(env, send_phone_code(env, phone))
    assert result["operationType"] == "signIn"
    user = result["user"]
    assert user["phoneNumber"] == phone and user["providers"] == ["phone"] and not user["isAnonymous"]
    token = env.run("return (await auth.currentUser.getIdTokenResult()).token;")
    claims = jwt_claims(token)
    assert claims["firebase"]["sign_in_provider"] == "phone" and claims["phone_number"] == phone
    assert claims["aud"] == env.side.project and claims["sub"] == user["uid"]
    env.expect_app_tokens(phone=1)
    env.screenshot("phone-sign-in.png")


def test_phone_sign_in_with_a_wrong_code(env):
    phone = number()
    code = send_phone_code(env, phone)
    assert env.fails(CONFIRM, wrong(code)).code == "auth/invalid-verification-code"
    assert env.run("return auth.currentUser;") is None
    # The right code still works after a wrong one.
    result = confirm_phone_code(env, code)
    assert result["operationType"] == "signIn" and result["user"]["phoneNumber"] == phone
    env.expect_app_tokens(phone=1)
    env.screenshot("phone-wrong-code.png")


def test_token_refresh_and_persistence_across_a_reload(env):
    phone, user = phone_user(env)
    env.expect_app_tokens(phone=1)
    first = env.run("return await auth.currentUser.getIdToken();")
    time.sleep(1.1)  # a new token has a later `iat`
    refreshed = env.run("""
        const token = await sdk.getIdToken(auth.currentUser, true);
        gh.log('getIdToken(true): refreshed');
        return token;
    """)
    before, after = jwt_claims(first), jwt_claims(refreshed)
    assert refreshed != first and after["iat"] > before["iat"]
    assert after["sub"] == before["sub"] == user["uid"] and after["aud"] == env.side.project
    assert after["auth_time"] == before["auth_time"] and after["phone_number"] == phone

    env.page.driver.refresh()
    env.page.load()
    again = env.run("return gh.user();")
    assert again == user
    # The user restored from storage still holds a working refresh token.
    time.sleep(1.1)
    token = env.run("return await auth.currentUser.getIdToken(true);")
    assert jwt_claims(token)["sub"] == user["uid"] and jwt_claims(token)["iat"] > after["iat"]
    env.run("gh.log('reloaded: same user, refresh token still good');")
    env.expect_app_tokens()
    env.screenshot("token-refresh-reload.png")


def test_email_link_sign_in(env):
    email_address = address("link")
    link = send_email_link(env, email_address)
    result = sign_in_with_email_link(env, email_address, link)
    assert result["operationType"] == "signIn"
    user = result["user"]
    assert user["email"] == email_address and user["emailVerified"] and user["providers"] == ["password"]
    assert env.run("return (await auth.currentUser.getIdTokenResult()).signInProvider;") == "password"
    # A link is single-use.
    assert env.fails(EMAIL_LINK_SIGN_IN, email_address, link).code == "auth/invalid-action-code"
    env.expect_app_tokens(email=1)
    env.screenshot("email-link.png")


def test_email_link_linked_to_a_phone_user(env):
    phone, user = phone_user(env)
    email_address = address("tophone")
    link = send_email_link(env, email_address)
    linked = env.run("""
        const [email, link] = args;
        const cred = await sdk.linkWithCredential(auth.currentUser, sdk.EmailAuthProvider.credentialWithLink(email, link));
        gh.log(`linkWithCredential(emailLink): ${cred.operationType}`);
        return {operationType: cred.operationType, user: gh.user()};
    """, email_address, link)
    assert linked["operationType"] == "link"
    assert linked["user"]["uid"] == user["uid"]
    assert linked["user"]["phoneNumber"] == phone and linked["user"]["email"] == email_address
    assert linked["user"]["providers"] == ["password", "phone"]
    env.expect_app_tokens(phone=1, email=1)
    env.screenshot("email-link-to-phone-user.png")


def test_anonymous_then_phone_linking(env):
    anonymous = env.run("""
        const cred = await sdk.signInAnonymously(auth);
        gh.log(`signInAnonymously: ${cred.user.uid}`);
        return gh.user();
    """)
    assert anonymous["isAnonymous"] and anonymous["providers"] == [] and anonymous["phoneNumber"] is None
    phone = number()
    result = confirm_phone_code(env, send_phone_code(env, phone, how="link"))
    assert result["operationType"] == "link"
    user = result["user"]
    assert user["uid"] == anonymous["uid"] and user["phoneNumber"] == phone
    assert not user["isAnonymous"] and user["providers"] == ["phone"]
    env.expect_app_tokens(phone=1)
    env.screenshot("anonymous-then-phone.png")


def test_phone_mfa_enrol_sign_in_through_the_resolver_and_unenrol(env):
    email_address = address("mfa")
    first = sign_in_with_email_link(env, email_address, send_email_link(env, email_address))["user"]
    phone = number()

    # Enrolment: a session from the signed-in user, a code to the new number, the assertion.
    verification_id = env.run("""
        const session = await sdk.multiFactor(auth.currentUser).getSession();
        gh.state.verificationId = await new sdk.PhoneAuthProvider(auth).verifyPhoneNumber({phoneNumber: args[0], session}, gh.verifier());
        gh.log('verifyPhoneNumber (enrolment): code sent');
        return gh.state.verificationId;
    """, phone)
    code = env.side.phone_code(verification_id, phone)
    enrolled = env.run("""
        const assertion = sdk.PhoneMultiFactorGenerator.assertion(sdk.PhoneAuthProvider.credential(gh.state.verificationId, args[0]));
        await sdk.multiFactor(auth.currentUser).enroll(assertion, 'Work phone');
        gh.log('multiFactor.enroll: done');
        return gh.user();
    """, code)
    assert [(f["factorId"], f["displayName"], f["phoneNumber"]) for f in enrolled["factors"]] == [("phone", "Work phone", phone)]
    sign_out(env)

    # Sign-in: the first factor ends in auth/multi-factor-auth-required; the resolver's hint.
    hints = email_link_meets_second_factor(env, email_address)
    assert len(hints) == 1
    hint = hints[0]
    assert hint["factorId"] == "phone" and hint["displayName"] == "Work phone"
    assert hint["uid"] == enrolled["factors"][0]["uid"]
    assert hint["phoneNumber"] != phone and hint["phoneNumber"].endswith(phone[-4:])  # obfuscated
    verification_id = env.run("""
        const hint = gh.state.resolver.hints[0];
        gh.state.verificationId = await new sdk.PhoneAuthProvider(auth).verifyPhoneNumber(
            {multiFactorHint: hint, session: gh.state.resolver.session}, gh.verifier());
        gh.log('verifyPhoneNumber (sign-in): code sent');
        return gh.state.verificationId;
    """)
    code = env.side.phone_code(verification_id, phone)
    err = env.fails("""
        const assertion = sdk.PhoneMultiFactorGenerator.assertion(sdk.PhoneAuthProvider.credential(gh.state.verificationId, args[0]));
        await gh.state.resolver.resolveSignIn(assertion);
    """, wrong(code))
    assert err.code == "auth/invalid-verification-code"
    assert env.run("return auth.currentUser;") is None
    signed_in = env.run("""
        const assertion = sdk.PhoneMultiFactorGenerator.assertion(sdk.PhoneAuthProvider.credential(gh.state.verificationId, args[0]));
        const cred = await gh.state.resolver.resolveSignIn(assertion);
        gh.log(`resolveSignIn: ${cred.operationType} as ${cred.user.uid}`);
        const result = await cred.user.getIdTokenResult();
        return {user: gh.user(), secondFactor: result.claims.firebase.sign_in_second_factor || null};
    """, code)
    assert signed_in["user"]["uid"] == first["uid"] and signed_in["secondFactor"] == "phone"
    assert len(signed_in["user"]["factors"]) == 1

    # Unenrolment (the sign-in just passed the second factor, so it is recent enough).
    after = env.run("""
        const mfa = sdk.multiFactor(auth.currentUser);
        await mfa.unenroll(mfa.enrolledFactors[0]);
        gh.log('multiFactor.unenroll: done');
        return {user: gh.user(), current: auth.currentUser ? auth.currentUser.uid : null};
    """)
    if after["current"] is not None:
        assert after["user"]["factors"] == []
    # Whether or not the SDK kept the user signed in, the account has no factor left and the email
    # link alone signs in again.
    again = sign_in_with_email_link(env, email_address, send_email_link(env, email_address))["user"]
    assert again["uid"] == first["uid"] and again["factors"] == []
    env.expect_app_tokens(phone=2, email=3)
    env.screenshot("phone-mfa.png")


def test_totp_enrol_sign_in_through_the_resolver_and_unenrol(env):
    email_address = address("totp")
    first = sign_in_with_email_link(env, email_address, send_email_link(env, email_address))["user"]

    # The secret, as an authenticator app would get it (the page hands back sharedSecretKey).
    secret = env.run("""
        const session = await sdk.multiFactor(auth.currentUser).getSession();
        const secret = await sdk.TotpMultiFactorGenerator.generateSecret(session);
        gh.state.totpSecret = secret;
        gh.log(`generateSecret: ${secret.hashingAlgorithm}, ${secret.codeLength} digits, ${secret.codeIntervalSeconds} s`);
        return {key: secret.secretKey, algorithm: secret.hashingAlgorithm, digits: secret.codeLength,
                period: secret.codeIntervalSeconds, deadline: secret.enrollmentCompletionDeadline,
                url: secret.generateQrCodeUrl('ana@example.com', 'Gatehouse')};
    """)
    assert (secret["algorithm"], secret["digits"], secret["period"]) == ("SHA1", 6, 30)
    assert secret["url"] == (f"otpauth://totp/Gatehouse:ana@example.com?secret={secret['key']}&issuer=Gatehouse"
                             "&algorithm=SHA1&digits=6")
    deadline = parsedate_to_datetime(secret["deadline"]).timestamp()
    assert time.time() < deadline < time.time() + 3600
    totp = pyotp.TOTP(secret["key"])
    assert pyotp.parse_uri(secret["url"]).secret == secret["key"]

    # A wrong code is refused; the right one enrols.
    now = time.time()
    code = totp.at(now)
    err = env.fails("""
        const assertion = sdk.TotpMultiFactorGenerator.assertionForEnrollment(gh.state.totpSecret, args[0]);
        await sdk.multiFactor(auth.currentUser).enroll(assertion, 'Authenticator');
    """, wrong(code))
    assert err.code == "auth/invalid-verification-code"
    now = time.time()
    code, step = totp.at(now), int(now // 30)
    enrolled = env.run("""
        const assertion = sdk.TotpMultiFactorGenerator.assertionForEnrollment(gh.state.totpSecret, args[0]);
        await sdk.multiFactor(auth.currentUser).enroll(assertion, 'Authenticator');
        gh.log('multiFactor.enroll (TOTP): done');
        return gh.user();
    """, code)
    assert [(f["factorId"], f["displayName"], f["phoneNumber"]) for f in enrolled["factors"]] == [("totp", "Authenticator", None)]
    sign_out(env)

    # Sign-in through the resolver: no mfaSignIn:start for TOTP, just assertionForSignIn.
    hints = email_link_meets_second_factor(env, email_address)
    assert [(h["factorId"], h["displayName"], h["uid"]) for h in hints] == [("totp", "Authenticator", enrolled["factors"][0]["uid"])]
    resolve = """
        const hint = gh.state.resolver.hints[0];
        const assertion = sdk.TotpMultiFactorGenerator.assertionForSignIn(hint.uid, args[0]);
        const cred = await gh.state.resolver.resolveSignIn(assertion);
        gh.log(`resolveSignIn (TOTP): ${cred.operationType} as ${cred.user.uid}`);
        const result = await cred.user.getIdTokenResult();
        return {user: gh.user(), secondFactor: result.claims.firebase.sign_in_second_factor || null};
    """
    # The code the enrolment used is spent (a code counts once); the next time step's is good.
    assert env.fails(resolve, code).code == "auth/invalid-verification-code"
    assert env.run("return auth.currentUser;") is None
    signed_in = env.run(resolve, totp.at((step + 1) * 30))
    assert signed_in["user"]["uid"] == first["uid"] and signed_in["secondFactor"] == "totp"
    assert [f["factorId"] for f in signed_in["user"]["factors"]] == ["totp"]

    after = env.run("""
        const mfa = sdk.multiFactor(auth.currentUser);
        await mfa.unenroll(mfa.enrolledFactors[0]);
        gh.log('multiFactor.unenroll (TOTP): done');
        return {user: gh.user(), current: auth.currentUser ? auth.currentUser.uid : null};
    """)
    if after["current"] is not None:
        assert after["user"]["factors"] == []
    again = sign_in_with_email_link(env, email_address, send_email_link(env, email_address))["user"]
    assert again["uid"] == first["uid"] and again["factors"] == []
    env.expect_app_tokens(email=3)
    env.screenshot("totp-mfa.png")


# --- an origin production does not allow ---------------------------------------------------------

SDK_HEADERS = "content-type,x-client-version"


def store_counts(gh) -> dict:
    """What a refused page could have created: accounts, codes, links, messages, app tokens."""
    return {
        "accounts": sql(gh, "SELECT COUNT(*) FROM accounts WHERE project_id = ?", PROD_PROJECT)[0][0],
        "phone_verifications": sql(gh, "SELECT COUNT(*) FROM phone_verifications")[0][0],
        "email_links": sql(gh, "SELECT COUNT(*) FROM email_links")[0][0],
        "outbox": sql(gh, "SELECT COUNT(*) FROM outbox")[0][0],
        "app_tokens": sql(gh, "SELECT COUNT(*) FROM app_tokens")[0][0],
    }


def preflight(gh, path: str, origin: str):
    return requests.options(gh.url(path), params={"key": PROD_API_KEY}, timeout=10, headers={
        "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": SDK_HEADERS})


@pytest.mark.parametrize("host", ["127.0.0.2", "localhost"])
def test_an_origin_that_is_not_allowed(host, production, loopback_two, other_origin, output_dir):
    """Production Gatehouse, the page on an origin that is not an authorized domain (127.0.0.2, or
    `localhost` when only 127.0.0.1 is authorized): every SDK call fails as a network failure, no
    answer carries Access-Control-Allow-Origin, and nothing is created or sent."""
    gh = production.gh
    server = loopback_two if host == "127.0.0.2" else other_origin
    origin = f"http://{host}:{server.port}"
    allowed = other_origin.base  # http://127.0.0.1:<port>, for contrast
    url = sdk_support.page_url(origin, sdk_support.OTHER_ORIGIN_PATH, gh, PROD_API_KEY, PROD_PROJECT) + "&emulator=0"
    before = store_counts(gh)
    sms_before, mail_before = production.sms_count(), production.mail_count()

    with open_page(url, output_dir) as page:
        page.load()  # verifier.js itself is served to any origin
        assert page.run("return location.origin;") == origin
        for name, call in [("signInAnonymously", "await sdk.signInAnonymously(auth);"),
                           ("sendSignInLinkToEmail", "await sdk.sendSignInLinkToEmail(auth, 'refused@example.com', "
                                                     "{url: location.href, handleCodeInApp: true});")]:
            err = page.fails(f"gh.log('{name} from ' + location.origin); {call}")
            assert err.code == "auth/network-request-failed", (name, err)
        # Phone: GatehouseVerifier cannot read its challenge, so no send is attempted (the error's
        # code: test_phone_sign_in_from_an_origin_that_is_not_allowed).
        page.fails("gh.log('signInWithPhoneNumber from ' + location.origin);"
                   "await sdk.signInWithPhoneNumber(auth, args[0], gh.verifier());", number())
        assert page.run("return {user: auth.currentUser, tokens: gh.appTokens};") == \
            {"user": None, "tokens": {"verifier": 0, "enterprise": 0}}
        page.run("gh.log('every call failed; no user');")
        page.screenshot(output_dir / "refused-origin.png")

    # The same refusals seen directly: preflights 403 without CORS headers, answers without
    # Access-Control-Allow-Origin; the allowed origin gets them.
    for path in ["/identitytoolkit.googleapis.com/v1/accounts:signUp", "/identitytoolkit.googleapis.com/v1/accounts:sendOobCode",
                 "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode",
                 "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start", "/securetoken.googleapis.com/v1/token"]:
        refused = preflight(gh, path, origin)
        assert refused.status_code == 403, (path, refused.status_code)
        assert not any(h.lower().startswith("access-control-") for h in refused.headers), (path, dict(refused.headers))
        ok = preflight(gh, path, allowed)
        assert ok.status_code == 204 and ok.headers["Access-Control-Allow-Origin"] == allowed, (path, dict(ok.headers))
    answers = [
        requests.post(gh.url("/identitytoolkit.googleapis.com/v1/accounts:lookup"), params={"key": PROD_API_KEY},
                      json={"idToken": "not.a.token"}, headers={"Origin": origin}, timeout=10),
        requests.get(gh.url("/identitytoolkit.googleapis.com/v2/recaptchaConfig"), params={
            "key": PROD_API_KEY, "clientType": "CLIENT_TYPE_WEB", "version": "RECAPTCHA_ENTERPRISE"},
            headers={"Origin": origin}, timeout=10),
        requests.get(gh.url("/__/auth/challenge"), params={"apiKey": PROD_API_KEY}, headers={"Origin": origin}, timeout=10),
    ]
    assert answers[0].status_code == 400 and answers[0].json()["error"]["message"].startswith("INVALID_ID_TOKEN")
    assert answers[1].status_code == 200 and answers[2].status_code == 200
    for r in answers:
        assert "Access-Control-Allow-Origin" not in r.headers, (r.url, dict(r.headers))
    script = requests.get(gh.url("/__/auth/static/verifier.js"), headers={"Origin": origin}, timeout=10)
    assert script.status_code == 200 and script.headers["Access-Control-Allow-Origin"] == "*"

    # Nothing created, nothing sent.
    time.sleep(0.5)
    assert store_counts(gh) == before
    assert (production.sms_count(), production.mail_count()) == (sms_before, mail_before)


def test_phone_sign_in_from_an_origin_that_is_not_allowed(production, loopback_two, output_dir):
    """What an app sees when signInWithPhoneNumber runs on a refused origin: the SDK's own
    RecaptchaVerifier reports a failed load as auth/network-request-failed, and so should the
    verifier Gatehouse ships, so the app's handling of network failures covers it."""
    origin = loopback_two.base
    url = sdk_support.page_url(origin, sdk_support.OTHER_ORIGIN_PATH, production.gh, PROD_API_KEY, PROD_PROJECT) + "&emulator=0"
    sms_before = production.sms_count()
    with open_page(url, output_dir) as page:
        page.load()
        err = page.fails("gh.log('signInWithPhoneNumber from ' + location.origin);"
                         "await sdk.signInWithPhoneNumber(auth, args[0], gh.verifier());", number())
        page.screenshot(output_dir / "refused-origin-phone.png")
    assert production.sms_count() == sms_before
    assert err.code == "auth/network-request-failed", err
