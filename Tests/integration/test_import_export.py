"""Moving a Firebase project over: accounts:batchCreate through the firebase-admin package's
import_users, `gatehouse users import` of the JSON `firebase auth:export` writes (a fixture in
that format), sign-in by phone as an imported uid, an export → import round trip that is
identical, and accounts:query."""
import json

import pytest
from firebase_admin import auth

from conftest import Gatehouse, ROOT, admin_sdk
from phone_helpers import dev_config
from session_support import PROJECT

FIXTURE = ROOT / "Tests/integration/fixtures/firebase-auth-export.json"


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    g = Gatehouse(tmp_path_factory.mktemp("move"), config=dev_config()).start()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def app(gh):
    with admin_sdk(gh, PROJECT) as a:
        yield a


def phone_sign_in(g, number):
    session = g.api("sendVerificationCode", {"phoneNumber": number}).json()["sessionInfo"]
    codes = g.get(f"/emulator/v1/projects/{PROJECT}/verificationCodes").json()["verificationCodes"]
    code = next(c["code"] for c in codes if c["sessionInfo"] == session)
    r = g.api("signInWithPhoneNumber", {"sessionInfo": session, "code": code})
    assert r.status_code == 200, r.text
    return r.json()


def test_import_users_keeps_uids_and_the_imported_uid_signs_in_by_phone(gh, app):
    users = [
        auth.ImportUserRecord(uid="legacy-uid-1", phone_number="+33612345681", display_name="Lin",
                              custom_claims={"plan": "gold"}, user_metadata=auth.UserMetadata(1690000000000, 1700000000000)),
        auth.ImportUserRecord(uid="legacy-uid-2", email="Kim@Example.com", email_verified=True, disabled=True),
        auth.ImportUserRecord(uid="legacy-uid-3", phone_number="+1555"),
        auth.ImportUserRecord(uid="legacy-uid-4", email="kim@example.com"),
    ]
    result = auth.import_users(users, app=app)
    assert result.success_count == 2 and result.failure_count == 2
    assert [(e.index, e.reason) for e in result.errors] == [
        (2, "phone number format is invalid"), (3, "email exists in other account in database")]
    lin = auth.get_user("legacy-uid-1", app=app)
    assert lin.phone_number == "+33612345681" and lin.display_name == "Lin" and lin.custom_claims == {"plan": "gold"}
    assert lin.user_metadata.creation_timestamp == 1690000000000
    kim = auth.get_user("legacy-uid-2", app=app)
    assert kim.email == "kim@example.com" and kim.email_verified and kim.disabled
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user("legacy-uid-3", app=app)
    # The imported uid is who signs in with that phone: data keyed by uid keeps working.
    body = phone_sign_in(gh, "+33612345681")
    assert body["localId"] == "legacy-uid-1" and body["isNewUser"] is False
    # An existing uid is refused unless overwriting.
    again = auth.import_users([auth.ImportUserRecord(uid="legacy-uid-1", display_name="New")], app=app)
    assert again.failure_count == 1 and "existing account" in again.errors[0].reason


def test_batch_create_wire_errors_and_second_factors(gh):
    r = gh.admin("/accounts:batchCreate", {"users": []})
    assert r.status_code == 400 and r.json()["error"]["message"] == "MISSING_USER_ACCOUNT"
    r = gh.admin("/accounts:batchCreate", {"users": [{"localId": "dup"}, {"localId": "dup"}]})
    assert r.json()["error"]["message"] == "DUPLICATE_LOCAL_ID : dup"
    r = gh.admin("/accounts:batchCreate", {"users": [{"localId": f"u{i}"} for i in range(1001)]})
    assert r.json()["error"]["message"].startswith("MAXIMUM_USER_COUNT_EXCEEDED")
    r = gh.admin("/accounts:batchCreate", {"users": [
        {"localId": "mfa-1", "email": "mfa1@example.com", "emailVerified": True,
         "mfaInfo": [{"phoneInfo": "+16505550111", "displayName": "work", "mfaEnrollmentId": "enr1", "enrolledAt": "2024-01-02T03:04:05Z"}]},
        {"localId": "mfa-2", "mfaInfo": [{"phoneInfo": "+16505550112"}]},
        {"localId": "typed", "disabled": "yes"},
        {"localId": 12},
        {"localId": "bad-mail", "email": "not-an-email"},
        {"localId": "bad-claims", "customAttributes": "{\"sub\": \"x\"}"},
    ]})
    assert r.status_code == 200, r.text
    assert r.json()["error"] == [{"index": 1, "message": "Second factor account requires email to be presented."},
                                 {"index": 2, "message": "disabled must be true or false"},
                                 {"index": 3, "message": "localId must be a string"},
                                 {"index": 4, "message": "email is invalid"},
                                 {"index": 5, "message": "Custom claims provided include a reserved claim."}]
    info = gh.admin("/accounts:lookup", {"localId": ["mfa-1"]}).json()["users"][0]["mfaInfo"]
    assert info[0]["mfaEnrollmentId"] == "enr1" and info[0]["phoneInfo"] == "+16505550111"
    assert info[0]["enrolledAt"] == "2024-01-02T03:04:05.000Z"


def test_firebase_export_file_imports_and_round_trips_identically(gh, make_gatehouse, tmp_path):
    out = gh.tool("users", "import", str(FIXTURE))
    assert "imported 3 account(s)" in out.stdout
    ada = gh.admin("/accounts:lookup", {"localId": ["Xb2kQ1mFirebaseUid000000001"]}).json()["users"][0]
    assert ada["email"] == "ada@example.com" and ada["emailVerified"] and ada["displayName"] == "Ada Lovelace"
    assert ada["createdAt"] == "1690000000000" and ada["lastLoginAt"] == "1700000100000"
    assert json.loads(ada["customAttributes"]) == {"role": "admin"}
    assert "passwordHash" not in ada  # no password sign-in: hashes are not imported
    assert [p["providerId"] for p in ada["providerUserInfo"]] == ["google.com"]
    # The imported phone user signs in by phone as its Firebase uid.
    assert phone_sign_in(gh, "+33612345688")["localId"] == "Xb2kQ1mFirebaseUid000000002"
    # A second import of the same file reports each existing uid and changes nothing.
    again = gh.tool("users", "import", str(FIXTURE), check=False)
    assert again.returncode == 1 and again.stderr.count("existing account") == 3

    first = tmp_path / "first.json"
    assert "exported" in gh.tool("users", "export", str(first)).stdout
    exported = json.loads(first.read_text())["users"]
    assert {u["localId"] for u in exported} >= {"Xb2kQ1mFirebaseUid000000001", "legacy-uid-1", "mfa-1"}
    other = make_gatehouse(config=dev_config())
    assert "imported" in other.tool("users", "import", str(first)).stdout
    second = tmp_path / "second.json"
    other.tool("users", "export", str(second))
    assert first.read_bytes() == second.read_bytes()


def test_accounts_query_counts_and_searches(gh):
    count = int(gh.admin("/accounts:query", {"returnUserInfo": False}).json()["recordsCount"])
    listed = gh.admin("/accounts:query", {}).json()
    assert int(listed["recordsCount"]) == len(listed["userInfo"]) == min(count, 500)
    ids = [u["localId"] for u in listed["userInfo"]]
    assert ids == sorted(ids)
    page = gh.admin("/accounts:query", {"limit": 2, "offset": 1}).json()["userInfo"]
    assert [u["localId"] for u in page] == ids[1:3]
    desc = gh.admin("/accounts:query", {"order": "DESC", "limit": 3}).json()["userInfo"]
    assert [u["localId"] for u in desc] == ids[::-1][:3]
    found = gh.admin("/accounts:query", {"expression": [{"email": "KIM@example.com"}, {"userId": "legacy-uid-1"},
                                                         {"phoneNumber": "+19999999999"}]}).json()
    assert [u["localId"] for u in found["userInfo"]] == ["legacy-uid-1", "legacy-uid-2"]
    bad = gh.admin("/accounts:query", {"limit": 5000})
    assert bad.status_code == 400 and bad.json()["error"]["message"].startswith("INVALID_ARGUMENT")
    assert gh.post(f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:query", json={}).status_code in (401, 403)


def test_a_thousand_rows_import_in_one_request_and_other_routes_keep_the_default_limit(make_gatehouse):
    # Through nginx and the FastCGI transport: the import has a body limit of its own
    # (listen.max_import_body_bytes), every other route keeps listen.max_body_bytes (64 KiB).
    g = make_gatehouse(config=dev_config())
    users = [{"localId": f"bulk-{i:04}", "email": f"bulk{i:04}@example.com", "emailVerified": True,
              "displayName": f"Imported user {i:04} of the old project", "photoUrl": f"https://img.example.com/{i:04}.png",
              "customAttributes": json.dumps({"plan": "pro"}), "createdAt": "1690000000000"} for i in range(1000)]
    assert 150_000 < len(json.dumps({"users": users})) < 4 << 20
    r = g.admin("/accounts:batchCreate", {"users": users})
    assert r.status_code == 200, r.text[:300]
    assert r.json()["error"] == []
    assert g.admin("/accounts:lookup", {"localId": ["bulk-0999"]}).json()["users"][0]["email"] == "bulk0999@example.com"
    for r in (g.admin("/accounts:lookup", {"localId": ["bulk-0001"], "pad": "x" * 70_000}),
              g.api("lookup", {"idToken": "x", "pad": "x" * 70_000})):
        assert r.status_code == 413 and r.json()["error"]["message"] == "PAYLOAD_TOO_LARGE : Request body larger than 65536 bytes"
