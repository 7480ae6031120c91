#!/usr/bin/env python3
"""Make an RS256 JWT for testing and benchmarking fcgi-baseline.

Usage: python3 mkjwt.py DIR [--sub UID] [--ttl SECONDS]

Creates DIR/private.pem (PKCS#8) and DIR/public.pem (SubjectPublicKeyInfo,
the file to give the baseline as BASELINE_PUBKEY) with a new RSA-2048 key
pair if they do not exist yet, then prints a token signed with the private
key whose claims are {"sub": UID, "iat": now, "exp": now + SECONDS}.
A negative --ttl gives an already expired token.
"""

import argparse
import base64
import json
import os
import sys
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def load_or_create_key(directory: str):
    priv_path = os.path.join(directory, "private.pem")
    pub_path = os.path.join(directory, "public.pem")
    if os.path.exists(priv_path):
        with open(priv_path, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            sys.exit(f"{priv_path}: not an RSA private key")
    else:
        os.makedirs(directory, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        fd = os.open(priv_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
    if not os.path.exists(pub_path):
        with open(pub_path, "wb") as f:
            f.write(key.public_key().public_bytes(
                serialization.Encoding.PEM,
                serialization.PublicFormat.SubjectPublicKeyInfo,
            ))
    return key


def make_token(key, sub: str, ttl: int) -> str:
    now = int(time.time())
    header = {"alg": "RS256", "typ": "JWT"}
    claims = {"sub": sub, "iat": now, "exp": now + ttl}
    compact = lambda o: json.dumps(o, separators=(",", ":")).encode()
    signing_input = b64url(compact(header)) + "." + b64url(compact(claims))
    sig = key.sign(signing_input.encode("ascii"), padding.PKCS1v15(),
                   hashes.SHA256())
    return signing_input + "." + b64url(sig)


def main() -> None:
    ap = argparse.ArgumentParser(
        description="Create a key pair in DIR if needed and print an RS256 JWT.")
    ap.add_argument("dir", metavar="DIR",
                    help="directory for private.pem / public.pem")
    ap.add_argument("--sub", default="bench-user-0001",
                    help="subject (user id) claim (default: %(default)s)")
    ap.add_argument("--ttl", type=int, default=3600,
                    help="lifetime in seconds, negative for an expired "
                         "token (default: %(default)s)")
    args = ap.parse_args()
    key = load_or_create_key(args.dir)
    print(make_token(key, args.sub, args.ttl))


if __name__ == "__main__":
    main()
