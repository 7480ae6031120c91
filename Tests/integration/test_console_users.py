"""The operator console's Users pages through the real nginx (docs/console.md): the list and its
search and pages, a user's page, every action (each confirmed, each audited with the operator as
actor), and everyone the console refuses: not signed in, signed in without a second factor, not an
operator, an operator of another project, a post without CSRF, a replayed form, a form of another
action. Also `gatehouse operators` and dev mode's demo operator."""
import random
import re
import uuid
from urllib.parse import urlsplit

import pytest

import console_support as cs
from conftest import Gatehouse, store_db
from mfa_support import PROJECT, admin_lookup, code_entry, totp_user
from session_support import refresh

OTHER = "demo-other"
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


@pytest.fixture(scope="module")
def gh(tmp_path_factory):
    config = cs.config()
    config["projects"].append({"id": OTHER, "mfa": "ENABLED"})
    g = Gatehouse(tmp_path_factory.mktemp("gh-console-users"), config=config).start()
    yield g
    g.stop()


@pytest.fixture(scope="module")
def op(gh):
    return cs.operator(gh)


def tag() -> str:
    return uuid.uuid4().hex[:8]


def audit(gh, uid, since_id=0):
    """The audit rows of `uid` after `since_id`: (event, actor, outcome, detail)."""
    with store_db(gh) as db:
        return [(r["event"], r["actor"], r["outcome"], r["detail"]) for r in db.execute(
            "SELECT id, event, actor, outcome, detail FROM audit_log WHERE local_id = ? AND id > ? ORDER BY id", (uid, since_id))]


def last_audit_id(gh):
    with store_db(gh) as db:
        return db.execute("SELECT COALESCE(MAX(id), 0) AS m FROM audit_log").fetchone()["m"]


def user_path(uid, **query):
    q = "".join(f"&{k}={v}" for k, v in query.items())
    return f"{cs.CONSOLE}/users/{uid}?project={PROJECT}{q}"


def notice(html):
    m = re.search(r'id="console-notice">([^<]*)<', html)
    return m.group(1) if m else None


def error(html):
    m = re.search(r'id="console-error">([^<]*)<', html)
    return m.group(1) if m else None


def confirm(op, uid, action, **extra):
    """The confirmation page of `action`, checked to carry its form."""
    page = op.client.get(user_path(uid, confirm=action, **extra))
    assert page.status_code == 200, page.text
    f = cs.form(page.text, f"{cs.CONSOLE}/users/{uid}")
    assert f["method"] == "post" and f["fields"]["action"] == action
    assert f["fields"]["csrf"] and f["fields"]["formToken"]
    return page


def act(op, uid, action, **extra):
    """Confirms and posts `action`: the answer (a 303 back to the user, or to the list)."""
    page = confirm(op, uid, action, **extra)
    return cs.post_form(op.client, page.text, f"{cs.CONSOLE}/users/{uid}")


def followed(client, r):
    assert r.status_code == 303, (r.status_code, r.text[:500])
    return client.get(r.headers["Location"])


def session_alive(gh, client) -> bool:
    """Whether nginx still lets the client's session through (the demo's protected location)."""
    r = client.get("/demo/")
    return r.status_code == 200


# --- The command line ------------------------------------------------------------------------------

def test_operators_command_adds_lists_removes_and_audits(gh):
    user = totp_user(gh, "cli")
    uid = user["localId"]
    before = last_audit_id(gh)
    out = gh.tool("operators", "add", user["email"].upper())
    assert f"{uid} ({user['email']}) is now an operator of {PROJECT}" in out.stdout
    again = gh.tool("operators", "add", uid)
    assert "already is an operator" in again.stdout
    listing = gh.tool("operators", "list").stdout
    assert re.search(rf"^{uid}\s+-\s+{re.escape(user['email'])}\s+active\s+\S+Z\s+cli$", listing, re.M), listing
    assert audit(gh, uid, before) == [("operator.add", "cli", "ok", None)]

    # By phone number, in any format libphonenumber reads.
    phone_uid = "cli-phone-" + tag()
    digits = f"{random.randint(0, 9_999_999):07d}"
    r = gh.admin("/accounts", {"localId": phone_uid, "phoneNumber": f"+3361{digits}"}, project=PROJECT)
    assert r.status_code == 200, r.text
    added = gh.tool("operators", "add", f"+33 6 1{digits[0]} {digits[1:3]} {digits[3:5]} {digits[5:]}")
    assert f"{phone_uid} (+3361{digits}) is now an operator" in added.stdout
    # Without a second factor: added, with a note that the console will ask for one.
    assert "no second factor or passkey" in added.stderr

    unknown = gh.tool("operators", "add", "nobody-" + tag() + "@example.com", check=False)
    assert unknown.returncode == 1 and "no user nobody-" in unknown.stderr and "uid, email address or phone number" in unknown.stderr
    for who in ("", "+", "not-a-uid-" + tag()):
        r = gh.tool("operators", "add", who, check=False)
        assert r.returncode == 1 and "no user" in r.stderr
    bad_project = gh.tool("operators", "add", uid, "--project", "nope", check=False)
    assert bad_project.returncode == 64 and "no project nope" in bad_project.stderr
    # Another project: the console signs in to the first one, and says so.
    r = gh.admin("/accounts", {"localId": uid}, project=OTHER)
    assert r.status_code == 200, r.text
    other = gh.tool("operators", "add", uid, "--project", OTHER)
    assert "is now an operator of demo-other" in other.stdout and "the console signs in to demo-gatehouse" in other.stderr
    assert uid in gh.tool("operators", "list", "--project", OTHER).stdout

    before = last_audit_id(gh)
    assert f"{uid} is no longer an operator of {PROJECT}" in gh.tool("operators", "remove", user["email"]).stdout
    gone = gh.tool("operators", "remove", uid, check=False)
    assert gone.returncode == 1 and "is not an operator" in gone.stderr
    assert uid not in gh.tool("operators", "list").stdout
    assert audit(gh, uid, before) == [("operator.remove", "cli", "ok", None)]
    # `gatehouse audit` shows them with their actor.
    assert re.search(rf"operator\.remove\s+cli\s+{uid}", gh.tool("audit", "--user", uid).stdout)


def test_a_removed_operator_is_refused_at_its_next_request(gh):
    o = cs.operator(gh, "leaving")
    assert o.client.get(f"{cs.CONSOLE}/users").status_code == 200
    gh.tool("operators", "remove", o.uid)
    r = o.client.get(f"{cs.CONSOLE}/users")
    assert r.status_code == 403


# --- The list ------------------------------------------------------------------------------------

def test_the_list_searches_and_pages(gh, op):
    t = tag()
    uids = [f"pg-{t}-{i:02d}" for i in range(60)]
    phones = f"+3362{random.randint(0, 99_999):05d}"
    for i, uid in enumerate(uids):
        r = gh.admin("/accounts", {"localId": uid, "email": f"pg-{t}-{i:02d}@{t}.example", "phoneNumber": f"{phones}{i:02d}"},
                     project=PROJECT)
        assert r.status_code == 200, r.text
    r = gh.admin("/accounts:update", {"localId": uids[7], "disableUser": True}, project=PROJECT)
    assert r.status_code == 200

    page = op.client.get(f"{cs.CONSOLE}/users")
    assert page.status_code == 200
    rows = re.findall(r'<tr data-uid="([^"]+)"', page.text)
    assert len(rows) == 50
    # Newest first: the accounts just made lead (ties by uid, descending).
    assert rows == list(reversed(uids))[:50]
    assert 'id="users-next"' in page.text and 'id="users-first"' not in page.text

    # A uid prefix: 50, then the other 10 after the cursor, in byte order.
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": f"pg-{t}", "project": PROJECT})
    rows = re.findall(r'<tr data-uid="([^"]+)"', page.text)
    assert rows == uids[:50]
    assert f"starts with “pg-{t}”" in page.text
    href = re.search(r'<a href="([^"]+)" id="users-next"', page.text).group(1).replace("&amp;", "&")
    page2 = op.client.get(href)
    assert re.findall(r'<tr data-uid="([^"]+)"', page2.text) == uids[50:]
    assert 'id="users-next"' not in page2.text and 'id="users-first"' in page2.text
    # The disabled one carries its badge.
    row7 = re.search(rf'<tr data-uid="{uids[7]}">.*?</tr>', page.text, re.S).group(0)
    assert "Disabled" in row7
    row8 = re.search(rf'<tr data-uid="{uids[8]}">.*?</tr>', page.text, re.S).group(0)
    assert "Disabled" not in row8 and f"{phones}08" in row8 and f"pg-{t}-08@{t}.example" in row8

    # An email, upper-cased as typed: found as stored (lower case).
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": f"PG-{t}-1".upper() + "5@" + t.upper()})
    assert re.findall(r'<tr data-uid="([^"]+)"', page.text) == [uids[15]]
    # An email prefix without its "@", in the field picked: the same 60, the next page keeps the field.
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": f"PG-{t}-", "in": "email"})
    assert re.findall(r'<tr data-uid="([^"]+)"', page.text) == uids[:50]
    href = re.search(r'<a href="([^"]+)" id="users-next"', page.text).group(1).replace("&amp;", "&")
    assert "in=email" in href and re.findall(r'<tr data-uid="([^"]+)"', op.client.get(href).text) == uids[50:]
    # A uid picked for a text with "@": no uid has one.
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": f"pg-{t}-15@", "in": "uid"})
    assert 'id="users-empty"' in page.text
    # A phone number with spaces: its digits.
    spaced = f"+33 6 2{phones[5]} {phones[6:8]} {phones[8:]}"
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": spaced + "5"})
    assert re.findall(r'<tr data-uid="([^"]+)"', page.text) == uids[50:60]
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": spaced + "59"})
    assert re.findall(r'<tr data-uid="([^"]+)"', page.text) == [uids[59]]
    # Wildcards are text.
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": f"pg-{t}-%"})
    assert 'id="users-empty"' in page.text
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": f"pg_{t}"})
    assert 'id="users-empty"' in page.text

    # By last sign-in: none of these (they never signed in); the operator is.
    page = op.client.get(f"{cs.CONSOLE}/users", params={"sort": "last_sign_in"})
    rows = re.findall(r'<tr data-uid="([^"]+)"', page.text)
    assert op.uid in rows and not set(rows) & set(uids)

    # What cannot be run is said in words, inside the console.
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": "a\x01b"})
    assert page.status_code == 400 and "control characters" in error(page.text) and 'class="gh-console-nav"' in page.text
    page = op.client.get(f"{cs.CONSOLE}/users", params={"q": "x" * 400})
    assert page.status_code == 400
    page = op.client.get(f"{cs.CONSOLE}/users", params={"after": "not-a-cursor"})
    assert page.status_code == 200 and "not valid" in error(page.text) and len(re.findall(r"<tr data-uid=", page.text)) == 50
    page = op.client.get(f"{cs.CONSOLE}/users", params={"after": "9" * 40 + ".x"})
    assert page.status_code == 200


def test_a_uid_that_is_not_one_path_segment(gh, op):
    for uid in (f"a/b-{tag()}", "..", "%2e%2e-" + tag()):
        r = gh.admin("/accounts", {"localId": uid}, project=PROJECT)
        assert r.status_code == 200, r.text
        page = op.client.get(f"{cs.CONSOLE}/users", params={"q": uid})
        href = re.search(rf'<tr data-uid="{re.escape(uid)}">\s*<td class="gh-mono"><a href="([^"]+)">', page.text).group(1)
        href = href.replace("&amp;", "&")
        if "/" in uid or uid == "..":
            assert href.startswith(f"{cs.CONSOLE}/user?uid=")
        user = op.client.get(href)
        assert user.status_code == 200 and f'<h1 id="user-title"><span class="gh-mono">{uid}</span>' in user.text, href


# --- A user's page ---------------------------------------------------------------------------------

def test_the_user_page_shows_methods_factors_sessions_and_trail(gh, op):
    v = cs.signed_in_user(gh, "shown", user_agent=FIREFOX)
    # An app sign-in too (the enrolment's refresh token family).
    assert refresh(gh, v.user["refreshToken"]).status_code == 200
    page = op.client.get(user_path(v.uid))
    assert page.status_code == 200, page.text
    html = page.text
    assert v.email in html and "(verified)" in html
    assert re.search(r'id="user-providers">.*Email link', html, re.S)
    assert "Authenticator app" in html and v.user["enrollmentId"] in html
    assert "Firefox on Linux" in html and "127.0.0.0/24" in html
    assert "Email link, then" in html
    assert html.count('class="gh-console-row gh-console-session"') == 2
    assert "user-passkeys-title" not in html, "no passkeys, no section"
    assert "mfa.sign_in" in html and "email_link.first_factor" in html and "mfa.enrol" in html

    # More than 50 events: the newest 50, then the older ones.
    for i in range(55):
        r = gh.admin("/accounts:update", {"localId": v.uid, "displayName": f"Name {i}"}, project=PROJECT)
        assert r.status_code == 200
    html = op.client.get(user_path(v.uid)).text
    assert html.count("admin.update") == 50 and "Name 54" in html
    more = re.search(r'<a href="([^"]+)" id="trail-more"', html).group(1).replace("&amp;", "&")
    older = op.client.get(more).text
    assert older.count("admin.update") == 5 and "mfa.sign_in" in older and 'id="trail-newest"' in older
    assert 'id="trail-more"' not in older

    # A phone factor shows obfuscated.
    r = gh.admin("/accounts:update", {"localId": v.uid, "mfa": {"enrollments": [{"phoneInfo": "+33612345678", "displayName": "Desk"}]}},
                 project=PROJECT)
    assert r.status_code == 200, r.text
    html = op.client.get(user_path(v.uid)).text
    assert "SMS to +*******5678" in html and "+33612345678" not in html and "Desk" in html


def test_an_unknown_user_is_a_404_in_the_console(gh, op):
    for path in (f"{cs.CONSOLE}/users/nobody-{tag()}", f"{cs.CONSOLE}/user?uid=nobody", f"{cs.CONSOLE}/user",
                 f"{cs.CONSOLE}/users/{'x' * 200}"):
        r = op.client.get(path)
        assert r.status_code == 404 and 'class="gh-console-nav"' in r.text and 'id="user-missing"' in r.text, path
    r = op.client.post(f"{cs.CONSOLE}/users/nobody-{tag()}", data={"action": "delete"})
    assert r.status_code == 404


# --- Actions ----------------------------------------------------------------------------------------

def test_disable_then_enable(gh, op):
    v = cs.signed_in_user(gh, "disable")
    assert session_alive(gh, v.client)
    before = last_audit_id(gh)
    page = followed(op.client, act(op, v.uid, "disable"))
    assert notice(page.text) == "The account is disabled and every sign-in has ended."
    assert 'id="user-disabled"' in page.text and 'id="action-enable"' in page.text
    assert admin_lookup(gh, v.uid)["disabled"] is True
    assert not session_alive(gh, v.client)
    # Refused: revoked (checked first) as well as disabled.
    assert refresh(gh, v.user["refreshToken"]).json()["error"]["message"] in ("TOKEN_EXPIRED", "USER_DISABLED")
    rows = audit(gh, v.uid, before)
    assert [(e, a) for e, a, *_ in rows] == [("tokens.revoke", op.actor), ("admin.update", op.actor)]

    before = last_audit_id(gh)
    page = followed(op.client, act(op, v.uid, "enable"))
    assert notice(page.text) == "The account is enabled."
    assert admin_lookup(gh, v.uid).get("disabled") is not True
    # What disabling ended stays ended.
    assert not session_alive(gh, v.client)
    assert refresh(gh, v.user["refreshToken"]).json()["error"]["message"] == "TOKEN_EXPIRED"
    assert [(e, a) for e, a, *_ in audit(gh, v.uid, before)] == [("admin.update", op.actor)]
    # And the user can sign in again.
    assert session_alive(gh, cs.sign_in(gh, v.user))


def test_sign_out_everywhere(gh, op):
    v = cs.signed_in_user(gh, "signout")
    assert session_alive(gh, v.client)
    before = last_audit_id(gh)
    page = followed(op.client, act(op, v.uid, "signout"))
    assert notice(page.text) == "The user is signed out everywhere."
    assert "user-no-sessions" in page.text
    assert not session_alive(gh, v.client)
    assert refresh(gh, v.user["refreshToken"]).json()["error"]["message"] == "TOKEN_EXPIRED"
    rows = audit(gh, v.uid, before)
    assert len(rows) == 1 and rows[0][0] == "tokens.revoke" and rows[0][1] == op.actor
    assert rows[0][3].startswith("signed out everywhere by an operator")


def test_remove_a_factor(gh, op):
    v = cs.signed_in_user(gh, "factor")
    factor = v.user["enrollmentId"]
    before = last_audit_id(gh)
    page = confirm(op, v.uid, "remove_factor", factor=factor)
    assert "Authenticator app is removed from the account" in page.text
    page = followed(op.client, cs.post_form(op.client, page.text, f"{cs.CONSOLE}/users/{v.uid}"))
    assert notice(page.text) == "The second factor is removed and every sign-in has ended."
    assert "mfaInfo" not in admin_lookup(gh, v.uid)
    assert not session_alive(gh, v.client)
    rows = audit(gh, v.uid, before)
    assert rows[0][:2] == ("mfa.withdraw", op.actor) and rows[0][3].startswith(factor)
    # Gone: a confirmation of it is refused in words.
    r = op.client.get(user_path(v.uid, confirm="remove_factor", factor=factor))
    assert r.status_code == 404 and "no such second factor" in error(r.text)


def test_delete(gh, op):
    v = cs.signed_in_user(gh, "delete")
    before = last_audit_id(gh)
    r = act(op, v.uid, "delete")
    assert r.status_code == 303 and urlsplit(r.headers["Location"]).path == f"{cs.CONSOLE}/users"
    page = op.client.get(r.headers["Location"])
    assert notice(page.text) == "The account is deleted."
    lookup = gh.admin("/accounts:lookup", {"localId": [v.uid]}, project=PROJECT).json()
    assert "users" not in lookup
    assert not session_alive(gh, v.client)
    assert [(e, a) for e, a, *_ in audit(gh, v.uid, before)] == [("admin.delete", op.actor)]
    assert op.client.get(user_path(v.uid)).status_code == 404


def test_an_operator_manages_another_projects_users(gh, op):
    uid = "other-" + tag()
    assert gh.admin("/accounts", {"localId": uid}, project=OTHER).status_code == 200
    page = op.client.get(f"{cs.CONSOLE}/users/{uid}?project={OTHER}")
    assert page.status_code == 200 and 'value="demo-other" selected' in page.text
    conf = op.client.get(f"{cs.CONSOLE}/users/{uid}?project={OTHER}&confirm=disable")
    r = cs.post_form(op.client, conf.text, f"{cs.CONSOLE}/users/{uid}")
    assert r.status_code == 303 and f"project={OTHER}" in r.headers["Location"]
    assert gh.admin("/accounts:lookup", {"localId": [uid]}, project=OTHER).json()["users"][0]["disabled"] is True
    # The same uid in the default project is another account.
    assert op.client.get(f"{cs.CONSOLE}/users/{uid}?project={PROJECT}").status_code == 404


def test_an_operator_cannot_disable_or_delete_itself(gh):
    o = cs.operator(gh, "self")
    page = o.client.get(user_path(o.uid))
    assert 'id="user-self"' in page.text and 'id="action-delete"' not in page.text and 'id="action-disable"' not in page.text
    for action, words in (("delete", "cannot delete your own account"), ("disable", "cannot disable your own account")):
        r = o.client.get(user_path(o.uid, confirm=action))
        assert r.status_code == 403 and words in error(r.text)
        # A form made for another user's action does not help: its token names that user.
        signout = confirm(o, o.uid, "signout")
        fields = cs.form(signout.text, f"{cs.CONSOLE}/users/{o.uid}")["fields"]
        r = o.client.post(user_path(o.uid), data=dict(fields, action=action))
        assert r.status_code == 403
    assert admin_lookup(gh, o.uid).get("disabled") is not True
    # Signing itself out everywhere is allowed (it signs in again).
    r = act(o, o.uid, "signout")
    assert r.status_code == 303


# --- Refusals ------------------------------------------------------------------------------------

def test_not_signed_in_goes_to_sign_in(gh, op):
    for method in ("get", "post"):
        r = getattr(cs.Browser(gh), method)(f"{cs.CONSOLE}/users/{op.uid}")
        assert r.status_code == 302
        loc = urlsplit(r.headers["Location"])
        assert loc.path == "/__/auth/signin" and "console" in loc.query


def test_signed_in_without_a_second_factor_steps_up(gh):
    email = f"plain-{tag()}@example.com"
    client = cs.first_factor_session(gh, email)
    uid = gh.admin("/accounts:lookup", {"email": [email]}, project=PROJECT).json()["users"][0]["localId"]
    cs.make_operator(gh, uid)
    r = client.get(f"{cs.CONSOLE}/users")
    assert r.status_code == 302 and urlsplit(r.headers["Location"]).path in ("/__/auth/mfa", "/__/auth/account")


def test_a_non_operator_gets_a_403_that_says_nothing(gh, op):
    v = cs.signed_in_user(gh, "nonop")
    bodies = set()
    for r in (v.client.get(f"{cs.CONSOLE}/users"), v.client.get(user_path(op.uid)), v.client.get(user_path(op.uid, confirm="delete")),
              v.client.post(user_path(op.uid), data={"action": "delete"}), v.client.get(f"{cs.CONSOLE}/users/nobody")):
        assert r.status_code == 403
        text = r.text.lower()
        assert "operator" not in text and op.uid.lower() not in text and op.email not in text
        bodies.add(re.sub(r'value="[^"]*"', "", r.text))
    assert len(bodies) == 1, "every refusal is the same page"
    assert admin_lookup(gh, op.uid).get("disabled") is not True


def test_an_operator_of_another_project_is_refused(gh, op):
    v = cs.signed_in_user(gh, "otherop")
    assert gh.admin("/accounts", {"localId": v.uid}, project=OTHER).status_code == 200
    gh.tool("operators", "add", v.uid, "--project", OTHER)
    for path in (f"{cs.CONSOLE}/users", f"{cs.CONSOLE}/users?project={OTHER}", user_path(op.uid)):
        r = v.client.get(path)
        assert r.status_code == 403 and "operator" not in r.text.lower(), path


def test_a_post_without_csrf_is_refused(gh, op):
    v = cs.signed_in_user(gh, "csrf")
    page = confirm(op, v.uid, "delete")
    fields = cs.form(page.text, f"{cs.CONSOLE}/users/{v.uid}")["fields"]
    before = last_audit_id(gh)
    for data, client in ((dict(fields, csrf=""), op.client), ({k: x for k, x in fields.items() if k != "csrf"}, op.client),
                         (fields, op.client.without("__Host-gh_csrf")), ({"action": "delete"}, op.client)):
        r = client.post(user_path(v.uid), data=data)
        assert r.status_code == 403 and error(r.text) == "This form was already sent or has expired. Reload the page and try again."
    # From another origin.
    r = op.client.post(user_path(v.uid), data=fields, headers={"Origin": "https://evil.example"})
    assert r.status_code == 403
    assert audit(gh, v.uid, before) == []
    assert admin_lookup(gh, v.uid)["localId"] == v.uid


def test_a_replayed_form_is_refused(gh, op):
    v = cs.signed_in_user(gh, "replay")
    page = confirm(op, v.uid, "signout")
    before = last_audit_id(gh)
    first = cs.post_form(op.client, page.text, f"{cs.CONSOLE}/users/{v.uid}")
    assert first.status_code == 303
    again = cs.post_form(op.client, page.text, f"{cs.CONSOLE}/users/{v.uid}")
    assert again.status_code == 403 and "already sent" in error(again.text)
    assert len(audit(gh, v.uid, before)) == 1
    # Two at once: one is done.
    import concurrent.futures
    page = confirm(op, v.uid, "disable")
    before = last_audit_id(gh)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: cs.post_form(op.client, page.text, f"{cs.CONSOLE}/users/{v.uid}").status_code, range(4)))
    assert sorted(answers) == [303, 403, 403, 403]
    assert [e for e, *_ in audit(gh, v.uid, before)] == ["tokens.revoke", "admin.update"]


def test_a_form_token_for_another_action_or_user_is_refused(gh, op):
    v = cs.signed_in_user(gh, "swap")
    w = cs.signed_in_user(gh, "swap2")
    page = confirm(op, v.uid, "signout")
    fields = cs.form(page.text, f"{cs.CONSOLE}/users/{v.uid}")["fields"]
    before = last_audit_id(gh)
    # The signout form's tokens with action=delete, for this user and for another.
    assert op.client.post(user_path(v.uid), data=dict(fields, action="delete")).status_code == 403
    assert op.client.post(user_path(w.uid), data=fields).status_code == 403
    # For another project.
    assert op.client.post(f"{cs.CONSOLE}/users/{v.uid}?project={OTHER}", data=fields).status_code in (403, 404)
    # A factor's removal form for another factor.
    page = confirm(op, v.uid, "remove_factor", factor=v.user["enrollmentId"])
    fields = cs.form(page.text, f"{cs.CONSOLE}/users/{v.uid}")["fields"]
    assert op.client.post(user_path(v.uid), data=dict(fields, factor="another")).status_code == 403
    assert audit(gh, v.uid, before) == [] and audit(gh, w.uid, before) == []
    assert session_alive(gh, v.client)
    # An unknown action.
    r = op.client.get(user_path(v.uid, confirm="explode"))
    assert r.status_code == 400 and error(r.text) == "Unknown action."


# --- Dev mode ----------------------------------------------------------------------------------------

def test_dev_mode_has_a_demo_operator(make_gatehouse):
    g = make_gatehouse()
    assert re.search(r"^demo-operator\s+-\s+operator@example\.com\s+active", g.tool("operators", "list").stdout, re.M)
    client = cs.Browser(g)
    r = cs.email_link_sign_in(g, "operator@example.com", client=client)
    page = client.get(r.headers["Location"])
    code_page = cs.post_form(client, page.text, "/__/auth/mfa")
    session = cs.form(code_page.text, "/__/auth/mfa/verify")["fields"]["sessionInfo"]
    r = cs.post_form(client, code_page.text, "/__/auth/mfa/verify", code=code_entry(g, session)["code"])
    assert r.status_code == 303 and r.headers["Location"].endswith(f"{cs.CONSOLE}/users")
    page = client.get(f"{cs.CONSOLE}/users")
    assert page.status_code == 200 and 'data-uid="demo-operator"' in page.text
    # Started again: still one, not added twice.
    g.stop()
    g.start()
    assert g.tool("operators", "list").stdout.count("demo-operator") == 1
