"""The trusted-publishing exchange as the clients CI runs perform it, step for step, so the tests
drive the index the way they do:

  pypa_action   pypa/gh-action-pypi-publish's oidc-exchange.py: the audience and mint-token URLs
                from the repository URL's netloc, the identity token as the `id` package asks
                GitHub for it (urllib3: "?audience=" appended, "bearer" scheme), the token POSTed as
                JSON, and on refusal each error printed as "* `code`: description"
  uv_publish    uv's trusted_publishing.rs (PyPI service): the same URLs from the authority,
                "&audience=" appended, and the body sent as bytes without a Content-Type
  pep807        PEP 807 discovery: /.well-known/pytp?discover=<quote_plus(upload path)>

The clients themselves insist on https://; `scheme` is http only until the index serves TLS.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass

import requests


@dataclass
class Exchange:
    status: int
    payload: dict | None
    token: str | None
    refusal: str  # the action's rendering of the errors, or the reason the client gave up
    retry_after: str | None = None


def ci_identity_token(ci_env: dict[str, str], audience: str, issuer_ca, separator: str) -> str:
    url = ci_env["ACTIONS_ID_TOKEN_REQUEST_URL"] + separator + urllib.parse.urlencode({"audience": audience})
    response = requests.get(url, headers={"Authorization": f"bearer {ci_env['ACTIONS_ID_TOKEN_REQUEST_TOKEN']}"},
                            verify=str(issuer_ca), timeout=30)
    response.raise_for_status()
    value = response.json()["value"]
    assert isinstance(value, str)
    return value


def _finish(response: requests.Response) -> Exchange:
    try:
        payload = response.json()
    except ValueError:
        return Exchange(response.status_code, None, None, f"unexpected {response.status_code} response")
    if not response.ok:
        reasons = "\n".join(f"* `{error['code']}`: {error['description']}" for error in payload["errors"])
        return Exchange(response.status_code, payload, None, reasons, response.headers.get("Retry-After"))
    return Exchange(response.status_code, payload, payload.get("token"), "")


def pypa_action(repository_url: str, ci_env: dict[str, str], issuer_ca, scheme: str = "https",
                index_ca=None, identity_token: str | None = None) -> Exchange:
    """oidc-exchange.py; `identity_token` replaces the one GitHub would give (hostile tests)."""
    netloc = urllib.parse.urlparse(repository_url).netloc
    verify = str(index_ca) if index_ca else True
    audience = requests.get(f"{scheme}://{netloc}/_/oidc/audience", verify=verify, timeout=30)
    if not audience.ok:
        return Exchange(audience.status_code, None, None, f"audience retrieval failed: {audience.status_code}")
    token = identity_token or ci_identity_token(ci_env, audience.json()["audience"], issuer_ca, "?")
    return _finish(requests.post(f"{scheme}://{netloc}/_/oidc/mint-token", json={"token": token}, verify=verify,
                                 timeout=60))


def uv_publish(publish_url: str, ci_env: dict[str, str], issuer_ca, scheme: str = "https", index_ca=None) -> Exchange:
    authority = urllib.parse.urlparse(publish_url).netloc
    verify = str(index_ca) if index_ca else True
    audience = requests.get(f"{scheme}://{authority}/_/oidc/audience", verify=verify, timeout=30)
    audience.raise_for_status()
    token = ci_identity_token(ci_env, audience.json()["audience"], issuer_ca, "&")
    body = json.dumps({"token": token}).encode()
    return _finish(requests.post(f"{scheme}://{authority}/_/oidc/mint-token", data=body, verify=verify, timeout=60))


def pep807(upload_url: str, index_ca=None) -> requests.Response:
    parts = urllib.parse.urlparse(upload_url)
    key = urllib.parse.quote_plus(parts.path)
    return requests.get(f"{parts.scheme}://{parts.netloc}/.well-known/pytp?discover={key}",
                        headers={"Accept": "application/vnd.pypi.pytp.v1+json"},
                        verify=str(index_ca) if index_ca else True, timeout=30)
