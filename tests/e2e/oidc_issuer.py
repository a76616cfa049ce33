"""A local OpenID Connect issuer for the trusted-publishing tests: no internet, real HTTPS.

It makes a CA and a server certificate with the openssl command (fake_github.make_certificates),
RSA and P-256 signing keys with python3-cryptography, and serves over HTTPS on loopback:

  GET /.well-known/openid-configuration   {"issuer": URL, "jwks_uri": URL + "/.well-known/jwks"}
  GET /.well-known/jwks                   the public keys {"keys": [...]}
  GET /actions/token?audience=AUD         a stand-in for GitHub's ACTIONS_ID_TOKEN_REQUEST_URL: with
                                          "Authorization: bearer <request token>", {"value": <JWT>}
                                          signed for AUD, with GitHub's claims for `workflow`

Its issuer URL is https://127.0.0.1:PORT. `down = True` answers every request with a reset;
`requests` lists the paths asked for. Tokens are signed with PyJWT (python3-jwt); the hostile
ones PyJWT will not make (alg none, HS256 with the public key) are written by hand.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import os
import pathlib
import secrets
import socket
import ssl
import struct
import threading
import time
import urllib.parse

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from fake_github import Server, make_certificates


def b64url(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class SigningKey:
    """A key pair, its kid, and its public half as a JWK."""

    def __init__(self, kid: str, kind: str = "RS256"):
        self.kid = kid
        self.algorithm = kind
        if kind == "RS256":
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            self.private = ec.generate_private_key(ec.SECP256R1())

    def jwk(self) -> dict:
        numbers = self.private.public_key().public_numbers()
        if self.algorithm == "RS256":
            n = numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")
            return {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256", "n": b64url(n), "e": b64url(b"\x01\x00\x01")}
        return {"kty": "EC", "kid": self.kid, "use": "sig", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")),
                "y": b64url(numbers.y.to_bytes(32, "big"))}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(serialization.Encoding.PEM,
                                                      serialization.PublicFormat.SubjectPublicKeyInfo)


class Workflow:
    """What a GitHub Actions run is: the claims its identity tokens carry."""

    def __init__(self, repository: str = "Dao-AILab/flash-attention", owner_id: str = "77001",
                 workflow: str = "release.yml", ref: str = "refs/tags/v2.8.3", environment: str | None = None):
        self.repository = repository
        self.owner_id = owner_id
        self.workflow = workflow
        self.ref = ref
        self.environment = environment

    def claims(self) -> dict:
        owner = self.repository.split("/")[0]
        claims = {
            "sub": f"repo:{self.repository}:ref:{self.ref}", "repository": self.repository, "repository_owner": owner,
            "repository_owner_id": self.owner_id, "repository_id": "90210",
            "job_workflow_ref": f"{self.repository}/.github/workflows/{self.workflow}@{self.ref}",
            "workflow_ref": f"{self.repository}/.github/workflows/{self.workflow}@{self.ref}",
            "ref": self.ref, "sha": "4f1e0c2b9d8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e", "event_name": "push",
            "run_id": str(secrets.randbelow(10**9)), "run_attempt": "1", "actor": "tridao",
            "runner_environment": "github-hosted",
        }
        if self.environment:
            claims["environment"] = self.environment
        return claims


class OidcIssuer:
    def __init__(self, directory: pathlib.Path, name: str = "issuer"):
        directory.mkdir(parents=True, exist_ok=True)
        self.ca, certificate, key = make_certificates(directory)
        self.keys = [SigningKey(f"{name}-rsa-1"), SigningKey(f"{name}-ec-1", "ES256")]
        self.request_token = secrets.token_urlsafe(24)
        self.workflow = Workflow()
        self.down = False
        self.requests: list[str] = []
        self.lock = threading.Lock()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(certificate, key)
        self.server = Server(("127.0.0.1", 0), self._handler())
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True, do_handshake_on_connect=False)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"

    # ---- tokens -------------------------------------------------------------------------------

    def claims(self, audience: str, **overrides) -> dict:
        now = int(time.time())
        claims = {"iss": self.url, "aud": audience, "iat": now, "nbf": now, "exp": now + 300,
                  "jti": secrets.token_hex(16), **self.workflow.claims()}
        for name, value in overrides.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        return claims

    def token(self, audience: str, key: SigningKey | None = None, headers: dict | None = None, **overrides) -> str:
        """A token for `audience` signed by `key` (the issuer's RSA key), claims overridden by keyword
        (None removes one)."""
        key = key or self.keys[0]
        return jwt.encode(self.claims(audience, **overrides), key.private, algorithm=key.algorithm,
                          headers={"kid": key.kid, **(headers or {})})

    def unsigned_token(self, audience: str) -> str:
        return b64url(json.dumps({"alg": "none", "kid": self.keys[0].kid})) + "." + b64url(json.dumps(self.claims(audience))) + "."

    def hmac_with_public_key(self, audience: str) -> str:
        """HS256 keyed with the RSA key's public PEM: what a verifier that takes alg from the header accepts."""
        signing_input = b64url(json.dumps({"alg": "HS256", "kid": self.keys[0].kid, "typ": "JWT"})) + "." + \
            b64url(json.dumps(self.claims(audience)))
        mac = hmac.new(self.keys[0].public_pem(), signing_input.encode(), hashlib.sha256).digest()
        return signing_input + "." + b64url(mac)

    def ci_environment(self) -> dict[str, str]:
        """What GitHub Actions gives a job with `permissions: id-token: write`."""
        return {"GITHUB_ACTIONS": "true", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": self.request_token,
                "ACTIONS_ID_TOKEN_REQUEST_URL": self.url + "/actions/token?api-version=2.0"}

    def served(self, path_prefix: str) -> int:
        with self.lock:
            return sum(1 for path in self.requests if path.startswith(path_prefix))

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---- HTTPS --------------------------------------------------------------------------------

    def _handler(self):
        issuer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args) -> None:  # noqa: A002
                pass

            def answer(self, status: int, value) -> None:
                body = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def reset(self) -> None:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                os.close(self.connection.detach())
                self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802
                with issuer.lock:
                    issuer.requests.append(self.path)
                if issuer.down:
                    return self.reset()
                path, _, query = self.path.partition("?")
                if path == "/.well-known/openid-configuration":
                    return self.answer(200, {"issuer": issuer.url, "jwks_uri": issuer.url + "/.well-known/jwks",
                                             "id_token_signing_alg_values_supported": ["RS256", "ES256"]})
                if path == "/.well-known/jwks":
                    return self.answer(200, {"keys": [key.jwk() for key in issuer.keys]})
                if path == "/actions/token":
                    scheme, _, presented = self.headers.get("Authorization", "").partition(" ")
                    if scheme.lower() != "bearer" or presented != issuer.request_token:
                        return self.answer(401, {"message": "bad request token"})
                    # The `id` package (the PyPA action's) appends "?audience=" even to a URL with a
                    # query, as urllib3 does; uv appends "&audience=". GitHub takes both.
                    pairs = [pair.partition("=") for pair in query.replace("?", "&").split("&")]
                    audience = [urllib.parse.unquote_plus(value) for key, _, value in pairs if key == "audience"][-1:]
                    if not audience:
                        return self.answer(400, {"message": "no audience"})
                    audience = audience[0]
                    return self.answer(200, {"count": 1, "value": issuer.token(audience)})
                return self.answer(404, {"message": "not found"})

        return Handler
