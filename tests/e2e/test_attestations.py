"""PEP 740 attestations end to end: an index started with --sigstore-trust-root (a trusted_root.json
of tests/e2e/sigstore_stand_in.py's own Fulcio and Rekor), trusted publishers added with the CLI,
upload tokens minted through the local OIDC issuer as the PyPA action and uv mint them, then the
upload form POSTed to /legacy/ with an `attestations` field, as `twine upload --attestations`
(the field before the file) and `uv publish` (after it) send it; Debian's twine 4 cannot.

An attestation that verifies against the trusted publisher that minted the token is stored and
served (PEP 691 "provenance", HTML data-provenance, the integrity API's provenance object); any
failure is a 400 that names what failed, and nothing is stored. The exact wording is the server's
to choose, so the tests look for a loose keyword only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import itertools
import json
import pathlib
import re
import time
import urllib.parse
import uuid

import pytest
import requests

from oidc_issuer import Workflow
from publishing_clients import pypa_action
from server_process import ServerProcess
from sigstore_stand_in import (DEFAULT_SHA, PUBLISH_V1, SLSA_PROVENANCE_V1, Identity, TestSigstore,
                               b64, github, gitlab, statement_bytes)
from test_sdists import sdist_bytes
from test_uploads import make_token
import trusted_publishing
from trusted_publishing import Index, index_arguments
from wheelbuilder import build_wheel

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
INTEGRITY_JSON = "application/vnd.pypi.integrity.v1+json"
PROJECT = "flash-attn"
GITLAB_PROJECT_PATH = "ml/kernels/nunchaku"
GITLAB_NAMESPACE_ID = "4242"
# The hosts a leaf's URIs name, as the server expects them: https://github.com for a GitHub
# publisher (Fulcio writes it for every GitHub.com token; GitHub Actions' tokens name no server),
# and the GitLab instance itself (the issuer) for a GitLab one, in its source repository URI and
# build config URI alike; on gitlab.com both are https://gitlab.com.

_numbers = itertools.count(1)

# The trusted-publishing tests' fixtures (the module's local OIDC issuer), bound here so pytest finds them.
issuer = trusted_publishing.issuer
fresh_issuer = trusted_publishing.fresh_issuer


# ---- the index -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sigstore(tmp_path_factory) -> TestSigstore:
    """The module's Fulcio and Rekor; `trust_root_path` is their trusted_root.json."""
    stand_in = TestSigstore()
    stand_in.trust_root_path = stand_in.write_trust_root(tmp_path_factory.mktemp("sigstore") / "trusted_root.json")
    return stand_in


@pytest.fixture(scope="module")
def stranger() -> TestSigstore:
    """Another Sigstore with the same names (CN=sigstore, rekor.sigstore.dev) and other keys."""
    return TestSigstore()


@pytest.fixture(scope="module")
def attesting(tmp_path_factory, wheelhouse_bin, issuer, sigstore):
    """One index for the module, trusting the stand-in, with its trusted publishers:
    flash-attn    GitHub Dao-AILab/flash-attention (owner 77001) release.yml, and nightly.yml
    kernels       GitHub Dao-AILab/kernels (owner 77001) release.yml, environment pypi
    nunchaku      GitLab ml/kernels/nunchaku (namespace 4242) .gitlab-ci.yml"""
    data = tmp_path_factory.mktemp("attesting") / "data"
    data.mkdir()
    server = ServerProcess(data, *index_arguments("http", issuer), "--sigstore-trust-root",
                           str(sigstore.trust_root_path)).start()
    index = Index(server, data, "http", issuer, wheelhouse_bin)
    try:
        index.publisher(PROJECT)
        index.publisher(PROJECT, workflow="nightly.yml")
        index.publisher("kernels", "--environment", "pypi", repository="Dao-AILab/kernels")
        index.publisher("nunchaku", "--kind", "gitlab", repository=GITLAB_PROJECT_PATH, owner_id=GITLAB_NAMESPACE_ID,
                        workflow=".gitlab-ci.yml")
        yield index
    finally:
        code = server.stop()
    assert code == 0, f"wheelhouse serve exited with {code} after SIGTERM:\n{server.stderr()}"


@pytest.fixture
def index(attesting, fresh_issuer) -> Index:
    """The module's index, its issuer up and running the default workflow."""
    return attesting


# ---- tokens and identities -----------------------------------------------------------------------

def mint(index: Index, workflow: Workflow | None = None) -> str:
    """An upload token, exchanged as the PyPA action exchanges a GitHub Actions identity token."""
    index.issuer.workflow = workflow or Workflow()
    exchanged = pypa_action(index.url + "legacy/", index.issuer.ci_environment(), index.issuer.ca, scheme=index.scheme)
    assert exchanged.status == 200, exchanged.refusal
    return exchanged.token


def identity_of(index: Index, workflow: Workflow | None = None) -> Identity:
    """The identity Fulcio certifies for the job `workflow` runs (the issuer is the local one)."""
    workflow = workflow or Workflow()
    return github(workflow.repository, workflow.owner_id, workflow.workflow, issuer=index.issuer.url, ref=workflow.ref,
                  sha=workflow.claims()["sha"], environment=workflow.environment)


def mint_gitlab(index: Index, project_path: str = GITLAB_PROJECT_PATH, namespace_id: str = GITLAB_NAMESPACE_ID,
                ref_path: str = "refs/heads/main") -> str:
    """An upload token for a GitLab CI job's identity token (the job names the audience itself)."""
    instance = index.issuer.url.removeprefix("https://")
    github_only = ("repository", "repository_owner", "repository_owner_id", "repository_id", "job_workflow_ref",
                   "workflow_ref", "event_name", "run_id", "run_attempt", "actor")
    claims = {name: None for name in github_only}
    claims.update({
        "sub": f"project_path:{project_path}:ref_type:branch:ref:main", "project_path": project_path,
        "project_id": "55235664", "namespace_path": project_path.rsplit("/", 1)[0], "namespace_id": namespace_id,
        "ci_config_ref_uri": f"{instance}/{project_path}//.gitlab-ci.yml@{ref_path}", "ci_server_url": index.issuer.url,
        "ref_path": ref_path, "ref": "main", "ref_type": "branch", "sha": DEFAULT_SHA, "pipeline_source": "push",
        "pipeline_id": "1546839451", "job_id": "8415754949", "user_login": "maintainer",
        "runner_environment": "gitlab-hosted",
    })
    token = index.issuer.token("wheelhouse", **claims)
    exchanged = pypa_action(index.url + "legacy/", {}, index.issuer.ca, scheme=index.scheme, identity_token=token)
    assert exchanged.status == 200, exchanged.refusal
    return exchanged.token


def gitlab_identity_of(index: Index, **fields) -> Identity:
    """The identity of the job mint_gitlab's token is for."""
    return gitlab(GITLAB_PROJECT_PATH, GITLAB_NAMESPACE_ID, ".gitlab-ci.yml", issuer=index.issuer.url,
                  server=index.issuer.url, ref="refs/heads/main",
                  sha=DEFAULT_SHA, **fields)


def api_token(index: Index) -> str:
    """An ordinary upload token for flash-attn, made with the CLI."""
    return make_token(index.binary, index.data, f"ci-{next(_numbers)}", "--project", PROJECT)


# ---- distributions and the upload form ------------------------------------------------------------

def fresh_wheel(directory: pathlib.Path, project: str = PROJECT, local: str = "") -> pathlib.Path:
    """A wheel of a version no other test uploads (the module shares one index)."""
    return build_wheel(directory, project, f"1.0.{next(_numbers)}{local}")


def fresh_sdist(directory: pathlib.Path, project: str = PROJECT) -> pathlib.Path:
    version = f"1.0.{next(_numbers)}"
    stem = f"{re.sub(r'[-_.]+', '_', project)}-{version}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}.tar.gz"
    pkg_info = f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\nSummary: demo\n\n"
    path.write_bytes(sdist_bytes(stem.rsplit("-", 1)[0], version, pkg_info=pkg_info))
    return path


def name_and_version(filename: str) -> tuple[str, str]:
    if filename.endswith(".whl"):
        name, version = filename.split("-")[:2]
    else:
        name, version = filename.removesuffix(".tar.gz").rsplit("-", 1)
    return name, version


def metadata_fields(dist: pathlib.Path) -> list[tuple[str, str]]:
    """The form's fields before the file, as twine and uv send them."""
    name, version = name_and_version(dist.name)
    return [(":action", "file_upload"), ("protocol_version", "1"), ("metadata_version", "2.1"), ("name", name),
            ("version", version), ("filetype", "bdist_wheel" if dist.name.endswith(".whl") else "sdist"),
            ("pyversion", dist.name.split("-")[-3] if dist.name.endswith(".whl") else "source"),
            ("sha256_digest", hashlib.sha256(dist.read_bytes()).hexdigest())]


def upload(index: Index, token: str, dist: pathlib.Path, attestations: list | None = None, *, field: str | None = None,
           order: str = "uv") -> requests.Response:
    """POSTs the upload form to /legacy/ as `__token__`: the metadata fields, then (order "uv", as
    uv's build_upload_request) the file and the `attestations` field after it, or (order "twine",
    as twine's upload) the `attestations` field among the metadata and the file last. `field` is
    the field's raw text (default: json.dumps(attestations), as both clients write it)."""
    content = dist.read_bytes()
    fields = metadata_fields(dist)
    value = field if field is not None else (json.dumps(attestations) if attestations is not None else None)
    boundary = uuid.uuid4().hex
    parts = []

    def text_part(key: str, text: str) -> None:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'.encode() + text.encode()
                     + b"\r\n")

    for key, text in fields:
        text_part(key, text)
    if value is not None and order == "twine":
        text_part("attestations", value)
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="{dist.name}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
    if value is not None and order == "uv":
        text_part("attestations", value)
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return requests.post(index.url + "legacy/", data=body, auth=("__token__", token), timeout=60,
                         headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})


def listed(index: Index, filename: str) -> bool:
    return filename in [row[0] for row in index.files()]


def assert_refused(index: Index, answer: requests.Response, dist: pathlib.Path, *keywords: str) -> None:
    """A 400 whose reason or body names one of `keywords`, and the file not stored."""
    text = f"{answer.reason}\n{answer.text}"
    assert answer.status_code == 400, f"{answer.status_code}: {text}"
    lowered = text.lower()
    assert any(keyword in lowered for keyword in keywords), f"none of {keywords} in the refusal: {text}"
    assert not listed(index, dist.name), f"{dist.name} was stored although refused"


# ---- what is served --------------------------------------------------------------------------------

def project_of(filename: str) -> str:
    return re.sub(r"[-_.]+", "-", name_and_version(filename)[0]).lower()


def file_entry(index: Index, filename: str) -> dict:
    page = json.load(index.server.get(f"/simple/{project_of(filename)}/", {"Accept": SIMPLE_JSON}))
    [entry] = [entry for entry in page["files"] if entry["filename"] == filename]
    return entry


def anchor_attributes(index: Index, filename: str) -> str:
    page = index.server.get(f"/simple/{project_of(filename)}/", {"Accept": "text/html"}).read().decode()
    found = [attributes for attributes, text in re.findall(r"<a\s([^>]*)>([^<]*)</a>", page)
             if html.unescape(text) == filename]
    assert len(found) == 1, page
    return found[0]


def integrity_path(filename: str) -> str:
    """/integrity/<project>/<version>/<filename>/provenance, unquoted."""
    return f"/integrity/{project_of(filename)}/{name_and_version(filename)[1]}/{filename}/provenance"


def assert_provenance(index: Index, dist: pathlib.Path, attestations: list, publisher: dict) -> None:
    """The JSON page's "provenance", the anchor's data-provenance, and the provenance object they
    name: this publisher, the attestations exactly as uploaded."""
    link = file_entry(index, dist.name).get("provenance")
    assert isinstance(link, str) and link, file_entry(index, dist.name)
    assert urllib.parse.unquote(urllib.parse.urlparse(link).path) == integrity_path(dist.name)
    attribute = re.search(r'data-provenance="([^"]*)"', anchor_attributes(index, dist.name))
    assert attribute and html.unescape(attribute[1]) == link
    answer = requests.get(urllib.parse.urljoin(index.url, link), timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"].split(";")[0].strip() == INTEGRITY_JSON
    assert answer.json() == {"version": 1, "attestation_bundles": [{"publisher": publisher,
                                                                     "attestations": attestations}]}


def assert_no_provenance(index: Index, dist: pathlib.Path) -> None:
    assert file_entry(index, dist.name).get("provenance") is None
    assert "data-provenance" not in anchor_attributes(index, dist.name)
    project, version = project_of(dist.name), name_and_version(dist.name)[1]
    path = "/".join(urllib.parse.quote(part, safe="")
                    for part in ("integrity", project, version, dist.name, "provenance"))
    assert requests.get(index.url + path, timeout=10).status_code == 404


GITHUB_PUBLISHER = {"kind": "GitHub", "repository": "Dao-AILab/flash-attention", "workflow": "release.yml",
                    "environment": None}


# ---- accepted --------------------------------------------------------------------------------------

@pytest.mark.parametrize("predicate_type", [PUBLISH_V1, SLSA_PROVENANCE_V1])
def test_one_attestation_of_either_type_is_verified_stored_and_served(index, sigstore, tmp_path, predicate_type):
    wheel = fresh_wheel(tmp_path, local="+cu130torch2.10")
    attestations = [sigstore.attest(wheel, identity=identity_of(index), predicate_type=predicate_type)]
    answer = upload(index, mint(index), wheel, attestations)
    assert answer.status_code == 201, answer.text
    assert listed(index, wheel.name)
    assert_provenance(index, wheel, attestations, GITHUB_PUBLISHER)


def test_both_types_in_twines_order_are_served_together(index, sigstore, tmp_path):
    wheel = fresh_wheel(tmp_path)
    identity = identity_of(index)
    attestations = [sigstore.attest(wheel, identity=identity), sigstore.attest(wheel, identity=identity,
                                                                               predicate_type=SLSA_PROVENANCE_V1)]
    answer = upload(index, mint(index), wheel, attestations, order="twine")
    assert answer.status_code == 201, answer.text
    assert_provenance(index, wheel, attestations, GITHUB_PUBLISHER)
    # A file uploaded without attestations beside it has none.
    plain = fresh_wheel(tmp_path)
    assert upload(index, mint(index), plain).status_code == 201
    assert_no_provenance(index, plain)


def test_an_attested_sdist(index, sigstore, tmp_path):
    sdist = fresh_sdist(tmp_path)
    attestations = [sigstore.attest(sdist, identity=identity_of(index))]
    answer = upload(index, mint(index), sdist, attestations)
    assert answer.status_code == 201, answer.text
    assert_provenance(index, sdist, attestations, GITHUB_PUBLISHER)


def test_a_build_config_at_the_commit_and_a_leaf_expired_since_signing_verify(index, sigstore, tmp_path):
    """The workflow may be named at the commit (a deployment's token has no ref), and a leaf is
    checked at the log's integratedTime, not now: Fulcio's live ten minutes."""
    wheel = fresh_wheel(tmp_path)
    at_commit = dataclasses.replace(identity_of(index), build_config_at="sha")
    an_hour_ago = time.time() - 3600
    attestations = [sigstore.attest(wheel, identity=at_commit),
                    sigstore.attest(wheel, identity=identity_of(index), predicate_type=SLSA_PROVENANCE_V1,
                                    signed_at=an_hour_ago)]
    answer = upload(index, mint(index), wheel, attestations)
    assert answer.status_code == 201, answer.text
    assert_provenance(index, wheel, attestations, GITHUB_PUBLISHER)


def test_the_subject_name_is_compared_ultranormalized(index, sigstore, tmp_path):
    wheel = fresh_wheel(tmp_path, local="+cu130")
    subject = wheel.name.replace("flash_attn", "Flash_Attn").replace("+cu130", "+CU130")
    attestations = [sigstore.attest(wheel, identity=identity_of(index), subject_name=subject)]
    answer = upload(index, mint(index), wheel, attestations)
    assert answer.status_code == 201, answer.text
    assert_provenance(index, wheel, attestations, GITHUB_PUBLISHER)


def test_the_publishers_environment_is_in_the_provenance(index, sigstore, tmp_path):
    workflow = Workflow(repository="Dao-AILab/kernels", environment="pypi")
    wheel = fresh_wheel(tmp_path, project="kernels")
    attestations = [sigstore.attest(wheel, identity=identity_of(index, workflow))]
    answer = upload(index, mint(index, workflow), wheel, attestations)
    assert answer.status_code == 201, answer.text
    assert_provenance(index, wheel, attestations, {"kind": "GitHub", "repository": "Dao-AILab/kernels",
                                                   "workflow": "release.yml", "environment": "pypi"})


def test_a_gitlab_publishers_attestation(index, sigstore, tmp_path):
    wheel = fresh_wheel(tmp_path, project="nunchaku")
    attestations = [sigstore.attest(wheel, identity=gitlab_identity_of(index))]
    answer = upload(index, mint_gitlab(index), wheel, attestations)
    assert answer.status_code == 201, answer.text
    assert_provenance(index, wheel, attestations, {"kind": "GitLab", "repository": GITLAB_PROJECT_PATH,
                                                   "workflow_filepath": ".gitlab-ci.yml", "environment": None})


def test_an_empty_array_is_no_attestation(index, tmp_path):
    """[] is taken as no attestations (PyPI refuses it: "an empty attestation set is not permitted")."""
    wheel = fresh_wheel(tmp_path)
    answer = upload(index, mint(index), wheel, [])
    assert answer.status_code == 201, answer.text
    assert_no_provenance(index, wheel)


def test_without_a_trust_root_attestations_are_ignored(tmp_path, wheelhouse_bin, start_server, fresh_issuer,
                                                       sigstore):
    data = tmp_path / "data"
    data.mkdir()
    index = Index(start_server(data, *index_arguments("http", fresh_issuer)), data, "http", fresh_issuer,
                  wheelhouse_bin)
    index.publisher(PROJECT)
    wheel = fresh_wheel(tmp_path)
    answer = upload(index, mint(index), wheel, [sigstore.attest(wheel, identity=identity_of(index))])
    assert answer.status_code == 201, answer.text
    assert listed(index, wheel.name)
    assert_no_provenance(index, wheel)
    # Not verified at all: one that would be refused is ignored too.
    broken = fresh_wheel(tmp_path)
    answer = upload(index, mint(index), broken, field="[{")
    assert answer.status_code == 201, answer.text
    assert_no_provenance(index, broken)


# ---- refused: the form -----------------------------------------------------------------------------

def test_attestations_need_a_token_a_trusted_publisher_minted(index, sigstore, tmp_path):
    wheel = fresh_wheel(tmp_path)
    attestations = [sigstore.attest(wheel, identity=identity_of(index))]
    assert_refused(index, upload(index, api_token(index), wheel, attestations), wheel, "trusted publish")
    assert_refused(index, upload(index, api_token(index), wheel, attestations, order="twine"), wheel, "trusted publish")
    # The same upload with a minted token is taken.
    assert upload(index, mint(index), wheel, attestations).status_code == 201


def _two_of_a_kind(sigstore, wheel, identity):
    return [sigstore.attest(wheel, identity=identity), sigstore.attest(wheel, identity=identity)]


def _three(sigstore, wheel, identity):
    return [sigstore.attest(wheel, identity=identity), sigstore.attest(wheel, identity=identity,
                                                                       predicate_type=SLSA_PROVENANCE_V1),
            sigstore.attest(wheel, identity=identity)]


MALFORMED_FIELDS = [
    ("not JSON", lambda sigstore, wheel, identity: "[{", ("json", "attestation")),
    ("an object, not an array", lambda sigstore, wheel, identity: json.dumps(sigstore.attest(wheel, identity=identity)),
     ("array", "list", "attestation")),
    ("null", lambda sigstore, wheel, identity: "null", ("array", "list", "attestation")),
    ("an array of numbers", lambda sigstore, wheel, identity: "[1, 2]", ("attestation", "object")),
    ("an attestation of version 2", lambda sigstore, wheel, identity: json.dumps(
        [dict(sigstore.attest(wheel, identity=identity), version=2)]), ("version", "attestation")),
    ("an attestation without its envelope", lambda sigstore, wheel, identity: json.dumps(
        [{k: v for k, v in sigstore.attest(wheel, identity=identity).items() if k != "envelope"}]),
     ("envelope", "attestation")),
    ("the statement not base64", lambda sigstore, wheel, identity: json.dumps([_with_envelope(
        sigstore.attest(wheel, identity=identity), statement="*not base64*")]), ("base64", "statement", "attestation")),
    ("three attestations", lambda sigstore, wheel, identity: json.dumps(_three(sigstore, wheel, identity)),
     ("at most", "two", "2", "three", "3", "too many", "predicate")),
    ("the same predicate type twice",
     lambda sigstore, wheel, identity: json.dumps(_two_of_a_kind(sigstore, wheel, identity)),
     ("predicate", "twice", "same", "duplicate", "once")),
]


def _with_envelope(attestation: dict, **changes) -> dict:
    return dict(attestation, envelope=dict(attestation["envelope"], **changes))


@pytest.mark.parametrize("order", ["uv", "twine"])
@pytest.mark.parametrize("make,keywords", [case[1:] for case in MALFORMED_FIELDS],
                         ids=[case[0] for case in MALFORMED_FIELDS])
def test_a_malformed_attestations_field_is_refused(index, sigstore, tmp_path, make, keywords, order):
    wheel = fresh_wheel(tmp_path)
    field = make(sigstore, wheel, identity_of(index))
    assert_refused(index, upload(index, mint(index), wheel, field=field, order=order), wheel, *keywords)


# ---- refused: the attestation ----------------------------------------------------------------------

@dataclasses.dataclass
class Scene:
    """What a breakage is made from."""
    sigstore: TestSigstore
    stranger: TestSigstore
    identity: Identity
    wheel: pathlib.Path

    @property
    def now(self) -> int:
        return int(time.time())


TRANSPARENCY = ("transparency", "rekor", "log")
BINDING = TRANSPARENCY + ("body", "entry")

BREAKAGES = [
    # the signature
    ("signed with a key other than the leaf's", ("signature",),
     lambda s: dict(sign_with=s.sigstore.leaf(s.identity).key)),
    ("signed over another payload type", ("signature",), lambda s: dict(payload_type="application/json")),
    # the certificate
    ("a leaf from another CA with the same names", ("certificate", "chain", "trust"),
     lambda s: dict(leaf=s.sigstore.leaf(s.identity, issued_by=s.stranger))),
    ("an expired leaf", ("certificate", "expired", "valid"),
     lambda s: dict(leaf=s.sigstore.leaf(s.identity, not_before=s.now - 7200), integrated_time=s.now - 60)),
    ("integrated after the leaf expired", ("certificate", "expired", "valid"),
     lambda s: dict(leaf=s.sigstore.leaf(s.identity, not_before=s.now - 1200), integrated_time=s.now - 300)),
    ("integrated before the leaf was issued", ("certificate", "valid"),
     lambda s: dict(integrated_time=s.now - 3600)),
    ("a leaf not for code signing", ("certificate", "code signing", "usage"),
     lambda s: dict(leaf=s.sigstore.leaf(s.identity, code_signing=False))),
    ("a certificate that is not DER", ("certificate",), lambda s: dict(certificate=b"\x30\x03\x02\x01\x01")),
    # the transparency entry
    ("a SET by another key", TRANSPARENCY, lambda s: dict(set_signed_by=s.stranger.log.key)),
    ("a SET over another log index", TRANSPARENCY, lambda s: dict(set_fields={"logIndex": 1})),
    ("a SET over another integrated time", TRANSPARENCY, lambda s: dict(set_fields={"integratedTime": s.now - 5})),
    ("a SET over another body", TRANSPARENCY, lambda s: dict(set_fields={"body": b64(b"{}")})),
    ("an entry from a log the trust root lacks", TRANSPARENCY, lambda s: dict(log=s.stranger.log)),
    ("two transparency entries", TRANSPARENCY, lambda s: dict(entries=2)),
    ("no transparency entry", TRANSPARENCY, lambda s: dict(entries=0)),
    ("a hashedrekord entry", TRANSPARENCY + ("kind", "dsse"),
     lambda s: dict(kind_version={"kind": "hashedrekord", "version": "0.0.1"})),
    ("an entry body naming another statement", BINDING + ("payload",),
     lambda s: dict(body_statement=statement_bytes([{"name": s.wheel.name, "digest": {"sha256": "0" * 64}}],
                                                   PUBLISH_V1, None))),
    ("an entry body naming another certificate", BINDING + ("certificate",),
     lambda s: dict(body_certificate=s.sigstore.leaf(s.identity).certificate)),
    ("an entry body naming another signature", BINDING + ("signature",),
     lambda s: dict(body_signature=b"\x30\x06\x02\x01\x01\x02\x01\x01")),
    # the statement
    ("two subjects", ("subject",),
     lambda s: dict(subjects=[{"name": s.wheel.name, "digest": {"sha256": hashlib.sha256(s.wheel.read_bytes())
                                                                .hexdigest()}}] * 2)),
    ("a subject naming another filename", ("subject", "name", "filename"),
     lambda s: dict(subject_name=s.wheel.name.replace("-1.0.", "-9.0."))),
    ("a subject that is no distribution filename", ("subject", "name", "filename"),
     lambda s: dict(subject_name="flash_attn.exe")),
    ("a subject with another digest", ("digest", "sha256", "subject"), lambda s: dict(subject_digest="ab" * 32)),
    ("the attestation of another build", ("subject", "digest", "name", "filename"),
     lambda s: dict(subject_name=s.wheel.name.replace("-1.0.", "-9.0."), subject_digest="cd" * 32)),
    ("an unknown predicate type", ("predicate",),
     lambda s: dict(predicate_type="https://in-toto.io/attestation/vulns")),
    ("a statement that is not JSON", ("statement",), lambda s: dict(statement=b"not json")),
    # the identity: a certificate the minting publisher does not match
    ("a leaf without the owner id extension", ("publisher", "owner", "certificate", "extension"),
     lambda s: dict(leaf=s.sigstore.leaf(s.identity, omit=["owner_id"]))),
    ("a leaf without the build config URI", ("publisher", "workflow", "certificate", "extension", "build config"),
     lambda s: dict(leaf=s.sigstore.leaf(s.identity, omit=["build_config_uri"]))),
    ("another publisher's repository", ("publisher", "repository"),
     lambda s: dict(identity=dataclasses.replace(s.identity, repository="Dao-AILab/kernels"))),
    ("the same repository name under another owner id", ("publisher", "owner"),
     lambda s: dict(identity=dataclasses.replace(s.identity, owner_id="99999"))),
    ("the project's other publisher's workflow", ("publisher", "workflow"),
     lambda s: dict(identity=dataclasses.replace(s.identity, workflow=".github/workflows/nightly.yml"))),
    ("GitHub's own issuer, not the publisher's", ("publisher", "issuer"),
     lambda s: dict(identity=dataclasses.replace(s.identity, issuer="https://token.actions.githubusercontent.com"))),
    ("the workflow at a ref the certificate does not name", ("publisher", "workflow", "build config"),
     lambda s: dict(identity=dataclasses.replace(s.identity, build_config_at="refs/heads/attacker"))),
    ("a GitLab project's identity", ("publisher", "repository", "workflow", "issuer"),
     lambda s: dict(identity=gitlab(GITLAB_PROJECT_PATH, GITLAB_NAMESPACE_ID, issuer=s.identity.issuer_url,
                                    server=s.identity.issuer_url))),
]


@pytest.mark.parametrize("keywords,breakage", [case[1:] for case in BREAKAGES], ids=[case[0] for case in BREAKAGES])
def test_a_broken_attestation_is_refused_and_nothing_stored(index, sigstore, stranger, tmp_path, keywords, breakage):
    wheel = fresh_wheel(tmp_path)
    scene = Scene(sigstore, stranger, identity_of(index), wheel)
    arguments = {"identity": scene.identity, **breakage(scene)}
    broken = sigstore.attest(wheel, **arguments)
    assert_refused(index, upload(index, mint(index), wheel, [broken]), wheel, *keywords)
    # Beside a good one of the other predicate type, as the second of two, it is refused all the same.
    good = sigstore.attest(wheel, identity=scene.identity, predicate_type=SLSA_PROVENANCE_V1)
    assert_refused(index, upload(index, mint(index), wheel, [good, broken], order="twine"), wheel, *keywords)


@pytest.mark.parametrize("case", ["a GitHub identity", "another namespace id", "another project"])
def test_a_gitlab_publishers_token_takes_only_its_own_identity(index, sigstore, tmp_path, case):
    wheel = fresh_wheel(tmp_path, project="nunchaku")
    identity = {"a GitHub identity": identity_of(index),
                "another namespace id": dataclasses.replace(gitlab_identity_of(index), owner_id="4243"),
                "another project": dataclasses.replace(gitlab_identity_of(index), repository="ml/kernels/other")}[case]
    attestations = [sigstore.attest(wheel, identity=identity)]
    assert_refused(index, upload(index, mint_gitlab(index), wheel, attestations), wheel,
                   "publisher", "repository", "workflow", "owner", "namespace", "issuer")
