#!/usr/bin/env python3
"""Lays out the unmodified Firebase JS SDK (firebase 11.10.0 with @firebase/auth 1.10.8, the browser
ES module builds) for the browser tests: ES modules under .build-sdk/firebase/ and an import map.

The tests need the real SDK, not a copy of its wire calls. npm is not reachable from the machines
this project runs on, PyPI is: the pinned wheel below ships a bundle whose source map carries, in
`sourcesContent`, the npm packages' files byte for byte. This script downloads that wheel
(`pip download --no-deps`), checks its sha256, takes the files out of the source map, checks each
one's sha256, and writes them where their npm paths say, plus what the bundle does not carry:
  @firebase/auth/dist/esm2017/index.js   the package's browser entry, written here from the
                                         export list of the chunk it re-exports;
  firebase/auth/dist/esm/index.esm.js    `firebase/auth`: a re-export of @firebase/auth;
  importmap.json                         bare names → files, relative to the folder.
A page that sits beside the folder uses the map with each address prefixed by the folder's name
(Tests/integration/sdk_support.py does that).

Idempotent: when every file is there with the expected content it only checks and says so (no
download). Usage: scripts/firebase-js-sdk.py [--dest DIR] [--check]; --check changes nothing and
exits 1 when the layout is missing or differs.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".build-sdk"

WHEEL_REQUIREMENT = "comfyui-frontend-package==1.58.1"
WHEEL_FILE = "comfyui_frontend_package-1.58.1-py3-none-any.whl"
WHEEL_SHA256 = "37912597537a731a8f421179618a736c24184c5bdbfa327f38b2fb7c291852d9"
SOURCE_MAP = "comfyui_frontend_package/static/assets/vendor-firebase-CaSUXJ77.js.map"

# (pnpm folder of the package in the map's `sources`, path inside node_modules, sha256 of the text)
FILES = [
    ("@firebase+auth@1.10.8", "@firebase/auth/dist/esm2017/index-35c79a8a.js",
     "9c99425fb07fdd955694ffed4e0891873a6fa2efbca2ba837b1a0667ddcbc46f"),
    ("@firebase+app@0.13.2", "@firebase/app/dist/esm/index.esm2017.js",
     "b0e5951990ef744fa7b732bbce9accc334cbf99851eefb0dc60566403bdbe332"),
    ("@firebase+util@1.12.1", "@firebase/util/dist/index.esm2017.js",
     "271f9f9756f062293a82998fa4c896b110c1666a3005c4584ca60d20ebdd7cdf"),
    ("@firebase+util@1.12.1", "@firebase/util/dist/postinstall.mjs",
     "56e40adf04426e6b07df5d1ca7d4142a5b2c91ea9df5800589e357f9a2433252"),
    ("@firebase+component@0.6.18", "@firebase/component/dist/esm/index.esm2017.js",
     "218378a1c6fb395699cacd726a30a806bd7c91551d6f3e14bc435340276a10dc"),
    ("@firebase+logger@0.4.4", "@firebase/logger/dist/esm/index.esm2017.js",
     "b724c9f427c99e9d72af9d957cd5b2f8d72246505a8cb7fe1b9201395841bcc6"),
    ("firebase@11.10.0", "firebase/app/dist/esm/index.esm.js",
     "ea7344909f2cceb76fd767257d25ac4fcd3fa3a44c8f83cc204c4964cc010d3f"),
    ("idb@7.1.1", "idb/build/index.js",
     "5550d5cad84dcf5a27a95e18a2147f74aaca9e71f03e08b42a813865bcac939e"),
    ("idb@7.1.1", "idb/build/wrap-idb-value.js",
     "242ebd613b0184fed073ea2c108fa0a809eb09b97c6078edd61fe80e37338d5d"),
    ("tslib@2.8.1", "tslib/tslib.es6.mjs",
     "0929993220938091ede542d688b0fdb87dad99a7e77678e1983c32d18a503339"),
]

AUTH_CHUNK = "@firebase/auth/dist/esm2017/index-35c79a8a.js"
AUTH_ENTRY = "@firebase/auth/dist/esm2017/index.js"
FIREBASE_AUTH_ENTRY = "firebase/auth/dist/esm/index.esm.js"
IMPORT_MAP = "importmap.json"

IMPORTS = {
    "firebase/app": "firebase/app/dist/esm/index.esm.js",
    "firebase/auth": FIREBASE_AUTH_ENTRY,
    "@firebase/app": "@firebase/app/dist/esm/index.esm2017.js",
    "@firebase/auth": AUTH_ENTRY,
    "@firebase/util": "@firebase/util/dist/index.esm2017.js",
    "@firebase/component": "@firebase/component/dist/esm/index.esm2017.js",
    "@firebase/logger": "@firebase/logger/dist/esm/index.esm2017.js",
    "idb": "idb/build/index.js",
    "tslib": "tslib/tslib.es6.mjs",
}

# Names the chunk exports for the package's other entries (@firebase/auth/internal, the Cordova and
# React Native builds), not for the browser entry: underscore names and these.
INTERNAL = {"debugAssert", "AuthEventManager", "UserImpl", "AuthImpl", "AuthPopup", "FetchProvider",
            "SAMLAuthCredential"}
# What the tests and the notes rely on; the entry is refused if the chunk lacks any of them.
REQUIRED = {"getAuth", "initializeAuth", "connectAuthEmulator", "RecaptchaVerifier", "signInWithPhoneNumber",
            "linkWithPhoneNumber", "PhoneAuthProvider", "PhoneMultiFactorGenerator", "TotpMultiFactorGenerator",
            "TotpSecret", "multiFactor", "getMultiFactorResolver", "sendSignInLinkToEmail", "signInWithEmailLink",
            "isSignInWithEmailLink", "EmailAuthProvider", "linkWithCredential", "signInAnonymously", "getIdToken",
            "onAuthStateChanged", "signOut", "browserLocalPersistence", "indexedDBLocalPersistence"}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str | None:
    try:
        return sha256(path.read_bytes())
    except FileNotFoundError:
        return None


def write(path: Path, data: bytes):
    """Atomically: a reader never sees half a module."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def auth_entry(chunk: str) -> str:
    """@firebase/auth's browser entry: the chunk's public exports under their own names."""
    found = re.search(r"\nexport \{([^}]*)\};\n//# sourceMappingURL=[^\n]*\n?$", chunk)
    if not found:
        raise SystemExit("firebase-js-sdk: the auth chunk has no final export list")
    pairs = []
    for item in found.group(1).split(","):
        local, _, alias = (part.strip() for part in item.strip().partition(" as "))
        if not re.fullmatch(r"[A-Za-z_$][\w$]*", local) or not re.fullmatch(r"[A-Za-z_$][\w$]*", alias):
            raise SystemExit(f"firebase-js-sdk: unexpected export {item.strip()!r} in the auth chunk")
        pairs.append((local, alias))
    public = sorted((name, alias) for name, alias in pairs if not name.startswith("_") and name not in INTERNAL)
    missing = REQUIRED - {name for name, _ in public}
    if missing:
        raise SystemExit(f"firebase-js-sdk: the auth chunk lacks {sorted(missing)}")
    chunk_name = Path(AUTH_CHUNK).name
    lines = [f"// @firebase/auth 1.10.8, browser entry: the public API of ./{chunk_name} (which registers",
             "// the Auth component for the browser when it loads). Written by scripts/firebase-js-sdk.py.",
             "export {"]
    lines += [f"    {alias} as {name}," for name, alias in public]
    lines += [f"}} from './{chunk_name}';", ""]
    return "\n".join(lines)


def generated(chunk: str) -> dict[str, bytes]:
    import_map = {"imports": {name: "./" + path for name, path in IMPORTS.items()}}
    return {
        AUTH_ENTRY: auth_entry(chunk).encode(),
        FIREBASE_AUTH_ENTRY: b"// firebase 11.10.0, `firebase/auth`: the modular Auth API.\nexport * from '@firebase/auth';\n",
        IMPORT_MAP: (json.dumps(import_map, indent=2) + "\n").encode(),
    }


def layout_ok(dest: Path) -> bool:
    if any(file_sha256(dest / path) != digest for _, path, digest in FILES):
        return False
    chunk = (dest / AUTH_CHUNK).read_text(encoding="utf-8")
    return all((dest / path).is_file() and (dest / path).read_bytes() == data for path, data in generated(chunk).items())


def wheel() -> Path:
    """The pinned wheel in the cache, downloaded if absent or not the expected bytes."""
    path = CACHE / "wheel" / WHEEL_FILE
    if file_sha256(path) != WHEEL_SHA256:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        print(f"firebase-js-sdk: downloading {WHEEL_REQUIREMENT} (pip download --no-deps)")
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                        "--disable-pip-version-check", "--dest", str(path.parent), WHEEL_REQUIREMENT], check=True)
        got = file_sha256(path)
        if got != WHEEL_SHA256:
            path.unlink(missing_ok=True)
            raise SystemExit(f"firebase-js-sdk: {WHEEL_FILE} has sha256 {got}, expected {WHEEL_SHA256}")
    return path


def extract(dest: Path):
    with zipfile.ZipFile(wheel()) as z:
        source_map = json.loads(z.read(SOURCE_MAP))
    sources = dict(zip(source_map["sources"], source_map["sourcesContent"]))
    for package, path, digest in FILES:
        suffix = "/node_modules/" + path
        folder = re.compile(r"/\.pnpm/" + re.escape(package) + r"[/_]")
        hits = [text for name, text in sources.items() if name.endswith(suffix) and folder.search(name)]
        if len(hits) != 1 or hits[0] is None:
            raise SystemExit(f"firebase-js-sdk: {package} {path}: {len(hits)} entries in the source map")
        data = hits[0].encode("utf-8")
        if sha256(data) != digest:
            raise SystemExit(f"firebase-js-sdk: {path} has sha256 {sha256(data)}, expected {digest}")
        if file_sha256(dest / path) != digest:
            write(dest / path, data)
    chunk = (dest / AUTH_CHUNK).read_text(encoding="utf-8")
    for path, data in generated(chunk).items():
        if not (dest / path).is_file() or (dest / path).read_bytes() != data:
            write(dest / path, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=CACHE / "firebase", help="output folder (default .build-sdk/firebase)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 unless the layout is complete")
    args = parser.parse_args()
    dest = args.dest.resolve()
    if layout_ok(dest):
        print(f"firebase-js-sdk: {dest} is complete (sha256 checked)")
        return
    if args.check:
        print(f"firebase-js-sdk: {dest} is missing or differs; run scripts/firebase-js-sdk.py", file=sys.stderr)
        sys.exit(1)
    extract(dest)
    if not layout_ok(dest):
        raise SystemExit(f"firebase-js-sdk: {dest} still differs after writing it")
    print(f"firebase-js-sdk: wrote {dest} ({len(FILES)} npm files, 2 entries, {IMPORT_MAP})")


if __name__ == "__main__":
    main()
