"""PEP 740 attestations attacked: a hostile CI job (forged or odd certificates, oversized, nested,
repeated or mis-typed fields, tokens of another project or of a removed publisher), a hostile
reader (the integrity API under other names, spellings and encodings, a private index's limited
tokens), and a buggy client (the field twice, as a file part, not UTF-8). The house rules: access
checks fail closed; bad input gets a precise 4xx and nothing is stored; everyone else is still
served; the cost is linear in what a client sends.

The index, its publishers, the Sigstore stand-in and the upload form are test_attestations.py's.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import json
import pathlib
import re
import socket
import sqlite3
import subprocess
import time
import urllib.parse
import uuid

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

import sigstore_stand_in
from sigstore_stand_in import (FULCIO_OIDS, LEAF_LIFETIME, PUBLISH_V1, RAW_EXTENSIONS, SLSA_PROVENANCE_V1, Leaf,
                               TestSigstore, b64, der_utf8_string, rfc3339, spki_der)
from test_attestations import (GITHUB_PUBLISHER, INTEGRITY_JSON, PROJECT, SIMPLE_JSON, anchor_attributes,  # noqa: F401
                               assert_no_provenance, assert_provenance, assert_refused, attesting, file_entry,
                               fresh_issuer, fresh_sdist, fresh_wheel, identity_of, index, integrity_path, issuer,
                               listed, metadata_fields, mint, name_and_version, project_of, sigstore, stranger, upload)
from oidc_issuer import Workflow
from server_process import ServerProcess
from test_uploads import make_token
from trusted_publishing import Index, index_arguments
from wheelbuilder import build_wheel

# ---- helpers ---------------------------------------------------------------------------------------


def form_upload(index: Index, token: str, dist: pathlib.Path, extra: list[tuple[str, bytes, str | None]],
                timeout: float = 60) -> requests.Response:
    """The upload form as test_attestations.upload sends it, the file first, then `extra` parts:
    (name, raw value, filename or None); a part with a filename is a file part."""
    content = dist.read_bytes()
    fields = metadata_fields(dist)
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{text}\r\n'.encode()
             for key, text in fields]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="{dist.name}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
    for key, raw, filename in extra:
        disposition = f'form-data; name="{key}"' + (f'; filename="{filename}"' if filename else "")
        extra_header = "Content-Type: application/json\r\n" if filename else ""
        parts.append(f"--{boundary}\r\nContent-Disposition: {disposition}\r\n{extra_header}\r\n".encode() + raw
                     + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return requests.post(index.url + "legacy/", data=body, auth=("__token__", token), timeout=timeout,
                         headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})


def refusal_text(answer: requests.Response) -> str:
    return f"{answer.status_code} {answer.reason}\n{answer.text}"


def assert_4xx_nothing_stored(index: Index, answer: requests.Response, dist: pathlib.Path, *keywords: str) -> None:
    assert 400 <= answer.status_code < 500, refusal_text(answer)
    if keywords:
        lowered = refusal_text(answer).lower()
        assert any(keyword in lowered for keyword in keywords), f"none of {keywords} in {refusal_text(answer)}"
    assert not listed(index, dist.name), f"{dist.name} was stored although refused"


def provenance_of(index: Index, path: str, **kwargs) -> requests.Response:
    return requests.get(index.url.rstrip("/") + path, timeout=10, **kwargs)


def entry_of(attestation: dict) -> dict:
    return attestation["verification_material"]["transparency_entries"][0]


def attested_wheel(index, sigstore, tmp_path, **wheel) -> tuple[pathlib.Path, list]:
    """A fresh flash-attn wheel uploaded with one good publish attestation."""
    dist = fresh_wheel(tmp_path, **wheel)
    attestations = [sigstore.attest(dist, identity=identity_of(index))]
    answer = upload(index, mint(index), dist, attestations)
    assert answer.status_code == 201, refusal_text(answer)
    return dist, attestations


def custom_leaf(sigstore: TestSigstore, identity, *, key=None, eku: bool = True, by_root: bool = False,
                digital_signature: bool = True, ca: bool = False) -> Leaf:
    """A Fulcio-like leaf as TestSigstore.leaf makes it, with what leaf() cannot vary: any key type
    (RSA, Ed25519, P-384), no extended key usage at all, or signed by the root CA itself."""
    key = key or ec.generate_private_key(ec.SECP256R1())
    start = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=30)).replace(microsecond=0)
    signer_name, signer_key = ((sigstore.root.subject, sigstore.root_key) if by_root
                               else (sigstore.intermediate.subject, sigstore.intermediate_key))
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([])).issuer_name(signer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(start + LEAF_LIFETIME)
               # Without digitalSignature, contentCommitment stands in: a KeyUsage with no bit set is no
               # certificate OpenSSL reads at all.
               .add_extension(x509.KeyUsage(digital_signature, not digital_signature, False, False, False, ca, False,
                                            False, False), True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer_key.public_key()), False)
               .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(identity.build_signer_uri)]),
                              True))
    if eku:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False)
    if ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), True)
    values = identity.extensions()
    for name in sorted(values, key=lambda n: [int(p) for p in FULCIO_OIDS[n].split(".")]):
        raw = values[name].encode() if name in RAW_EXTENSIONS else der_utf8_string(values[name])
        builder = builder.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier(FULCIO_OIDS[name]), raw),
                                        False)
    return Leaf(builder.sign(signer_key, hashes.SHA384()), key, identity)


def server_with_root(start_server, wheelhouse_bin, fresh_issuer, tmp_path: pathlib.Path, trust_root: dict,
                     *extra: str) -> Index:
    """Another index with this trust root and flash-attn's release.yml publisher."""
    data = tmp_path / "data"
    data.mkdir()
    root_path = tmp_path / "trusted_root.json"
    root_path.write_text(json.dumps(trust_root))
    server = start_server(data, *index_arguments("http", fresh_issuer), "--sigstore-trust-root", str(root_path),
                          *extra)
    running = Index(server, data, "http", fresh_issuer, wheelhouse_bin)
    running.publisher(PROJECT)
    return running


# ---- the integrity API: a hostile reader -----------------------------------------------------------

def test_the_integrity_url_under_another_projects_name_or_version_serves_nothing(index, sigstore, tmp_path):
    dist, attestations = attested_wheel(index, sigstore, tmp_path)
    assert_provenance(index, dist, attestations, GITHUB_PUBLISHER)
    version = name_and_version(dist.name)[1]
    for path in (f"/integrity/kernels/{version}/{dist.name}/provenance",
                 f"/integrity/nunchaku/{version}/{dist.name}/provenance",
                 f"/integrity/{PROJECT}/9.9.9/{dist.name}/provenance",
                 f"/integrity/{PROJECT}//{dist.name}/provenance",
                 f"/integrity/{PROJECT}/{version}/{dist.name}/provenance/extra",
                 f"/integrity/{PROJECT}/{version}/{dist.name}"):
        answer = provenance_of(index, path)
        assert answer.status_code == 404, f"{path}: {refusal_text(answer)}"
        assert "attestation_bundles" not in answer.text


@pytest.mark.parametrize("spelling", ["Flash-Attn", "flash_attn", "flash.attn", "FLASH-ATTN"])
def test_the_project_spelled_otherwise_serves_the_same_provenance_or_nothing(index, sigstore, tmp_path, spelling):
    dist, attestations = attested_wheel(index, sigstore, tmp_path)
    version = name_and_version(dist.name)[1]
    answer = provenance_of(index, f"/integrity/{spelling}/{version}/{dist.name}/provenance", allow_redirects=True)
    assert answer.status_code in (200, 404), refusal_text(answer)
    if answer.status_code == 200:
        assert answer.json()["attestation_bundles"][0]["attestations"] == attestations


def test_the_version_spelled_otherwise_serves_the_same_provenance_or_nothing(index, sigstore, tmp_path):
    dist = build_wheel(tmp_path, PROJECT, f"1.0.{int(time.time() * 1000) % 10**9}+CU130")
    attestations = [sigstore.attest(dist, identity=identity_of(index))]
    assert upload(index, mint(index), dist, attestations).status_code == 201
    version = name_and_version(dist.name)[1]
    normalized = version.lower()
    assert provenance_of(index, f"/integrity/{PROJECT}/{normalized}/{dist.name}/provenance").status_code == 200
    for spelling in (version.replace("+CU130", "+cu-130"), "v" + normalized, normalized.replace("1.0.", "1.00."),
                     normalized + ".0", urllib.parse.quote(normalized, safe="")):
        answer = provenance_of(index, f"/integrity/{PROJECT}/{spelling}/{dist.name}/provenance")
        assert answer.status_code in (200, 404), f"{spelling}: {refusal_text(answer)}"
        if answer.status_code == 200:
            assert answer.json()["attestation_bundles"][0]["attestations"] == attestations


def test_percent_encoding_and_case_games_in_the_filename(index, sigstore, tmp_path):
    dist, attestations = attested_wheel(index, sigstore, tmp_path, local="+cu130torch2.10")
    project, version = project_of(dist.name), name_and_version(dist.name)[1]
    every_byte = "".join(f"%{byte:02X}" for byte in dist.name.encode())
    answer = provenance_of(index, f"/integrity/{project}/{urllib.parse.quote(version, safe='')}/{every_byte}/provenance")
    assert answer.status_code == 200, refusal_text(answer)
    assert answer.json()["attestation_bundles"][0]["attestations"] == attestations
    for odd in (dist.name.upper(), dist.name.replace("flash_attn", "Flash_Attn"), dist.name + "%00",
                dist.name.replace(".whl", "%2Ewhl%00.whl"), "..%2F" + dist.name, dist.name.replace("-", "%2F", 1)):
        answer = provenance_of(index, f"/integrity/{project}/{version}/{odd}/provenance")
        assert 400 <= answer.status_code < 500, f"{odd}: {refusal_text(answer)}"
        assert "attestation_bundles" not in answer.text


@pytest.mark.parametrize("filename", ["not-a-distribution", "flash_attn.exe", "%00", "%FF%FE", "a" * 3000,
                                      "flash_attn-1.0-py3-none-any.whl.metadata", "..", "%2e%2e"])
def test_a_filename_that_parses_as_nothing_is_a_404(index, filename):
    answer = provenance_of(index, f"/integrity/{PROJECT}/1.0/{filename}/provenance")
    assert 400 <= answer.status_code < 500, refusal_text(answer)
    # …and the index still answers.
    assert provenance_of(index, "/simple/").status_code == 200


# ---- the integrity API on a private index ---------------------------------------------------------

@pytest.fixture(scope="module")
def private(tmp_path_factory, wheelhouse_bin, issuer, sigstore):
    """A --private index trusting the stand-in; flash-attn and kernels each with one attested wheel."""
    base = tmp_path_factory.mktemp("private")
    data = base / "data"
    data.mkdir()
    server = ServerProcess(data, *index_arguments("http", issuer), "--private", "--sigstore-trust-root",
                           str(sigstore.trust_root_path)).start()
    running = Index(server, data, "http", issuer, wheelhouse_bin)
    try:
        running.publisher(PROJECT)
        running.publisher("kernels", "--environment", "pypi", repository="Dao-AILab/kernels")
        yield running
    finally:
        server.stop()


def test_a_private_indexs_provenance_needs_a_token_for_that_project(private, sigstore, fresh_issuer, tmp_path):
    flash = fresh_wheel(tmp_path)
    flash_attestations = [sigstore.attest(flash, identity=identity_of(private))]
    assert upload(private, mint(private), flash, flash_attestations).status_code == 201
    workflow = Workflow(repository="Dao-AILab/kernels", environment="pypi")
    kernel = fresh_wheel(tmp_path, project="kernels")
    assert upload(private, mint(private, workflow), kernel,
                  [sigstore.attest(kernel, identity=identity_of(private, workflow))]).status_code == 201

    every = make_token(private.binary, private.data, f"read-all-{uuid.uuid4().hex[:6]}", "--scope", "read")
    kernels_only = make_token(private.binary, private.data, f"read-kernels-{uuid.uuid4().hex[:6]}", "--scope", "read",
                              "--project", "kernels")
    flash_version = name_and_version(flash.name)[1]
    kernel_version = name_and_version(kernel.name)[1]
    flash_path = f"/integrity/{PROJECT}/{flash_version}/{flash.name}/provenance"

    def get(path, token=None):
        return requests.get(private.url.rstrip("/") + path, timeout=10,
                            auth=("__token__", token) if token else None)

    assert get(flash_path, every).status_code == 200
    anonymous = get(flash_path)
    assert anonymous.status_code == 401, refusal_text(anonymous)
    assert "attestation_bundles" not in anonymous.text
    assert get(flash_path, "wh_not_a_token").status_code == 401
    # A token for kernels asks for flash-attn's provenance under every name it might be filed.
    for path in (flash_path,
                 f"/integrity/kernels/{flash_version}/{flash.name}/provenance",
                 f"/integrity/kernels/{kernel_version}/{flash.name}/provenance",
                 f"/integrity/{PROJECT}/{flash_version}/{urllib.parse.quote(flash.name)}/provenance",
                 f"/integrity/kernels/{flash_version}/{flash.name.replace('flash_attn', 'Flash_Attn')}/provenance",
                 f"/integrity/kernels/{flash_version}/not-a-distribution/provenance"):
        answer = get(path, kernels_only)
        assert answer.status_code in (403, 404), f"{path}: {refusal_text(answer)}"
        assert "attestation_bundles" not in answer.text and "Dao-AILab/flash-attention" not in answer.text
    # Its own project's provenance it reads.
    own = get(f"/integrity/kernels/{kernel_version}/{kernel.name}/provenance", kernels_only)
    assert own.status_code == 200, refusal_text(own)


# ---- uploads: tokens and publishers ---------------------------------------------------------------

def test_a_token_minted_for_one_project_cannot_upload_attested_files_of_another(index, sigstore, tmp_path):
    # flash-attn's release.yml publisher mints; the wheel is kernels', attested as flash-attn's job.
    kernel = fresh_wheel(tmp_path, project="kernels")
    attestations = [sigstore.attest(kernel, identity=identity_of(index))]
    answer = upload(index, mint(index), kernel, attestations)
    assert_4xx_nothing_stored(index, answer, kernel)
    assert answer.status_code == 403, refusal_text(answer)
    # Nor nunchaku's (a GitLab publisher's project), nor a project no publisher names.
    for project in ("nunchaku", "unclaimed-project"):
        other = fresh_wheel(tmp_path, project=project)
        answer = upload(index, mint(index), other, [sigstore.attest(other, identity=identity_of(index))])
        assert_4xx_nothing_stored(index, answer, other)


def test_a_publisher_removed_between_mint_and_upload(tmp_path, wheelhouse_bin, start_server, fresh_issuer, sigstore):
    running = server_with_root(start_server, wheelhouse_bin, fresh_issuer, tmp_path, sigstore.trust_root())
    token = mint(running)
    removed = subprocess.run([str(wheelhouse_bin), "publisher", "remove", "--data", str(running.data), "--project",
                              PROJECT, "1"], capture_output=True, text=True, timeout=30)
    assert removed.returncode == 0, removed.stderr
    # A new publisher for the same project takes the freed id (no AUTOINCREMENT): the old token is
    # still not its.
    running.publisher(PROJECT, workflow="nightly.yml")
    dist = fresh_wheel(tmp_path)
    answer = upload(running, token, dist, [sigstore.attest(dist, identity=identity_of(running))])
    assert answer.status_code in (401, 403), refusal_text(answer)
    assert not listed(running, dist.name)
    nightly = identity_of(running, Workflow(workflow="nightly.yml"))
    answer = upload(running, token, dist, [sigstore.attest(dist, identity=nightly)])
    assert answer.status_code in (401, 403), refusal_text(answer)
    assert not listed(running, dist.name)


def test_a_project_scoped_api_tokens_attestations_are_refused_and_nothing_stored(index, sigstore, tmp_path):
    """An API token limited to the very project still did not come from a trusted publisher."""
    scoped = make_token(index.binary, index.data, f"ci-{uuid.uuid4().hex[:6]}", "--project", PROJECT)
    dist = fresh_wheel(tmp_path)
    attestations = [sigstore.attest(dist, identity=identity_of(index))]
    for order in ("uv", "twine"):
        assert_refused(index, upload(index, scoped, dist, attestations, order=order), dist, "trusted publish")
    as_file = form_upload(index, scoped, dist, [("attestations", json.dumps(attestations).encode(), "a.json")])
    assert_refused(index, as_file, dist, "trusted publish")
    # Without attestations (or with an empty list) the same token uploads, and nothing is attested.
    assert upload(index, scoped, dist, []).status_code == 201
    assert_no_provenance(index, dist)


# ---- uploads: the form ---------------------------------------------------------------------------

def test_attestations_as_a_file_part_are_verified_like_a_field(index, sigstore, tmp_path):
    good = fresh_wheel(tmp_path)
    attestations = [sigstore.attest(good, identity=identity_of(index))]
    answer = form_upload(index, mint(index), good, [("attestations", json.dumps(attestations).encode(),
                                                     "attestations.json")])
    assert answer.status_code in (201, 400), refusal_text(answer)
    if answer.status_code == 201:
        assert_provenance(index, good, attestations, GITHUB_PUBLISHER)
    bad = fresh_wheel(tmp_path)
    broken = [sigstore.attest(bad, identity=identity_of(index), subject_digest="ab" * 32)]
    answer = form_upload(index, mint(index), bad, [("attestations", json.dumps(broken).encode(), "a.json")])
    assert_4xx_nothing_stored(index, answer, bad)


def test_a_second_attestations_field_is_no_way_around_the_check(index, sigstore, tmp_path):
    """The first field is the one read; whatever the second holds, a broken attestation is never
    stored, nor served as if checked."""
    dist = fresh_wheel(tmp_path)
    good = [sigstore.attest(dist, identity=identity_of(index))]
    broken = [sigstore.attest(dist, identity=identity_of(index), subject_digest="ab" * 32)]
    answer = form_upload(index, mint(index), dist, [("attestations", json.dumps(broken).encode(), None),
                                                    ("attestations", json.dumps(good).encode(), None)])
    assert_4xx_nothing_stored(index, answer, dist)


def test_a_repeated_attestations_field_is_refused_not_half_read(index, sigstore, tmp_path):
    """Two `attestations` fields are ambiguous (WebOb, as PyPI reads forms, takes the last; this
    index the first): the upload should be refused as two 'content' parts are, not stored with the
    first field's attestations and the second's silently dropped."""
    dist = fresh_wheel(tmp_path)
    broken = [sigstore.attest(dist, identity=identity_of(index), subject_digest="ab" * 32)]
    answer = form_upload(index, mint(index), dist, [("attestations", b"[]", None),
                                                    ("attestations", json.dumps(broken).encode(), None)])
    assert_4xx_nothing_stored(index, answer, dist, "attestations")


def test_the_field_at_and_past_its_limit(index, sigstore, tmp_path):
    limit = 256 * 1024
    dist = fresh_wheel(tmp_path)
    attestations = [sigstore.attest(dist, identity=identity_of(index))]
    text = json.dumps(attestations)
    at_limit = text[:-1] + " " * (limit - len(text)) + "]"
    assert len(at_limit.encode()) == limit
    answer = upload(index, mint(index), dist, field=at_limit)
    assert answer.status_code == 201, refusal_text(answer)
    assert_provenance(index, dist, attestations, GITHUB_PUBLISHER)

    over = fresh_wheel(tmp_path)
    attestations = [sigstore.attest(over, identity=identity_of(index))]
    text = json.dumps(attestations)
    answer = upload(index, mint(index), over, field=text[:-1] + " " * (limit + 1 - len(text)) + "]")
    assert_refused(index, answer, over, "smaller", "262144")
    assert refusal_text(answer).lower().index("attestations") < 200
    # Past the form's 1 MiB budget for fields: refused by the form reader, nothing stored.
    answer = upload(index, mint(index), over, field="[" + " " * (1024 * 1024 + 10) + "]")
    assert_4xx_nothing_stored(index, answer, over, "attestations", "field")


@pytest.mark.parametrize("case,field", [
    ("deeply nested arrays", "[" * 100000 + "]" * 100000),
    ("deeply nested objects", '[{"a":' * 20000 + "1" + "}" * 20000 + "]"),
    ("not UTF-8", b'[{"version": 1, "x": "\xff\xfe"}]'),
    ("a lone surrogate escape", '[{"version": 1, "x": "\\ud800"}]'),
    ("a huge number", "[" + "9" * 5000 + "]"),
    ("a NaN", "[NaN]"),
    ("trailing garbage", "[] []"),
    ("a BOM", "\ufeff[]"),
    ("many attestations", json.dumps([{}] * 20000)),
    ("an empty string", '""'),
    ("whitespace only", "   "),
])
def test_odd_json_in_the_field_is_refused_quickly(index, tmp_path, case, field):
    dist = fresh_wheel(tmp_path)
    started = time.monotonic()
    if isinstance(field, bytes):
        answer = form_upload(index, mint(index), dist, [("attestations", field, None)])
    else:
        answer = upload(index, mint(index), dist, field=field)
    assert time.monotonic() - started < 5
    if case == "whitespace only" and answer.status_code == 201:
        return  # taken as no field, like ""
    assert_refused(index, answer, dist, "attestation", "json")


def _dup_key(text: str, key: str, value: str) -> str:
    """`text` (JSON) with `"key": value` inserted once more at the first occurrence of `"key":`."""
    marker = f'"{key}":'
    at = text.index(marker)
    return text[:at] + f'{marker}{value},' + text[at:]


def test_duplicate_keys_in_the_attestation_object_are_refused(index, sigstore, tmp_path):
    dist = fresh_wheel(tmp_path)
    good = sigstore.attest(dist, identity=identity_of(index))
    other = sigstore.attest(dist, identity=identity_of(index), subject_digest="ab" * 32)
    text = json.dumps([good], separators=(",", ":"))
    for key, value in (("version", "2"), ("certificate", json.dumps(other["verification_material"]["certificate"])),
                       ("statement", json.dumps(other["envelope"]["statement"])),
                       ("logIndex", '"1"')):
        answer = upload(index, mint(index), dist, field=_dup_key(text, key, value))
        assert_refused(index, answer, dist, "twice", "duplicate", "repeated", key.lower())


def test_duplicate_keys_in_the_signed_statement_are_refused(index, sigstore, tmp_path):
    """A statement whose "subject" is there twice: one reader takes the first (this file), another
    the last (some other file). Signed and logged honestly, it must still be refused."""
    dist = fresh_wheel(tmp_path)
    digest = hashlib.sha256(dist.read_bytes()).hexdigest()
    ours = json.dumps([{"name": dist.name, "digest": {"sha256": digest}}], separators=(",", ":"))
    theirs = json.dumps([{"name": "evil-6.6.6-py3-none-any.whl", "digest": {"sha256": "cd" * 32}}],
                        separators=(",", ":"))
    for statement in (
        f'{{"_type":"https://in-toto.io/Statement/v1","subject":{theirs},"subject":{ours},'
        f'"predicateType":"{PUBLISH_V1}","predicate":null}}',
        f'{{"_type":"https://in-toto.io/Statement/v1","subject":{ours},"predicateType":"{PUBLISH_V1}",'
        f'"predicateType":"https://in-toto.io/attestation/vulns","predicate":null}}',
        f'{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"name":"{dist.name}","name":"x.whl",'
        f'"digest":{{"sha256":"{digest}"}}}}],"predicateType":"{PUBLISH_V1}","predicate":null}}',
    ):
        attestation = sigstore.attest(dist, identity=identity_of(index), statement=statement.encode())
        assert_refused(index, upload(index, mint(index), dist, [attestation]), dist, "statement", "twice", "json")


def test_duplicate_keys_in_the_rekor_body_are_refused(index, sigstore, tmp_path, monkeypatch):
    dist = fresh_wheel(tmp_path)
    real = sigstore_stand_in.rekor_dsse_body

    def twice(statement, signature, certificate, *rest):
        body = real(statement, signature, certificate, *rest)
        decoy = json.dumps({"algorithm": "sha256", "value": "00" * 32}, separators=(",", ":"))
        return body.replace(b'"payloadHash":', b'"payloadHash":' + decoy.encode() + b',"payloadHash":', 1)

    monkeypatch.setattr(sigstore_stand_in, "rekor_dsse_body", twice)
    attestation = sigstore.attest(dist, identity=identity_of(index))
    assert_refused(index, upload(index, mint(index), dist, [attestation]), dist, "body", "transparency", "json")


def _recode(attestation: dict, where: tuple[str, ...], transform) -> dict:
    copy = json.loads(json.dumps(attestation))
    holder = copy
    for key in where[:-1]:
        holder = holder[key]
    holder[where[-1]] = transform(holder[where[-1]])
    return copy


BASE64_GAMES = [
    ("newlines every 76", lambda text: "\n".join(text[i:i + 76] for i in range(0, len(text), 76))),
    ("a trailing newline", lambda text: text + "\n"),
    ("spaces inside", lambda text: text[:8] + " " + text[8:]),
    ("the URL-safe alphabet", lambda text: text.replace("+", "-").replace("/", "_")),
    ("no padding", lambda text: text.rstrip("=")),
    ("extra padding", lambda text: text + "=="),
]


@pytest.mark.parametrize("game", [case[1] for case in BASE64_GAMES], ids=[case[0] for case in BASE64_GAMES])
@pytest.mark.parametrize("where", [("verification_material", "certificate"), ("envelope", "signature"),
                                   ("envelope", "statement")], ids=["certificate", "signature", "statement"])
def test_base64_games_never_store_a_changed_attestation(index, sigstore, tmp_path, where, game):
    """Whatever the decoder takes, what is stored is what was sent and it verified; what it does
    not take is a 400 naming base64 or the part."""
    dist = fresh_wheel(tmp_path)
    original = sigstore.attest(dist, identity=identity_of(index))
    changed = _recode(original, where, game)
    answer = upload(index, mint(index), dist, [changed])
    if changed == original:
        assert answer.status_code == 201
        return
    if answer.status_code == 201:
        assert_provenance(index, dist, [changed], GITHUB_PUBLISHER)
    else:
        assert_refused(index, answer, dist, "base64", where[-1], "certificate", "statement", "signature")


@pytest.mark.parametrize("field,value", [
    ("logIndex", 2**63), ("logIndex", 2**64 + 5), ("logIndex", -1), ("logIndex", "-1"), ("logIndex", "+5"),
    ("logIndex", " 5"), ("logIndex", "5.0"), ("logIndex", 5.0), ("logIndex", "9" * 40), ("logIndex", None),
    ("integratedTime", 2**63 - 1), ("integratedTime", "-100"), ("integratedTime", -100), ("integratedTime", "1e9"),
    ("integratedTime", "0x10"), ("integratedTime", True), ("integratedTime", []),
])
def test_log_integers_out_of_shape_are_refused(index, sigstore, tmp_path, field, value):
    dist = fresh_wheel(tmp_path)
    attestation = sigstore.attest(dist, identity=identity_of(index))
    entry_of(attestation)[field] = value
    assert_refused(index, upload(index, mint(index), dist, [attestation]), dist, "transparency", "log", "integer",
                   field.lower())


# ---- uploads: the certificate --------------------------------------------------------------------

def test_a_leaf_that_is_itself_a_ca_is_refused(index, sigstore, tmp_path):
    """sigstore-python refuses a bundle whose leaf is a CA ("invalid leaf or non-leaf certificate in
    the leaf position"); the stand-in's own verifier does (its `ca` knob)."""
    dist = fresh_wheel(tmp_path)
    for leaf in (sigstore.leaf(identity_of(index), ca=True), custom_leaf(sigstore, identity_of(index), ca=True)):
        attestation = sigstore.attest(dist, identity=identity_of(index), leaf=leaf)
        assert_refused(index, upload(index, mint(index), dist, [attestation]), dist, "certificate", "leaf", "ca")


def test_a_leaf_without_digital_signature_usage_is_refused(index, sigstore, tmp_path):
    """sigstore-python checks KeyUsage digitalSignature on the signing certificate."""
    dist = fresh_wheel(tmp_path)
    leaf = custom_leaf(sigstore, identity_of(index), digital_signature=False)
    attestation = sigstore.attest(dist, identity=identity_of(index), leaf=leaf)
    assert_refused(index, upload(index, mint(index), dist, [attestation]), dist, "certificate", "usage", "signing")


def test_a_leaf_without_any_extended_key_usage_is_refused(index, sigstore, tmp_path):
    """No ExtendedKeyUsage extension at all is not "codeSigning" (OpenSSL's
    X509_get_extended_key_usage answers UINT32_MAX, every bit, when the extension is absent)."""
    dist = fresh_wheel(tmp_path)
    leaf = custom_leaf(sigstore, identity_of(index), eku=False)
    attestation = sigstore.attest(dist, identity=identity_of(index), leaf=leaf)
    assert_refused(index, upload(index, mint(index), dist, [attestation]), dist, "code signing", "usage")


@pytest.mark.parametrize("kind", ["rsa", "ed25519"])
def test_a_leaf_with_a_key_other_than_ec_is_refused(index, sigstore, tmp_path, kind):
    dist = fresh_wheel(tmp_path)
    key = rsa.generate_private_key(65537, 2048) if kind == "rsa" else ed25519.Ed25519PrivateKey.generate()
    made = custom_leaf(sigstore, identity_of(index), key=key)
    leaf = Leaf(made.certificate, ec.generate_private_key(ec.SECP256R1()), made.identity)  # signs with another key
    attestation = sigstore.attest(dist, identity=identity_of(index), leaf=leaf)
    assert_refused(index, upload(index, mint(index), dist, [attestation]), dist, "key", "signature", "certificate")


def test_a_p384_leaf_verifies_or_is_refused_cleanly(index, sigstore, tmp_path):
    dist = fresh_wheel(tmp_path)
    leaf = custom_leaf(sigstore, identity_of(index), key=ec.generate_private_key(ec.SECP384R1()))
    attestation = sigstore.attest(dist, identity=identity_of(index), leaf=leaf)  # ECDSA with SHA-256, as sigstore
    answer = upload(index, mint(index), dist, [attestation])
    if answer.status_code == 201:
        assert_provenance(index, dist, [attestation], GITHUB_PUBLISHER)
    else:
        assert_refused(index, answer, dist, "signature", "key", "certificate")


def test_a_leaf_signed_by_the_root_itself_verifies_or_is_refused_cleanly(index, sigstore, tmp_path):
    """sigstore-python trusts every certificate of the chain as an anchor, so a leaf the root signs
    directly verifies there; refusing it is stricter and also fine. No 5xx, no half-stored file."""
    dist = fresh_wheel(tmp_path)
    leaf = custom_leaf(sigstore, identity_of(index), by_root=True)
    attestation = sigstore.attest(dist, identity=identity_of(index), leaf=leaf)
    answer = upload(index, mint(index), dist, [attestation])
    if answer.status_code == 201:
        assert_provenance(index, dist, [attestation], GITHUB_PUBLISHER)
    else:
        assert_refused(index, answer, dist, "certificate", "chain")


# ---- the trust root's validity windows -----------------------------------------------------------

def test_a_ca_whose_valid_for_ended_is_not_trusted(tmp_path, wheelhouse_bin, start_server, fresh_issuer, sigstore):
    root = sigstore.trust_root()
    ended = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    root["certificateAuthorities"][0]["validFor"]["end"] = rfc3339(ended)
    running = server_with_root(start_server, wheelhouse_bin, fresh_issuer, tmp_path, root)
    dist = fresh_wheel(tmp_path)
    answer = upload(running, mint(running), dist, [sigstore.attest(dist, identity=identity_of(running))])
    assert_refused(running, answer, dist, "certificate", "authority", "chain")
    # One signed while the CA was still valid is taken.
    early = fresh_wheel(tmp_path)
    attestation = sigstore.attest(early, identity=identity_of(running), signed_at=ended.timestamp() - 3600)
    answer = upload(running, mint(running), early, [attestation])
    assert answer.status_code == 201, refusal_text(answer)


def test_a_log_key_whose_valid_for_ended_is_not_trusted(tmp_path, wheelhouse_bin, start_server, fresh_issuer,
                                                        sigstore):
    root = sigstore.trust_root()
    ended = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    root["tlogs"][0]["publicKey"]["validFor"]["end"] = rfc3339(ended)
    running = server_with_root(start_server, wheelhouse_bin, fresh_issuer, tmp_path, root)
    dist = fresh_wheel(tmp_path)
    answer = upload(running, mint(running), dist, [sigstore.attest(dist, identity=identity_of(running))])
    assert_refused(running, answer, dist, "transparency", "log")
    # A log that starts in the future likewise.
    root = sigstore.trust_root()
    root["tlogs"][0]["publicKey"]["validFor"] = {"start": rfc3339(ended + datetime.timedelta(days=2))}
    later = tmp_path / "later"
    later.mkdir()
    running = server_with_root(start_server, wheelhouse_bin, fresh_issuer, later, root)
    answer = upload(running, mint(running), dist, [sigstore.attest(dist, identity=identity_of(running))])
    assert_refused(running, answer, dist, "transparency", "log")


# ---- the trust root file -------------------------------------------------------------------------

def _bad_roots(sigstore: TestSigstore) -> dict:
    good = sigstore.trust_root()

    def edited(change) -> bytes:
        document = json.loads(json.dumps(good))
        change(document)
        return json.dumps(document).encode()

    rsa_key = rsa.generate_private_key(65537, 2048).public_key()
    rsa_spki = spki_der(rsa_key)
    return {
        "empty": b"",
        "not JSON": b"{ nope",
        "a JSON list": b"[]",
        "not UTF-8": b'{"mediaType": "\xff"}',
        "over 1 MiB": b'{"x": "' + b"a" * (1 << 20) + b'"}',
        "deeply nested": b'{"a":' * 5000 + b"1" + b"}" * 5000,
        "a key twice": json.dumps(good)[:-1].encode() + b', "tlogs": []}',
        "no authorities": edited(lambda d: d.update(certificateAuthorities=[])),
        "no logs": edited(lambda d: d.update(tlogs=[])),
        "a certificate that is not DER": edited(lambda d: d["certificateAuthorities"][0]["certChain"]["certificates"]
                                                .append({"rawBytes": b64(b"\x30\x03\x02\x01\x01")})),
        "a log key that is RSA": edited(lambda d: d["tlogs"][0]["publicKey"].update(rawBytes=b64(rsa_spki))
                                        or d["tlogs"][0]["logId"].update(keyId=b64(hashlib.sha256(rsa_spki).digest()))),
        # (a keyId other than the key's SHA-256 is kept: Rekor v2 logs name theirs otherwise, and
        # an entry is checked with the key its keyId finds, so a wrong one only finds nothing)
        "an empty keyId": edited(lambda d: d["tlogs"][0]["logId"].update(keyId="")),
        "a time that is not RFC 3339": edited(lambda d: d["tlogs"][0]["publicKey"]["validFor"].update(
            start="yesterday")),
        "a month 13": edited(lambda d: d["certificateAuthorities"][0]["validFor"].update(start="2024-13-01T00:00:00Z")),
        "certificates not a list": edited(lambda d: d["certificateAuthorities"][0]["certChain"].update(
            certificates={"rawBytes": "AA=="})),
        "null authorities": edited(lambda d: d.update(certificateAuthorities=None)),
        "a huge fraction": edited(lambda d: d["certificateAuthorities"][0]["validFor"].update(
            start="2024-01-01T00:00:00." + "9" * 100 + "Z")),
    }


def test_a_bad_trust_root_stops_the_start_with_a_clear_message(tmp_path, wheelhouse_bin, sigstore):
    roots = _bad_roots(sigstore)
    roots_dir = tmp_path / "roots"
    roots_dir.mkdir()
    cases = {name: roots_dir / f"{index}.json" for index, name in enumerate(roots)}
    for name, path in cases.items():
        path.write_bytes(roots[name])
    cases["a directory"] = roots_dir
    cases["missing"] = tmp_path / "absent.json"
    for name, path in cases.items():
        data = tmp_path / f"data-{abs(hash(name))}"
        data.mkdir()
        result = subprocess.run([str(wheelhouse_bin), "serve", "--listen", "127.0.0.1:0", "--data", str(data),
                                 "--sigstore-trust-root", str(path)], capture_output=True, text=True, timeout=20)
        assert result.returncode == 2, f"{name}: exit {result.returncode}\n{result.stderr[-2000:]}"
        assert "sigstore-trust-root" in result.stderr or "trust root" in result.stderr.lower(), \
            f"{name}: {result.stderr[-2000:]}"
        assert "listening on" not in result.stderr, name


# ---- cost and fairness ---------------------------------------------------------------------------

def _server_seconds(index, field: str, repeats: int = 5) -> float:
    """The fastest of `repeats` refused uploads carrying `field`."""
    dist = fresh_wheel(index.data.parent)
    token = mint(index)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        answer = upload(index, token, dist, field=field)
        best = min(best, time.perf_counter() - started)
        assert answer.status_code == 400, refusal_text(answer)
    return best


@pytest.mark.parametrize("shape", ["many keys", "many attestations", "long strings", "many escapes"])
def test_the_fields_cost_is_linear_in_its_size(index, shape):
    def field(size: int) -> str:
        if shape == "many keys":
            n = size // 12
            return "[{" + ",".join(f'"k{i:08d}":1' for i in range(n)) + "}]"
        if shape == "many attestations":
            return "[" + ",".join(["{}"] * (size // 3)) + "]"
        if shape == "long strings":
            return '[{"version": 1, "x": "' + "a" * size + '"}]'
        return '[{"version": 2, "x": "' + "\\u00e9" * (size // 6) + '"}]'

    small = _server_seconds(index, field(60_000))
    large = _server_seconds(index, field(240_000))
    # Four times the bytes: linear is ~4x (plus a fixed cost); quadratic would be ~16x.
    print(f"{shape}: 60 KB {small * 1000:.1f} ms, 240 KB {large * 1000:.1f} ms")
    assert large < 8 * small + 0.05, f"{shape}: 60 KB {small * 1000:.1f} ms, 240 KB {large * 1000:.1f} ms"


def test_a_slow_attestations_field_holds_up_no_one_else(index, sigstore, tmp_path):
    dist = fresh_wheel(tmp_path)
    token = mint(index)
    boundary = uuid.uuid4().hex
    content = dist.read_bytes()
    name, version = name_and_version(dist.name)
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name=":action"\r\n\r\nfile_upload\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="protocol_version"\r\n\r\n1\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n{name}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n{version}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="{dist.name}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + (
            f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="attestations"\r\n\r\n').encode()
    field = json.dumps([sigstore.attest(dist, identity=identity_of(index))]).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    length = len(head) + len(field) + len(tail)
    auth = base64.b64encode(f"__token__:{token}".encode()).decode()
    host, port = urllib.parse.urlparse(index.url).hostname, urllib.parse.urlparse(index.url).port
    slow = [socket.create_connection((host, port), timeout=30) for _ in range(4)]
    try:
        for connection in slow:
            connection.sendall(f"POST /legacy/ HTTP/1.1\r\nHost: {host}\r\nAuthorization: Basic {auth}\r\n"
                               f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                               f"Content-Length: {length}\r\n\r\n".encode() + head + field[:10])
        # While four clients trickle their attestations, another uploads and reads.
        started = time.monotonic()
        for connection in slow:
            connection.sendall(field[10:20])
        other, attestations = attested_wheel(index, sigstore, tmp_path)
        assert_provenance(index, other, attestations, GITHUB_PUBLISHER)
        assert time.monotonic() - started < 5
        # The slow ones finish: the first is stored, the rest are identical re-uploads.
        for connection in slow:
            connection.sendall(field[20:] + tail)
        answers = []
        for connection in slow:
            answers.append(connection.recv(4096).split(b"\r\n", 1)[0])
        assert all(b" 20" in line for line in answers), answers
    finally:
        for connection in slow:
            connection.close()


# ---- what is served ------------------------------------------------------------------------------

def test_odd_filenames_links_resolve_from_both_pages(index, sigstore, tmp_path):
    """A build tag, a local version with dots, upper case, an sdist named with dots: the page links
    are escaped for HTML and percent-encoded for the URL, and lead to the provenance."""
    dists = [build_wheel(tmp_path, "Flash_Attn", f"1.0.{int(time.time() * 1000) % 10**9}+Cu130.Torch2.10",
                         build="7abc")]
    sdist_dir = tmp_path / "sdist"
    dists.append(fresh_sdist(sdist_dir, project="flash.attn"))
    for dist in dists:
        attestations = [sigstore.attest(dist, identity=identity_of(index))]
        answer = upload(index, mint(index), dist, attestations)
        assert answer.status_code == 201, f"{dist.name}: {refusal_text(answer)}"
        link = file_entry(index, dist.name)["provenance"]
        assert re.fullmatch(r"[A-Za-z0-9%._~/:\-]+", link), link
        attribute = re.search(r'data-provenance="([^"]*)"', anchor_attributes(index, dist.name))
        assert attribute and html.unescape(attribute[1]) == link
        answer = requests.get(urllib.parse.urljoin(index.url, link), timeout=10)
        assert answer.status_code == 200, f"{link}: {refusal_text(answer)}"
        assert answer.json()["attestation_bundles"][0]["attestations"] == attestations


def test_the_cached_page_shows_provenance_after_the_upload(index, sigstore, tmp_path):
    for accept in (SIMPLE_JSON, "text/html"):
        index.server.get(f"/simple/{PROJECT}/", {"Accept": accept}).read()  # rendered and cached
    dist, attestations = attested_wheel(index, sigstore, tmp_path)
    assert_provenance(index, dist, attestations, GITHUB_PUBLISHER)


def test_a_deleted_file_takes_its_provenance_and_a_reupload_has_only_its_own(index, sigstore, tmp_path):
    admin = make_token(index.binary, index.data, f"admin-{uuid.uuid4().hex[:6]}", "--scope", "admin")
    dist, attestations = attested_wheel(index, sigstore, tmp_path)
    path = integrity_path(dist.name)

    def delete():
        answer = requests.delete(f"{index.url}api/v1/files/{dist.name}", auth=("__token__", admin), timeout=10)
        assert answer.status_code == 200, refusal_text(answer)

    delete()
    assert provenance_of(index, path).status_code == 404
    with sqlite3.connect(index.data / "catalog.db") as db:
        orphans = db.execute("SELECT count(*) FROM file_provenance WHERE file_id NOT IN (SELECT id FROM files)")
        assert orphans.fetchone()[0] == 0
    # Re-uploaded without attestations (the row may take the deleted one's id): none served.
    assert upload(index, mint(index), dist).status_code == 201
    assert_no_provenance(index, dist)
    # Deleted again and re-uploaded with other attestations: those, not the first.
    delete()
    slsa = [sigstore.attest(dist, identity=identity_of(index), predicate_type=SLSA_PROVENANCE_V1)]
    answer = upload(index, mint(index), dist, slsa)
    assert answer.status_code == 201, refusal_text(answer)
    assert_provenance(index, dist, slsa, GITHUB_PUBLISHER)


def test_an_identical_reupload_with_other_attestations_changes_nothing(index, sigstore, tmp_path):
    dist, attestations = attested_wheel(index, sigstore, tmp_path)
    slsa = [sigstore.attest(dist, identity=identity_of(index), predicate_type=SLSA_PROVENANCE_V1)]
    again = upload(index, mint(index), dist, slsa)
    assert again.status_code in (200, 201, 400, 409), refusal_text(again)
    broken = [sigstore.attest(dist, identity=identity_of(index), subject_digest="ab" * 32)]
    refused = upload(index, mint(index), dist, broken)
    assert refused.status_code == 400, refusal_text(refused)
    # The file and its first provenance stand.
    assert listed(index, dist.name)
    assert_provenance(index, dist, attestations, GITHUB_PUBLISHER)


def test_backup_restore_and_export_keep_working_with_attested_files(index, sigstore, tmp_path, wheelhouse_bin,
                                                                    start_server):
    dist, attestations = attested_wheel(index, sigstore, tmp_path)
    backup = tmp_path / "backup"
    made = subprocess.run([str(wheelhouse_bin), "backup", "--data", str(index.data), "--blobs", str(backup)],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    restored = tmp_path / "restored"
    done = subprocess.run([str(wheelhouse_bin), "restore", "--data", str(restored), str(backup)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    server = start_server(restored, "--sigstore-trust-root", str(sigstore.trust_root_path))
    copy = Index(server, restored, "http", index.issuer, wheelhouse_bin)
    assert_provenance(copy, dist, attestations, GITHUB_PUBLISHER)

    out = tmp_path / "site"
    exported = subprocess.run([str(wheelhouse_bin), "export", "--data", str(restored), "--out", str(out),
                               "--base-url", "/"], capture_output=True, text=True, timeout=60)
    assert exported.returncode == 0, exported.stderr
    pages = "\n".join(path.read_text(errors="replace") for path in out.rglob("*")
                      if path.is_file() and "simple" in path.parts and not path.name.endswith((".whl", ".gz")))
    assert dist.name in pages
    # A static site has no integrity API: no link to one that would 404.
    assert "/integrity/" not in pages
