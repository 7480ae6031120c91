"""Helpers for the operator console tests (docs/console.md): a Gatehouse with TOTP on, a user with an
authenticator app signed in on the hosted pages with both factors (email link, then the app's code),
made an operator with `gatehouse operators add`, and a cookie-keeping HTTP client for its session;
the console forms' hidden fields (`csrf`, `formToken`) read from a page and posted back.

    gh = Gatehouse(tmp, config=console_support.config()).start()
    op = console_support.operator(gh)              # op.client: a Browser signed in as an operator
    page = op.client.get("/__/auth/console/users")
    r = console_support.post_form(op.client, page.text, "/__/auth/console/users/" + uid, action="disable")
"""
import time
from html.parser import HTMLParser
from urllib.parse import urlsplit

import requests

from email_support import latest_link
from mfa_support import PROJECT, totp_user

CONSOLE = "/__/auth/console"
SESSION_COOKIE = "__Host-gatehouse"


def config(**project) -> dict:
    """Dev mode, the deployment's own project with second factors and authenticator apps on, limits
    high enough for a whole module (every request comes from 127.0.0.1)."""
    p = {
        "id": PROJECT,
        "mfa": "ENABLED",
        "mfa_totp": {"enabled": True, "adjacent_intervals": 1},
        "phone": {"verify_attempts_per_ip_per_5min": 10000, "failure_budget_per_day": 100},
        "email_link": {"sends_per_ip_per_hour": 10000},
    }
    p.update(project)
    return {"mode": "dev", "projects": [p]}


class Browser(requests.Session):
    """A client that keeps the cookies Gatehouse sets, the `__Host-` ones included, and sends them
    back as a browser on https would (requests' own jar never sends a Secure cookie over http).
    Paths are relative to the Gatehouse; redirects are not followed unless asked; every request
    carries the Gatehouse's Origin (what a browser sends with a form post)."""

    def __init__(self, gh, user_agent: str | None = None):
        super().__init__()
        self.gh = gh
        self.headers["Origin"] = gh.base
        if user_agent:
            self.headers["User-Agent"] = user_agent

    def request(self, method, url, *args, **kw):
        kw.setdefault("allow_redirects", False)
        kw.setdefault("timeout", 10)
        if url.startswith("/"):
            url = self.gh.base + url
        return super().request(method, url, *args, **kw)

    def get(self, url, **kw):
        # (requests.Session.get would ask to follow redirects.)
        kw.setdefault("allow_redirects", False)
        return self.request("GET", url, **kw)

    def send(self, request, **kw):
        r = super().send(request, **kw)
        # Applied in order, the redirects' answers first (a nested send has applied them already;
        # doing it again in order leaves the same result).
        for resp in list(r.history) + [r]:
            for raw in resp.raw.headers.getlist("Set-Cookie") if resp.raw is not None else []:
                self._keep(raw)
        return r

    def _keep(self, raw: str):
        first, *attrs = raw.split(";")
        name, _, value = first.strip().partition("=")
        gone = value == "" or any(a.strip().lower() == "max-age=0" for a in attrs)
        for c in [c for c in self.cookies if c.name == name]:
            self.cookies.clear(c.domain, c.path, c.name)
        if not gone:
            self.cookies.set(name, value)

    @property
    def session_cookie(self):
        return self.cookies.get(SESSION_COOKIE)

    def without(self, *names) -> "Browser":
        """A copy of this client without the named cookies (e.g. the CSRF cookie)."""
        other = Browser(self.gh)
        for c in self.cookies:
            if c.name not in names:
                other.cookies.set(c.name, c.value)
        return other


class Operator:
    """A signed-in user: its client, uid, email and the TOTP generator of its factor."""

    def __init__(self, client, user):
        self.client = client
        self.user = user
        self.uid = user["localId"]
        self.email = user["email"]

    @property
    def actor(self) -> str:
        """The audit log's actor of what this operator does."""
        return "operator:" + self.uid


def next_code(user) -> str:
    """A TOTP code of `user` no sign-in has used: each step is accepted once per factor, so the
    steps are taken in order, the current one or the next ones (the project allows one either side)."""
    step = max(int(time.time() // 30), user.get("lastStep", 0) + 1)
    if step > int(time.time() // 30) + 1:
        # Both usable steps are spent: wait for the clock.
        time.sleep((step - 1) * 30 - time.time() + 0.2)
    user["lastStep"] = step
    return user["totp"].at(step * 30)


def email_link_sign_in(gh, email: str, continue_path: str = CONSOLE + "/users", client: Browser | None = None) -> requests.Response:
    """The hosted email-link sign-in with a link Gatehouse sent: the confirmation page, its form;
    the answer of the form's POST (a redirect to the second-factor page, or to the continue URL
    with the session cookie)."""
    client = client or Browser(gh)
    r = gh.api("sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": gh.url(continue_path)})
    assert r.status_code == 200, r.text
    link = latest_link(gh, email)["oobLink"]
    parts = urlsplit(link)
    page = client.get(parts.path + "?" + parts.query)
    assert page.status_code == 200, page.text
    return post_form(client, page.text, "/__/auth/action", email=email)


def sign_in(gh, user, continue_path: str = CONSOLE + "/users", user_agent: str | None = None) -> Browser:
    """A TOTP user (`mfa_support.totp_user`) signed in on the hosted pages with both factors: the
    email link, then the app's code on the second-factor page. The client holds the session."""
    client = Browser(gh, user_agent)
    r = email_link_sign_in(gh, user["email"], continue_path, client)
    assert r.status_code in (302, 303) and urlsplit(r.headers["Location"]).path == "/__/auth/mfa", (r.status_code, r.headers, r.text)
    page = client.get(r.headers["Location"])
    assert page.status_code == 200, page.text
    r = post_form(client, page.text, "/__/auth/mfa/totp", code=next_code(user))
    assert r.status_code in (302, 303), r.text
    assert r.headers["Location"].endswith(continue_path), r.headers["Location"]
    assert client.session_cookie, "no session cookie"
    return client


def first_factor_session(gh, email: str, continue_path: str = CONSOLE + "/users") -> Browser:
    """A user without a second factor signed in with an email link only (made on the way)."""
    client = Browser(gh)
    r = email_link_sign_in(gh, email, continue_path, client)
    assert r.status_code in (302, 303) and r.headers["Location"].endswith(continue_path), (r.status_code, r.headers)
    assert client.session_cookie
    return client


def make_operator(gh, who: str, *extra) -> str:
    """`gatehouse operators add <who>`: its output."""
    return gh.tool("operators", "add", who, *extra).stdout


def operator(gh, tag: str = "op") -> Operator:
    """A new TOTP user, made an operator by the command line, signed in with both factors."""
    user = totp_user(gh, tag)
    make_operator(gh, user["localId"])
    return Operator(sign_in(gh, user), user)


def signed_in_user(gh, tag: str = "user", user_agent: str | None = None) -> Operator:
    """A new TOTP user signed in with both factors, not an operator."""
    user = totp_user(gh, tag)
    return Operator(sign_in(gh, user, user_agent=user_agent), user)


# --- Forms -------------------------------------------------------------------------------------

class _Forms(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action") or "", "method": (a.get("method") or "get").lower(), "fields": {}})
        elif tag in ("input", "button") and self.forms and a.get("name"):
            kind = (a.get("type") or ("submit" if tag == "button" else "text")).lower()
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            if kind == "submit":
                # A submit button's value goes with the form only when it is the one clicked.
                self.forms[-1].setdefault("buttons", {})[a["name"]] = a.get("value") or ""
                return
            self.forms[-1]["fields"][a["name"]] = a.get("value") or ""


def forms(html: str) -> list:
    """Every form of a page: {"action", "method", "fields" (inputs with their values), "buttons"}."""
    p = _Forms()
    p.feed(html)
    return p.forms


def form(html: str, action: str, **match) -> dict:
    """The form posting to `action` (its path, any query ignored) whose fields include `match`."""
    for f in forms(html):
        if urlsplit(f["action"]).path == urlsplit(action).path and all(
                f["fields"].get(k, f.get("buttons", {}).get(k)) == v for k, v in match.items()):
            return f
    raise AssertionError(f"no form to {action} {match or ''} in the page:\n{html[:3000]}")


def hidden(html: str, action: str, **match) -> dict:
    """The `csrf` and `formToken` of a console form."""
    fields = form(html, action, **match)["fields"]
    return {k: fields[k] for k in ("csrf", "formToken") if k in fields}


def post_form(client: Browser, html: str, action: str, match: dict | None = None, **values) -> requests.Response:
    """Posts the form to `action` (chosen by `match`, e.g. {"action": "disable"}) with its own
    fields, `values` added or replacing them."""
    f = form(html, action, **(match or {}))
    fields = dict(f["fields"])
    for k, v in (match or {}).items():
        fields.setdefault(k, v)
    fields.update(values)
    target = f["action"] or action
    return client.post(target, data=fields)
