#!/usr/bin/env bash
# Installs what Gatehouse needs on Debian 12: `run` (build + run behind nginx) or `test`
# (everything the test suite uses: Chromium, chromedriver, wrk, hyperfine, pinned Python clients).
# As root it runs apt-get itself; otherwise it prints the exact command to run.
set -euo pipefail
what="${1:-run}"
cd "$(dirname "$0")/.."

# libphonenumber (libphonenumber8), libcurl (libcurl4), libpq (libpq5) and libqrencode (libqrencode4)
# are opened with dlopen on first use, by their sonames libphonenumber.so.8, libcurl.so.4, libpq.so.5
# and libqrencode.so.4; the -dev packages bring them and the headers. The tests start throw-away
# PostgreSQL clusters (package postgresql), and run CGI mode behind fcgiwrap and lighttpd (started
# by the tests themselves: Debian's packages enable services that the tests never use). The browser
# tests read the account page's QR code back from a screenshot with zbarimg (zbar-tools).
run_pkgs=(libfcgi-dev libsqlite3-dev libssl-dev libphonenumber-dev libcurl4-openssl-dev libpq-dev libqrencode-dev nginx-light)
test_pkgs=(chromium chromium-driver wrk hyperfine spawn-fcgi sqlite3 python3-pip postgresql fcgiwrap lighttpd zbar-tools)
pkgs=("${run_pkgs[@]}")
[ "$what" = test ] && pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nginx-light or any other nginx flavour with the auth_request module will do.
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
    missing=("${missing[@]/nginx-light}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))

if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "installing Debian packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "Gatehouse needs these Debian packages; run:"
        echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
        exit 1
    fi
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "Swift 6.x is required (https://www.swift.org/install/linux/); 'swift' is not on PATH." >&2
    exit 1
fi

if [ "$what" = test ]; then
    py=python3
    if ! $py -c "import selenium, firebase_admin, altcha, joserfc, jwt, aiosmtpd, pytest, pytest_timeout, requests, h2, psycopg2, pyotp, webauthn, twilio" 2>/dev/null; then
        echo "installing pinned Python test clients (Tests/integration/requirements.txt)"
        $py -m pip install -q --disable-pip-version-check -r Tests/integration/requirements.txt \
            || $py -m pip install -q --disable-pip-version-check --break-system-packages -r Tests/integration/requirements.txt
    fi
    # The unmodified Firebase JS SDK (firebase 11.10.0, @firebase/auth 1.10.8) for the browser tests,
    # as ES modules plus an import map in .build-sdk/firebase/ (sha256-checked; a no-op when done).
    $py scripts/firebase-js-sdk.py
fi
