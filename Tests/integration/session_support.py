"""Helpers for the session/token tests: tokens from anonymous sign-up, session cookies, and
requests that carry the session cookie (requests' jar would not send a Secure cookie over http)."""
import base64
import json
import re

import requests

COOKIE = "__Host-gatehouse"
PROJECT = "demo-gatehouse"


def sign_up(g) -> dict:
    """An anonymous account: {localId, idToken, refreshToken, expiresIn}."""
    r = g.api("signUp", {"returnSecureToken": True})
    assert r.status_code == 200, r.text
    return r.json()


def session_cookie(g, id_token: str, valid_duration=3600) -> str:
    r = g.post(f"/identitytoolkit.googleapis.com/v1/projects/{PROJECT}:createSessionCookie",
               json={"idToken": id_token, "validDuration": valid_duration}, headers={"Authorization": "Bearer owner"})
    assert r.status_code == 200, r.text
    return r.json()["sessionCookie"]


def get_with_cookie(g, path, cookie, headers=None, **kw):
    h = dict(headers or {})
    h["Cookie"] = f"{COOKIE}={cookie}"
    return g.get(path, headers=h, **kw)


def refresh(g, refresh_token: str, form=False):
    url = "/securetoken.googleapis.com/v1/token"
    body = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    if form:
        return g.post(url, params={"key": "test-api-key"}, data=body)
    return g.post(url, params={"key": "test-api-key"}, json={"grantType": "refresh_token", "refreshToken": refresh_token})


def claims(jwt: str) -> dict:
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def header(jwt: str) -> dict:
    h = jwt.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(h + "=" * (-len(h) % 4)))


def sign_out(g, cookie: str) -> requests.Response:
    """Signs out the way the account page's form does (CSRF cookie + token)."""
    page = get_with_cookie(g, "/__/auth/account", cookie)
    assert page.status_code == 200, page.text
    # The token of the sign-out form itself: the page's other forms carry tokens of their own purposes.
    form = re.search(r'<form[^>]*action="/__/auth/signout"[^>]*>(.*?)</form>', page.text, re.S).group(1)
    token = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    csrf_cookie = re.search(r"__Host-gh_csrf=([^;]+)", page.headers["Set-Cookie"]).group(1)
    return g.post("/__/auth/signout", data={"csrf": token},
                  headers={"Cookie": f"{COOKIE}={cookie}; __Host-gh_csrf={csrf_cookie}", "Origin": g.base})
