"""Attestations Sigstore's public-good instance signed for a real release (tests/data/attest/),
uploaded through a trusted publisher whose identity tokens come from GitHub Actions' issuer (its
keys pinned with --oidc-jwks, the tokens signed here), and verified against the trust root
sigstore-python ships: the index accepts what pypi-attestations accepts, and then serves the very
provenance PyPI serves for that file."""

import json
import pathlib
import subprocess

import pytest
import requests

from oidc_issuer import OidcIssuer, Workflow
from server_process import ServerProcess
from test_attestations import INTEGRITY_JSON, SIMPLE_JSON, upload

ASSETS = pathlib.Path(__file__).resolve().parents[1] / "data" / "attest"
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
DIST = ASSETS / "pypi_attestations-0.0.19.tar.gz"
# What the release's signing certificate names: the workflow that made it on PyPI.
RELEASE = Workflow(repository="trailofbits/pypi-attestations", owner_id="2314423", workflow="release.yml",
                   ref="refs/tags/v0.0.19")


def attestation(kind: str) -> dict:
    return json.loads((ASSETS / f"{DIST.name}.{kind}.attestation").read_text())


@pytest.fixture
def real_index(tmp_path, wheelhouse_bin):
    folder = tmp_path
    issuer = OidcIssuer(folder / "issuer")  # its keys sign tokens in GitHub's name
    keys = folder / "github-jwks.json"
    keys.write_text(json.dumps({"keys": [key.jwk() for key in issuer.keys]}))
    data = folder / "data"
    data.mkdir()
    server = ServerProcess(data, "--oidc-jwks", f"{GITHUB_ISSUER}={keys}", "--sigstore-trust-root",
                           str(ASSETS / "sigstore_trusted_root.json")).start()
    added = subprocess.run([str(wheelhouse_bin), "publisher", "add", "--data", str(data), "--project",
                            "pypi-attestations", "--repository", RELEASE.repository, "--owner-id", RELEASE.owner_id,
                            "--workflow", RELEASE.workflow], capture_output=True, text=True, timeout=30)
    assert added.returncode == 0, added.stderr
    server.issuer = issuer
    try:
        yield server
    finally:
        issuer.stop()
        assert server.stop() == 0, server.stderr()


def mint(index, workflow: Workflow) -> requests.Response:
    audience = requests.get(index.url + "_/oidc/audience", timeout=30).json()["audience"]
    index.issuer.workflow = workflow
    token = index.issuer.token(audience, iss=GITHUB_ISSUER)
    return requests.post(index.url + "_/oidc/mint-token", json={"token": token}, timeout=30)


def test_a_real_release_and_its_attestations_are_served_as_pypi_serves_them(real_index):
    minted = mint(real_index, RELEASE)
    assert minted.status_code == 200, minted.text
    answer = upload(real_index, minted.json()["token"], DIST, [attestation("publish")])
    assert answer.status_code == 201, answer.text

    page = requests.get(real_index.url + "simple/pypi-attestations/", headers={"Accept": SIMPLE_JSON}, timeout=30)
    (entry,) = page.json()["files"]
    assert entry["provenance"].endswith(f"/integrity/pypi-attestations/0.0.19/{DIST.name}/provenance")
    served = requests.get(requests.compat.urljoin(page.url, entry["provenance"]), timeout=30)
    assert served.status_code == 200 and served.headers["Content-Type"] == INTEGRITY_JSON
    assert served.json() == json.loads((ASSETS / f"{DIST.name}.provenance").read_text())


def test_another_workflow_of_the_same_repository_cannot_bring_the_releases_attestations(real_index):
    # The index trusts the release workflow only; a token of another publisher of the same
    # repository and project would be another row. Here the identity matches none: refused at
    # the exchange, so the release's attestations cannot be replayed with it.
    other = Workflow(repository=RELEASE.repository, owner_id=RELEASE.owner_id, workflow="tests.yml",
                     ref=RELEASE.ref)
    assert mint(real_index, other).status_code in (400, 403, 422)


def test_the_slsa_attestation_githubs_attest_action_made_is_kept_beside_it(real_index):
    minted = mint(real_index, RELEASE)
    both = [attestation("publish"), attestation("slsa")]
    answer = upload(real_index, minted.json()["token"], DIST, both)
    assert answer.status_code == 201, answer.text
    served = requests.get(f"{real_index.url}integrity/pypi-attestations/0.0.19/{DIST.name}/provenance", timeout=30)
    (bundle,) = served.json()["attestation_bundles"]
    assert bundle["attestations"] == both
    assert bundle["publisher"] == {"kind": "GitHub", "repository": RELEASE.repository, "workflow": "release.yml",
                                   "environment": None}
