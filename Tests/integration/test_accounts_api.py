"""Account endpoints at the wire level (firebase-wire.md §2.6–§2.9, §2.12, §2.13, §2.18), their
legacy v3 names, and the `gatehouse users` command on the same store."""
import json

from conftest import assert_envelope
from session_support import PROJECT, claims, sign_up

LEGACY = "/www.googleapis.com/identitytoolkit/v3/relyingparty"


def test_anonymous_sign_up_and_its_refusals(gatehouse):
    s = sign_up(gatehouse)
    assert s["kind"] == "identitytoolkit#SignupNewUserResponse" and s["expiresIn"] == "3600"
    assert len(s["localId"]) == 28 and s["refreshToken"].startswith("ghrt1.")
    assert claims(s["idToken"])["provider_id"] == "anonymous"
    assert_envelope(gatehouse.api("signUp", {"localId": "chosen"}), 400, "UNEXPECTED_PARAMETER : User ID")
    assert_envelope(gatehouse.api("signUp", {"email": "a@example.com", "password": "secret123"}), 400, "OPERATION_NOT_ALLOWED")
    legacy = gatehouse.post(f"{LEGACY}/signupNewUser", params={"key": "k"}, json={"returnSecureToken": True})
    assert legacy.status_code == 200 and legacy.json()["localId"]


def test_project_config_has_a_project_number_and_the_authorized_domains(gatehouse):
    for path in ("/identitytoolkit.googleapis.com/v1/projects", f"{LEGACY}/getProjectConfig"):
        r = gatehouse.get(path, params={"key": "k"})
        assert r.status_code == 200, r.text
        assert r.json()["authorizedDomains"] == ["localhost", "127.0.0.1"]
        assert r.json()["projectId"].isdigit()
    assert gatehouse.get("/identitytoolkit.googleapis.com/v1/projects").status_code == 403


def test_users_edit_their_profile_with_an_id_token_but_nothing_more(gatehouse):
    s = sign_up(gatehouse)
    r = gatehouse.api("update", {"idToken": s["idToken"], "displayName": "Grace", "photoUrl": "https://example.com/g.png"})
    assert r.status_code == 200, r.text
    assert r.json()["kind"] == "identitytoolkit#SetAccountInfoResponse"
    assert r.json()["displayName"] == "Grace" and r.json()["localId"] == s["localId"]
    r = gatehouse.post(f"{LEGACY}/setAccountInfo", params={"key": "k"}, json={"idToken": s["idToken"], "deleteAttribute": ["PHOTO_URL"]})
    assert r.status_code == 200 and "photoUrl" not in r.json()
    assert_envelope(gatehouse.api("update", {"idToken": s["idToken"], "customAttributes": "{}"}), 400, "INSUFFICIENT_PERMISSION")
    assert_envelope(gatehouse.api("update", {"idToken": s["idToken"], "disableUser": True}), 400, "OPERATION_NOT_ALLOWED")
    assert_envelope(gatehouse.api("update", {"displayName": "x"}), 400, "INVALID_REQ_TYPE : Unsupported request parameters.")
    assert_envelope(gatehouse.api("update", {"idToken": "nope", "displayName": "x"}), 400, "INVALID_ID_TOKEN")


def test_users_delete_their_account_with_an_id_token(gatehouse):
    s = sign_up(gatehouse)
    r = gatehouse.api("delete", {"idToken": s["idToken"]})
    assert r.status_code == 200 and r.json() == {"kind": "identitytoolkit#DeleteAccountResponse"}
    assert_envelope(gatehouse.api("delete", {"idToken": s["idToken"]}), 400, "USER_NOT_FOUND")
    assert_envelope(gatehouse.api("lookup", {"idToken": s["idToken"]}), 400, "USER_NOT_FOUND")
    assert_envelope(gatehouse.admin("/accounts:delete", {}), 400, "MISSING_LOCAL_ID")


def test_admin_create_and_federated_lookup(gatehouse):
    r = gatehouse.admin("/accounts", {"localId": "fed-user", "phoneNumber": "+33612345601", "email": "fed@example.com"})
    assert r.status_code == 200 and r.json()["localId"] == "fed-user"
    assert_envelope(gatehouse.admin("/accounts", {"phoneNumber": "not a number"}), 400, "INVALID_PHONE_NUMBER : Invalid format.")
    r = gatehouse.admin("/accounts:lookup", {"federatedUserId": [{"providerId": "phone", "rawId": "+33612345601"}]})
    assert [u["localId"] for u in r.json()["users"]] == ["fed-user"]
    r = gatehouse.admin("/accounts:lookup", {"federatedUserId": [{"providerId": "phone", "rawId": "+33600000000"}]})
    assert "users" not in r.json()
    # signUp is a user's call: a bearer there, right or wrong, is not read.
    for bearer in ("Bearer not-owner", "Bearer owner"):
        assert_envelope(gatehouse.api("signUp", {"localId": "u"}, headers={"Authorization": bearer}), 400, "UNEXPECTED_PARAMETER : User ID")


def test_batch_get_pages_with_opaque_tokens(gatehouse):
    for i in range(3):
        gatehouse.admin("/accounts", {"localId": f"page-{i}"})
    first = gatehouse.admin("/accounts:batchGet", {"maxResults": 1}, method="GET")
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["kind"] == "identitytoolkit#DownloadAccountResponse" and len(body["users"]) == 1 and body["nextPageToken"]
    second = gatehouse.admin("/accounts:batchGet", {"maxResults": 1, "nextPageToken": body["nextPageToken"]}, method="GET").json()
    assert second["users"][0]["localId"] > body["users"][0]["localId"]
    assert_envelope(gatehouse.admin("/accounts:batchGet", {"maxResults": "many"}, method="GET"), 400, "INVALID_ARGUMENT")


def test_gatehouse_users_command_reads_and_changes_the_same_store(gatehouse):
    s = sign_up(gatehouse)
    uid = s["localId"]
    listing = gatehouse.tool("users", "list", "--json", "--limit", "1000").stdout
    assert uid in [json.loads(line)["localId"] for line in listing.splitlines()]
    got = json.loads(gatehouse.tool("users", "get", uid).stdout)
    assert got["localId"] == uid and got["anonymous"] is True and got["disabled"] is False
    assert "disabled" in gatehouse.tool("users", "disable", uid).stdout
    assert_envelope(gatehouse.post("/securetoken.googleapis.com/v1/token", params={"key": "k"},
                                   json={"grantType": "refresh_token", "refreshToken": s["refreshToken"]}), 400, "USER_DISABLED")
    gatehouse.tool("users", "enable", uid)
    assert "revoked" in gatehouse.tool("users", "revoke", uid).stdout
    assert_envelope(gatehouse.post("/securetoken.googleapis.com/v1/token", params={"key": "k"},
                                   json={"grantType": "refresh_token", "refreshToken": s["refreshToken"]}), 400, "TOKEN_EXPIRED")
    gatehouse.tool("users", "delete", uid)
    missing = gatehouse.tool("users", "get", uid, check=False)
    assert missing.returncode == 1 and "no such user" in missing.stderr


def test_emulator_delete_all_accounts(make_gatehouse):
    g = make_gatehouse()
    s = sign_up(g)
    r = g.post(f"/emulator/v1/projects/{PROJECT}/accounts", json=None)  # wrong method
    assert r.status_code == 405
    import requests
    r = requests.delete(g.url(f"/emulator/v1/projects/{PROJECT}/accounts"), timeout=10)
    assert r.status_code == 200 and r.json() == {}
    assert_envelope(g.api("lookup", {"idToken": s["idToken"]}), 400, "USER_NOT_FOUND")
    assert g.admin("/accounts:batchGet", {}, method="GET").json()["users"] == []
