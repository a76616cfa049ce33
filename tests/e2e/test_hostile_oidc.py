"""What an attacker sends to the trusted-publishing exchange: tokens for another audience, out of
time, unsigned or HMAC'd with the public key, signed by a key the issuer does not publish or by
another issuer, replayed, from another repository, a renamed owner, another workflow or
environment; and an issuer that goes down. Each is refused 422 with PyPI's error shape and a
reason that names what is wrong, and nothing is minted."""

from __future__ import annotations

import time

import pytest
import requests

from oidc_issuer import OidcIssuer, SigningKey, Workflow
from publishing_clients import pypa_action
from trusted_publishing import index, issuer, fresh_issuer  # noqa: F401


def exchange(index, token: str):
    return pypa_action(index.url + "legacy/", {}, index.issuer.ca, scheme=index.scheme, identity_token=token)


def assert_refused(index, exchanged, code: str, reason: str) -> None:
    assert exchanged.status == 422, (exchanged.status, exchanged.refusal)
    assert exchanged.payload["message"] == "Token request failed"
    [error] = exchanged.payload["errors"]
    assert error["code"] == code, error
    assert reason in error["description"], error["description"]
    assert exchanged.payload["status"] == 422 and exchanged.payload["detail"] == error["description"]
    assert index.minted_tokens() == [] and index.audit("mint_token") == []


@pytest.fixture(scope="module")
def other_issuer(tmp_path_factory):
    running = OidcIssuer(tmp_path_factory.mktemp("other-issuer"), name="other")
    yield running
    running.stop()


def forge(index, case: str, other_issuer) -> str:
    issuer = index.issuer
    now = int(time.time())
    stranger = SigningKey(issuer.keys[0].kid)  # the issuer's kid on a key it never published
    return {
        "another audience": lambda: issuer.token("pypi"),
        "several audiences": lambda: issuer.token("wheelhouse", aud=["wheelhouse", "pypi"]),
        "expired": lambda: issuer.token("wheelhouse", iat=now - 900, nbf=now - 900, exp=now - 600),
        "not yet valid": lambda: issuer.token("wheelhouse", nbf=now + 600, exp=now + 900),
        "issued in the future": lambda: issuer.token("wheelhouse", iat=now + 600, exp=now + 900),
        "no jti": lambda: issuer.token("wheelhouse", jti=None),
        "alg none": lambda: issuer.unsigned_token("wheelhouse"),
        "HS256 keyed with the public key": lambda: issuer.hmac_with_public_key("wheelhouse"),
        "unknown kid": lambda: issuer.token("wheelhouse", key=SigningKey("rotated-away")),
        "another key under the issuer's kid": lambda: issuer.token("wheelhouse", key=stranger),
        "another issuer's key": lambda: issuer.token("wheelhouse", key=other_issuer.keys[0]),
        "another issuer": lambda: other_issuer.token("wheelhouse"),
        "a cloud metadata issuer": lambda: issuer.token("wheelhouse", iss="https://169.254.169.254/latest"),
    }[case]()


@pytest.mark.parametrize("case, code, reason", [
    ("another audience", "invalid-token", "is for the audience 'pypi', not this index's 'wheelhouse'"),
    ("several audiences", "invalid-token", "names 2 audiences"),
    ("expired", "invalid-token", "s ago; request a new one just before the exchange"),
    ("not yet valid", "invalid-token", "is not valid for another"),
    ("issued in the future", "invalid-token", "s in the future"),
    ("no jti", "invalid-token", "no token id"),
    ("alg none", "invalid-token", "is signed with 'none'"),
    ("HS256 keyed with the public key", "invalid-token", "is signed with 'HS256'"),
    ("unknown kid", "invalid-token", "names the key 'rotated-away', which the issuer"),
    ("another key under the issuer's kid", "invalid-token", "does not verify with the issuer's key 'issuer-rsa-1'"),
    ("another issuer's key", "invalid-token", "names the key 'other-rsa-1', which the issuer"),
    ("another issuer", "invalid-publisher", "no trusted publisher of this index uses the issuer"),
    ("a cloud metadata issuer", "invalid-publisher", "uses the issuer 'https://169.254.169.254/latest'"),
])
def test_forged_and_misdirected_tokens_are_refused(index, other_issuer, case, code, reason):
    index.publisher("flash-attn")
    assert_refused(index, exchange(index, forge(index, case, other_issuer)), code, reason)


@pytest.mark.parametrize("workflow, publisher_flags, reason", [
    (Workflow(repository="attacker/flash-attention"), (), "names the repository 'attacker/flash-attention'"),
    (Workflow(owner_id="66666"), (), "repository_owner_id is '66666', but the trusted publisher expects '77001'"),
    (Workflow(workflow="pr-build.yml"), (), "another workflow file (or a reusable one) ran"),
    (Workflow(environment="staging"), ("--environment", "pypi"), "environment is 'staging'"),
    (Workflow(), ("--environment", "pypi"), "the token names none"),
])
def test_tokens_of_other_workflows_are_refused(index, workflow, publisher_flags, reason):
    index.publisher("flash-attn", *publisher_flags)
    index.issuer.workflow = workflow
    exchanged = pypa_action(index.url + "legacy/", index.issuer.ci_environment(), index.issuer.ca, scheme=index.scheme)
    assert_refused(index, exchanged, "invalid-publisher", reason)
    # The action prints each error as "* `code`: description".
    assert exchanged.refusal.startswith("* `invalid-publisher`: valid token, but no trusted publisher")


def test_a_token_is_exchanged_once(index):
    index.publisher("flash-attn")
    token = index.issuer.token("wheelhouse")
    assert exchange(index, token).status == 200
    replayed = exchange(index, token)
    assert replayed.status == 422
    assert replayed.payload["errors"][0]["code"] == "invalid-reuse-token"
    assert "exchanged before" in replayed.payload["errors"][0]["description"]
    assert len(index.minted_tokens()) == 1


@pytest.mark.parametrize("body, reason", [
    (b"", "the body must be a JSON object"),
    (b"not json", "the body must be a JSON object"),
    (b'{"token": 5}', 'no "token" string'),
    (b'{"token": "a", "token": "b"}', "appears twice"),
    (b'{"token": "abc", "features": ["single-use-token"]}', "only multi-use tokens"),
    (b'{"token": "abc"}', "not a JSON Web Token"),
    (b'{"token": "' + b"a" * 20000 + b'"}', "at most 16384"),
])
def test_malformed_requests_are_refused_with_what_to_send(index, body, reason):
    answer = requests.post(index.url + "_/oidc/mint-token", data=body, timeout=10)
    assert answer.status_code == 422, answer.text
    assert answer.headers["Content-Type"] == "application/problem+json"
    error = answer.json()["errors"][0]
    assert reason in error["description"]
    assert error["code"] in ("invalid-payload", "invalid-token")


def test_a_body_past_the_limit_is_refused_before_it_is_read(index):
    answer = requests.post(index.url + "_/oidc/mint-token", data=b"{" + b" " * (70 * 1024) + b"}", timeout=10)
    assert answer.status_code == 413
    assert "larger than this server's limit of 65536 bytes" in answer.text


def test_the_issuer_down_with_keys_cached_still_mints(index):
    index.publisher("flash-attn")
    assert exchange(index, index.issuer.token("wheelhouse")).status == 200
    index.issuer.down = True
    again = exchange(index, index.issuer.token("wheelhouse"))
    assert again.status == 200, again.refusal
    assert len(index.minted_tokens()) == 2


def test_the_issuer_down_with_no_key_cached_is_503_with_retry_after(index):
    index.publisher("flash-attn")
    index.issuer.down = True
    refused = exchange(index, index.issuer.token("wheelhouse"))
    assert refused.status == 503, refused.refusal
    assert refused.payload["errors"][0]["code"] == "unavailable"
    assert "cannot be fetched now" in refused.payload["errors"][0]["description"]
    assert 1 <= int(refused.retry_after) <= 60
    assert index.minted_tokens() == []
    # Back up: within the minute the index does not ask again, then it does.
    index.issuer.down = False
    assert exchange(index, index.issuer.token("wheelhouse")).status == 503


def test_made_up_key_ids_cost_the_issuer_one_fetch_a_minute(index):
    index.publisher("flash-attn")
    fetched = index.issuer.served("/.well-known/jwks")
    for number in range(20):
        refused = exchange(index, index.issuer.token("wheelhouse", key=SigningKey(f"made-up-{number}", "ES256")))
        assert refused.status == 422
        assert "names the key 'made-up-" in refused.payload["errors"][0]["description"]
    # The first fetched the issuer's keys (none were known); the other nineteen asked nothing.
    assert index.issuer.served("/.well-known/jwks") - fetched == 1
    assert exchange(index, index.issuer.token("wheelhouse")).status == 200


def test_a_silent_issuer_holds_no_upload(tmp_path, wheelhouse_bin, start_server, fresh_issuer):
    """An issuer that accepts connections and never answers: the exchanges that wait for its keys
    fill their own lane (two threads, two waiting, the rest 503 at once), and uploads, on one write
    worker, go on at their pace."""
    import socket
    import subprocess
    import threading

    from test_uploads import curl, make_token
    from trusted_publishing import index_arguments
    from wheelbuilder import build_wheel

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    silent = f"https://127.0.0.1:{listener.getsockname()[1]}"
    data = tmp_path / "data"
    data.mkdir()
    upload_token = make_token(wheelhouse_bin, data, "ci")
    subprocess.run([str(wheelhouse_bin), "publisher", "add", "--data", str(data), "--project", "flash-attn",
                    "--issuer", silent, "--repository", "Dao-AILab/flash-attention", "--owner-id", "77001",
                    "--workflow", "release.yml"], check=True, capture_output=True, timeout=30)
    server = start_server(data, "--ingest-workers", "1", "--outbound-workers", "2", "--outbound-queue", "2",
                          "--remote-connect-timeout", "4", *index_arguments("http", fresh_issuer))
    answers: list[requests.Response] = []

    def mint() -> None:
        token = fresh_issuer.token("wheelhouse", iss=silent)
        answers.append(requests.post(server.url + "_/oidc/mint-token", json={"token": token}, timeout=30))

    waiting = [threading.Thread(target=mint) for _ in range(6)]
    for thread in waiting:
        thread.start()
    time.sleep(0.5)
    for number in range(3):
        wheel = build_wheel(tmp_path / "dist", "kernels", f"1.0.{number}")
        started = time.monotonic()
        status, body = curl("-u", f"__token__:{upload_token}", "-T", str(wheel), server.url + "api/v1/files/" + wheel.name)
        assert status == 201, body
        assert time.monotonic() - started < 2.0
    for thread in waiting:
        thread.join()
    listener.close()
    assert sorted(answer.status_code for answer in answers) == [503] * 6
    descriptions = [answer.json()["errors"][0]["description"] for answer in answers]
    assert sum("busy with work waiting on other hosts" in text for text in descriptions) == 2
    assert sum("cannot be fetched now" in text for text in descriptions) >= 1


@pytest.mark.parametrize("flags, reason", [
    (("--remote-allow-private-addresses",), "certificate"),   # the system's CAs do not know the test CA
    (("--ca-bundle", "ISSUER_CA"), "loopback 127.0.0.0/8"),    # private addresses refused after DNS
])
def test_key_fetches_check_tls_and_the_address_rules(tmp_path, wheelhouse_bin, start_server, fresh_issuer, flags,
                                                     reason):
    import subprocess

    data = tmp_path / "data"
    data.mkdir()
    server = start_server(data, *(str(fresh_issuer.ca) if flag == "ISSUER_CA" else flag for flag in flags))
    subprocess.run([str(wheelhouse_bin), "publisher", "add", "--data", str(data), "--project", "flash-attn",
                    "--issuer", fresh_issuer.url, "--repository", "Dao-AILab/flash-attention", "--owner-id", "77001",
                    "--workflow", "release.yml"], check=True, capture_output=True, timeout=30)
    served = fresh_issuer.served("/")
    answer = requests.post(server.url + "_/oidc/mint-token", json={"token": fresh_issuer.token("wheelhouse")}, timeout=30)
    assert answer.status_code == 503
    assert reason in answer.json()["errors"][0]["description"]
    assert fresh_issuer.served("/") == served
