"""A test-only stand-in for Sigstore (Fulcio and Rekor) that makes PEP 740 attestations byte for
byte as the real tools do, offline, with python3-cryptography (Debian 12's, 38) and the standard
library alone.

  TestSigstore         a root CA and an intermediate CA as Fulcio's (P-384, the same names), a Rekor
                       log (a P-256 key, a small Merkle tree, signed checkpoints), write_trust_root()
                       for a Sigstore trusted_root.json, leaf() for Fulcio-like signing certificates
                       and attest() for PEP 740 attestation objects, with keyword arguments that break
                       one part at a time for the hostile tests
  github(), gitlab()   the identity a CI job's certificate names (an Identity)
  verify_attestation() what an index must check, written out with cryptography (the self-check at
                       the bottom runs it on a good attestation and on every breakage)

What was confirmed against the real sources (read with the search tools; commits as crawled):

* The attestation object: trailofbits/pypi-attestations src/pypi_attestations/_impl.py (v0.0.27,
  b70ff03): {"version": 1, "verification_material": {"certificate": base64(DER), "transparency_entries":
  [LogEntry._to_rekor().to_dict()]}, "envelope": {"statement": base64(statement bytes), "signature":
  base64(DER ECDSA)}}; base64 without newlines (Base64EncoderSansNewline); the DSSE payload type is
  not sent: Attestation.to_bundle() always rebuilds the envelope as "application/vnd.in-toto+json".
  Attestation.sign() builds the statement with sigstore's StatementBuilder and no predicate, so a
  publish attestation's statement ends "predicate":null, as the real assets in its test/assets/ show
  (pypi_attestations-0.0.19.tar.gz.publish.attestation, gitlab_oidc_project-0.0.3.tar.gz.publish.
  attestation); the statement is pydantic's compact JSON, keys _type, subject, predicateType, predicate.
* The transparency entry: sigstore/sigstore-python v3.6.7 (what pypi-attestations pins, sigstore
  >= 3.5.3, < 3.7) sigstore/models.py LogEntry._to_rekor(): a protobuf-specs TransparencyLogEntry
  whose to_dict() is camelCase with int64s as strings, bytes as base64, fields in proto order
  (logIndex, logId{keyId}, kindVersion{kind, version}, integratedTime, inclusionPromise
  {signedEntryTimestamp}, inclusionProof{logIndex, rootHash, treeSize, hashes, checkpoint{envelope}},
  canonicalizedBody); default values are left out, so an inclusion proof at index 0 would lose its
  logIndex (this log never puts an entry at 0). The entry's logIndex is the global one; the inclusion
  proof's is the shard's (the real assets: 153454663 against 31550401).
* The SET: LogEntry.encode_canonical() is rfc8785.dumps({"body": <canonicalizedBody, base64>,
  "integratedTime": <int>, "logID": <keyId, hex>, "logIndex": <int, the entry's>}), and _verify_set()
  verifies it with the tlog key whose keyId is the entry's logId (ECDSA P-256, SHA-256). For these
  four ASCII values RFC 8785 is json.dumps(sort_keys=True, separators=(",", ":")): this was confirmed
  by verifying the SETs of the three real attestations above against the production Rekor key of
  sigstore-python's trusted_root.json with exactly that encoding (and their checkpoints and Merkle
  inclusion proofs with the algorithms of sigstore/_internal/merkle.py and rekor/checkpoint.py).
  sigstore-python 3.6 requires an inclusion proof with a checkpoint (_from_dict_rekor raises
  "entry must contain inclusion proof, with checkpoint"), so every entry here carries a real one.
* The log id: keyId = sha256(DER SubjectPublicKeyInfo) (checked on the production trusted_root.json).
* The entry body: Rekor dsse 0.0.1, compact, {"apiVersion":"0.0.1","kind":"dsse","spec":
  {"envelopeHash":{...},"payloadHash":{...},"signatures":[{"signature": base64 sig,"verifier":
  base64(PEM certificate)}]}} (sigstore/verify/verifier.py verify_dsse() compares payloadHash with
  sha256(statement) and signatures with [{signature, base64_encode_pem_cert(leaf)}]; it cannot check
  envelopeHash). envelopeHash is sha256 of the envelope JSON as sigstore-python submits it
  (betterproto Envelope.to_json(): {"payload": .., "payloadType": .., "signatures": [{"sig": ..}]}
  with json.dumps' default ", " and ": " separators): reproduced for the real asset above.
* DSSE: sigstore/dsse/__init__.py _pae(): b"DSSEv1 " + len(type) + " " + type + " " + len(body) + " " +
  body; _sign()/_verify(): ECDSA P-256 with SHA-256 over the PAE, exactly one signature.
* The certificates: sigstore/fulcio docs/oid-info.md for 1.3.6.1.4.1.57264.1.*; .1.8 to .1.22 are DER
  UTF8Strings, .1.1 to .1.6 raw bytes. sigstore/fulcio config/identity/config.yaml: GitHub's URIs
  are "https://github.com" + "/" + repository (+ "/" + workflow path "@" ref); GitLab's Build
  Config/Signer URI and SAN are "https://" + ci_config_ref_uri (https://gitlab.com/GROUP/PROJECT//
  .gitlab-ci.yml@refs/heads/main), but its Source Repository (Owner) URI and Run Invocation URI use
  the template default url, https://gitlab.com, for every GitLab issuer (self-managed ones too:
  GitLab tokens have no "url" claim); Identity.config_host models the instance's host. The
  profile (empty subject, critical SAN URI and KeyUsage digitalSignature, EKU codeSigning, SKI, AKI, signed with
  ecdsa-with-SHA384 by "CN=sigstore-intermediate,O=sigstore.dev", 10 minutes of validity; the
  intermediate with EKU codeSigning and pathlen 0 under "CN=sigstore,O=sigstore.dev" with pathlen 1)
  is copied from the real leaf in those assets and the production trusted_root.json, whose layout
  (mediaType, tlogs, certificateAuthorities with certChain leaf-most first, ctlogs,
  timestampAuthorities) write_trust_root() follows.

What differs from real Sigstore, on purpose: the leaf carries no SCT (the trust root lists no CT
logs), so sigstore-python itself would refuse these attestations at "failed to verify SCT"; the
index being tested does not check SCTs. Everything else verifies as sigstore-python verifies it.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import hashlib
import json
import os
import pathlib
import re
import secrets
import time
from typing import Any, Iterable, Sequence

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PUBLISH_V1 = "https://docs.pypi.org/attestations/publish/v1"
SLSA_PROVENANCE_V1 = "https://slsa.dev/provenance/v1"
PREDICATE_TYPES = (PUBLISH_V1, SLSA_PROVENANCE_V1)
IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
GITHUB_SERVER = "https://github.com"
GITLAB_ISSUER = "https://gitlab.com"
GITLAB_SERVER = "https://gitlab.com"
TRUST_ROOT_MEDIA_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
DEFAULT_SHA = "4f1e0c2b9d8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e"
LEAF_LIFETIME = datetime.timedelta(minutes=10)

# The Fulcio extensions by the names this module uses (docs/oid-info.md).
FULCIO_OIDS = {
    "issuer_v1": "1.3.6.1.4.1.57264.1.1",  # deprecated: raw bytes, not a DER string
    "workflow_trigger_v1": "1.3.6.1.4.1.57264.1.2",
    "workflow_sha_v1": "1.3.6.1.4.1.57264.1.3",
    "workflow_name_v1": "1.3.6.1.4.1.57264.1.4",
    "workflow_repository_v1": "1.3.6.1.4.1.57264.1.5",
    "workflow_ref_v1": "1.3.6.1.4.1.57264.1.6",
    "issuer": "1.3.6.1.4.1.57264.1.8",
    "build_signer_uri": "1.3.6.1.4.1.57264.1.9",
    "build_signer_digest": "1.3.6.1.4.1.57264.1.10",
    "runner_environment": "1.3.6.1.4.1.57264.1.11",
    "source_repository_uri": "1.3.6.1.4.1.57264.1.12",
    "source_repository_digest": "1.3.6.1.4.1.57264.1.13",
    "source_repository_ref": "1.3.6.1.4.1.57264.1.14",
    "source_repository_id": "1.3.6.1.4.1.57264.1.15",
    "owner_uri": "1.3.6.1.4.1.57264.1.16",
    "owner_id": "1.3.6.1.4.1.57264.1.17",
    "build_config_uri": "1.3.6.1.4.1.57264.1.18",
    "build_config_digest": "1.3.6.1.4.1.57264.1.19",
    "build_trigger": "1.3.6.1.4.1.57264.1.20",
    "run_invocation_uri": "1.3.6.1.4.1.57264.1.21",
    "source_repository_visibility": "1.3.6.1.4.1.57264.1.22",
    "deployment_environment": "1.3.6.1.4.1.57264.1.23",
}
RAW_EXTENSIONS = {"issuer_v1", "workflow_trigger_v1", "workflow_sha_v1", "workflow_name_v1",
                  "workflow_repository_v1", "workflow_ref_v1"}


# ---- encodings -------------------------------------------------------------------------------------

def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def der_utf8_string(text: str) -> bytes:
    """A DER UTF8String (tag 12), as Fulcio writes extensions .1.8 onwards."""
    raw = text.encode()
    if len(raw) < 0x80:
        length = bytes([len(raw)])
    else:
        size = len(raw).to_bytes((len(raw).bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(size)]) + size
    return b"\x0c" + length + raw


def parse_der_utf8_string(der: bytes) -> str:
    if len(der) < 2 or der[0] != 0x0C:
        raise ValueError("not a DER UTF8String")
    length, offset = der[1], 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or len(der) < 2 + count:
            raise ValueError("bad DER length")
        length = int.from_bytes(der[2:2 + count], "big")
        if length < 0x80 or der[2] == 0:
            raise ValueError("DER length not minimal")
        offset = 2 + count
    if offset + length != len(der):
        raise ValueError("DER length does not match the value")
    return der[offset:].decode()


def canonical_json(value: Any) -> bytes:
    """RFC 8785 for what this module signs (ASCII strings and integers): sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE's pre-authentication encoding (sigstore/dsse/__init__.py _pae)."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def spki_der(key) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def certificate_pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def certificate_der(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.DER)


def valid_from(certificate: x509.Certificate) -> datetime.datetime:
    moment = getattr(certificate, "not_valid_before_utc", None)
    return moment or certificate.not_valid_before.replace(tzinfo=datetime.timezone.utc)


def valid_until(certificate: x509.Certificate) -> datetime.datetime:
    moment = getattr(certificate, "not_valid_after_utc", None)
    return moment or certificate.not_valid_after.replace(tzinfo=datetime.timezone.utc)


# ---- distribution filenames ------------------------------------------------------------------------

_WHEEL = re.compile(r"^(?P<name>[^\s-]+?)-(?P<version>[^\s-]+?)(-(?P<build>\d[^-]*))?"
                    r"-(?P<python>[^\s-]+?)-(?P<abi>[^\s-]+?)-(?P<platform>[^\s-]+?)\.whl$")
_SDIST = re.compile(r"^(?P<name>.+)-(?P<version>[^-]+)\.(?P<ext>tar\.gz|zip)$")


def _normalize_version(version: str) -> str:
    """Enough of PEP 440 normalization for the tests' versions: lower case, a leading 'v' dropped,
    the local label's separators as dots."""
    version = version.lower().lstrip("v")
    public, plus, local = version.partition("+")
    if plus:
        public += "+" + re.sub(r"[-_]", ".", local)
    return public


def ultranormalize(filename: str) -> str:
    """pypi-attestations' _ultranormalize_dist_filename (v0.0.19 onwards): the name normalized to
    underscores, the version normalized, compressed tag sets sorted. (v0.0.27 compares the parsed
    name, version, build and tag set instead, which is the same relation.)"""
    wheel = _WHEEL.match(filename)
    if wheel:
        name = re.sub(r"[-_.]+", "_", wheel["name"]).lower()
        tags = ["-".join(".".join(sorted(set(wheel[part].split(".")))) for part in ("python", "abi", "platform"))]
        build = [wheel["build"]] if wheel["build"] else []
        return "-".join([name, _normalize_version(wheel["version"]), *build, *tags]) + ".whl"
    sdist = _SDIST.match(filename)
    if sdist:
        name = re.sub(r"[-_.]+", "_", sdist["name"]).lower()
        return f"{name}-{_normalize_version(sdist['version'])}.{sdist['ext']}"
    raise ValueError(f"unknown distribution format: {filename}")


# ---- identities ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Identity:
    """The CI job a leaf certificate is issued to, as Fulcio maps its token's claims."""

    kind: str = "github"                       # "github" or "gitlab"
    repository: str = "Dao-AILab/flash-attention"  # OWNER/REPO, GitLab GROUP/…/PROJECT
    owner_id: str = "77001"                    # repository_owner_id, GitLab namespace_id
    workflow: str = ".github/workflows/release.yml"  # the workflow's path in the repository
    ref: str = "refs/heads/main"
    sha: str = DEFAULT_SHA
    issuer: str | None = None                  # default: GitHub's or GitLab's
    server: str | None = None                  # default: https://github.com or https://gitlab.com
    config_host: str | None = None             # GitLab: the host in the token's ci_config_ref_uri
    repository_id: str = "90210"
    environment: str | None = None
    build_config_at: str = "ref"               # "ref", "sha", or the literal suffix after '@'
    event: str = "push"
    run_id: str = "12169989787"
    visibility: str = "public"

    @property
    def issuer_url(self) -> str:
        return self.issuer or (GITLAB_ISSUER if self.kind == "gitlab" else GITHUB_ISSUER)

    @property
    def server_url(self) -> str:
        return (self.server or (GITLAB_SERVER if self.kind == "gitlab" else GITHUB_SERVER)).rstrip("/")

    @property
    def owner(self) -> str:
        return self.repository.rsplit("/", 1)[0]

    @property
    def workflow_path(self) -> str:
        if self.kind == "github" and "/" not in self.workflow:
            return ".github/workflows/" + self.workflow
        return self.workflow

    @property
    def source_repository_uri(self) -> str:
        return f"{self.server_url}/{self.repository}"

    @property
    def build_config_uri(self) -> str:
        """GitHub: url + "/" + workflow_ref. GitLab: "https://" + ci_config_ref_uri, whose host is the
        instance's (config_host), while the other URIs use Fulcio's default url, https://gitlab.com,
        for every GitLab issuer (config/identity/config.yaml: GitLab tokens carry no "url" claim)."""
        suffix = {"ref": self.ref, "sha": self.sha}.get(self.build_config_at, self.build_config_at)
        if self.kind == "gitlab":
            base = f"https://{self.config_host}/{self.repository}" if self.config_host else self.source_repository_uri
            return f"{base}//{self.workflow_path}@{suffix}"
        return f"{self.source_repository_uri}/{self.workflow_path}@{suffix}"

    @property
    def build_signer_uri(self) -> str:
        return self.build_config_uri  # no reusable workflow: the signer is the config

    def extensions(self) -> dict[str, str]:
        """The Fulcio extensions a real certificate for this job carries, by name, in OID order."""
        gitlab = self.kind == "gitlab"
        values: dict[str, str] = {"issuer_v1": self.issuer_url}
        if not gitlab:
            values.update({
                "workflow_trigger_v1": self.event, "workflow_sha_v1": self.sha,
                "workflow_name_v1": pathlib.PurePosixPath(self.workflow_path).stem,
                "workflow_repository_v1": self.repository, "workflow_ref_v1": self.ref,
            })
        run = (f"{self.source_repository_uri}/-/jobs/{self.run_id}" if gitlab
               else f"{self.source_repository_uri}/actions/runs/{self.run_id}/attempts/1")
        values.update({
            "issuer": self.issuer_url,
            "build_signer_uri": self.build_signer_uri,
            "build_signer_digest": self.sha,
            "runner_environment": "gitlab-hosted" if gitlab else "github-hosted",
            "source_repository_uri": self.source_repository_uri,
            "source_repository_digest": self.sha,
            "source_repository_ref": self.ref,
            "source_repository_id": self.repository_id,
            "owner_uri": f"{self.server_url}/{self.owner}",
            "owner_id": self.owner_id,
            "build_config_uri": self.build_config_uri,
            "build_config_digest": self.sha,
            "build_trigger": self.event,
            "run_invocation_uri": run,
            "source_repository_visibility": self.visibility,
        })
        if self.environment:
            values["deployment_environment"] = self.environment
        return values


def github(repository: str = "Dao-AILab/flash-attention", owner_id: str = "77001", workflow: str = "release.yml",
           **fields) -> Identity:
    """A GitHub Actions job; `workflow` is a file under .github/workflows/ or a path."""
    return Identity(kind="github", repository=repository, owner_id=owner_id, workflow=workflow, **fields)


def gitlab(repository: str = "ml/kernels/nunchaku", owner_id: str = "4242", workflow: str = ".gitlab-ci.yml",
           **fields) -> Identity:
    """A GitLab CI job (gitlab.com unless `issuer` and `server` say otherwise)."""
    return Identity(kind="gitlab", repository=repository, owner_id=owner_id, workflow=workflow, **fields)


def publisher_of(identity: Identity) -> dict:
    """What an index knows of the trusted publisher this identity is (for verify_attestation)."""
    config_base = (f"https://{identity.config_host}/{identity.repository}" if identity.config_host
                   else identity.source_repository_uri)
    return {"kind": identity.kind, "issuer": identity.issuer_url, "repository": identity.repository,
            "owner_id": identity.owner_id, "workflow": identity.workflow_path, "server": identity.server_url,
            "build_config_base": config_base}


# ---- the log -----------------------------------------------------------------------------------

def _leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def _node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two smaller than size (RFC 6962 section 2.1)."""
    return 1 << ((size - 1).bit_length() - 1)


def merkle_root(leaves: Sequence[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return _node_hash(merkle_root(leaves[:k]), merkle_root(leaves[k:]))


def inclusion_path(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """RFC 6962 PATH(m, D[n]), lowest level first, as Rekor returns it."""
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return inclusion_path(index, leaves[:k]) + [merkle_root(leaves[k:])]
    return inclusion_path(index - k, leaves[k:]) + [merkle_root(leaves[:k])]


def root_from_inclusion_proof(body: bytes, index: int, size: int, hashes_: Sequence[bytes]) -> bytes:
    """sigstore/_internal/merkle.py verify_merkle_inclusion, returning the root it computes."""
    if not 0 <= index < size:
        raise ValueError("inclusion proof index outside the tree")
    inner = (index ^ (size - 1)).bit_length()
    border = bin(index >> inner).count("1")
    if len(hashes_) != inner + border:
        raise ValueError(f"inclusion proof has {len(hashes_)} hashes, expected {inner + border}")
    seed = _leaf_hash(body)
    for level, sibling in enumerate(hashes_[:inner]):
        seed = _node_hash(seed, sibling) if (index >> level) & 1 == 0 else _node_hash(sibling, seed)
    for sibling in hashes_[inner:]:
        seed = _node_hash(sibling, seed)
    return seed


class RekorLog:
    """One Rekor shard: a P-256 key, a Merkle tree of entries, signed checkpoints."""

    def __init__(self, origin: str = "rekor.sigstore.dev", base_url: str = "https://rekor.sigstore.dev",
                 valid_from: datetime.datetime | None = None):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.spki = spki_der(self.key.public_key())
        self.key_id = hashlib.sha256(self.spki).digest()
        self.origin = origin
        self.base_url = base_url
        self.tree_id = 1193050959916656506 + secrets.randbelow(10**6)
        self.shard_offset = 121904261  # the entries' global log index = offset + index in this shard
        self.valid_from = valid_from or datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)
        # Other people's entries first, so no entry of ours sits at index 0 (to_dict() would drop it).
        self.leaves: list[bytes] = [_leaf_hash(os.urandom(64)) for _ in range(5)]

    def trust_root_entry(self) -> dict:
        return {"baseUrl": self.base_url, "hashAlgorithm": "SHA2_256",
                "publicKey": {"rawBytes": b64(self.spki), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                              "validFor": {"start": rfc3339(self.valid_from)}},
                "logId": {"keyId": b64(self.key_id)}}

    def checkpoint(self, size: int, root: bytes, key=None) -> str:
        """A signed note as Rekor writes it: origin, size, root; "— name base64(key hint + signature)"."""
        note = f"{self.origin} - {self.tree_id}\n{size}\n{b64(root)}\n"
        signature = (key or self.key).sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        return note + "\n" + f"\u2014 {self.origin} {b64(self.key_id[:4] + signature)}\n"

    def integrate(self, body: bytes, integrated_time: int, *, set_key=None, set_fields: dict | None = None,
                  kind_version: dict | None = None, inclusion_proof: bool = True) -> dict:
        """Appends `body`; returns the entry as LogEntry._to_rekor().to_dict() gives it."""
        self.leaves.append(_leaf_hash(body))
        index = len(self.leaves) - 1
        size = len(self.leaves)
        log_index = self.shard_offset + index
        signed = {"body": b64(body), "integratedTime": integrated_time, "logID": self.key_id.hex(),
                  "logIndex": log_index}
        signed.update(set_fields or {})
        signed_entry_timestamp = (set_key or self.key).sign(canonical_json(signed), ec.ECDSA(hashes.SHA256()))
        entry = {
            "logIndex": str(log_index),
            "logId": {"keyId": b64(self.key_id)},
            "kindVersion": kind_version or {"kind": "dsse", "version": "0.0.1"},
            "integratedTime": str(integrated_time),
            "inclusionPromise": {"signedEntryTimestamp": b64(signed_entry_timestamp)},
        }
        if inclusion_proof:
            root = merkle_root(self.leaves)
            entry["inclusionProof"] = {
                "logIndex": str(index), "rootHash": b64(root), "treeSize": str(size),
                "hashes": [b64(h) for h in inclusion_path(index, self.leaves)],
                "checkpoint": {"envelope": self.checkpoint(size, root)},
            }
        entry["canonicalizedBody"] = b64(body)
        return entry


def rekor_dsse_body(statement: bytes, signature: bytes, certificate: x509.Certificate,
                    payload_type: str = IN_TOTO_PAYLOAD_TYPE) -> bytes:
    """The canonicalized body Rekor stores for a dsse 0.0.1 entry, byte for byte."""
    envelope = json.dumps({"payload": b64(statement), "payloadType": payload_type,
                           "signatures": [{"sig": b64(signature)}]})  # betterproto to_json(), as submitted
    body = {"apiVersion": "0.0.1", "kind": "dsse", "spec": {
        "envelopeHash": {"algorithm": "sha256", "value": hashlib.sha256(envelope.encode()).hexdigest()},
        "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(statement).hexdigest()},
        "signatures": [{"signature": b64(signature), "verifier": b64(certificate_pem(certificate))}],
    }}
    return json.dumps(body, separators=(",", ":")).encode()


# ---- statements --------------------------------------------------------------------------------

def slsa_predicate(identity: Identity) -> dict:
    """A small SLSA v1 provenance predicate, shaped as GitHub's attest-build-provenance writes it."""
    return {
        "buildDefinition": {
            "buildType": "https://actions.github.io/buildtypes/workflow/v1",
            "externalParameters": {"workflow": {"ref": identity.ref, "repository": identity.source_repository_uri,
                                                "path": identity.workflow_path}},
            "internalParameters": {"github": {"event_name": identity.event, "repository_id": identity.repository_id,
                                              "repository_owner_id": identity.owner_id,
                                              "runner_environment": "github-hosted"}},
            "resolvedDependencies": [{"uri": f"git+{identity.source_repository_uri}@{identity.ref}",
                                      "digest": {"gitCommit": identity.sha}}],
        },
        "runDetails": {"builder": {"id": identity.build_signer_uri},
                       "metadata": {"invocationId": f"{identity.source_repository_uri}/actions/runs/{identity.run_id}"
                                                    "/attempts/1"}},
    }


_DEFAULT = object()


def statement_bytes(subjects: list[dict], predicate_type: str, predicate: Any) -> bytes:
    """pydantic's model_dump_json of sigstore's _Statement: compact, keys in this order."""
    statement = {"_type": STATEMENT_TYPE, "subject": subjects, "predicateType": predicate_type, "predicate": predicate}
    return json.dumps(statement, separators=(",", ":"), ensure_ascii=False).encode()


# ---- Fulcio and the attestation ------------------------------------------------------------------

@dataclasses.dataclass
class Leaf:
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey
    identity: Identity

    @property
    def der(self) -> bytes:
        return certificate_der(self.certificate)

    @property
    def not_before(self) -> datetime.datetime:
        return valid_from(self.certificate)

    @property
    def not_after(self) -> datetime.datetime:
        return valid_until(self.certificate)


def _name(common_name: str, organization: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class TestSigstore:
    """A Fulcio (root and intermediate CA) and a Rekor log of one's own. Two instances share the
    real names ("CN=sigstore,O=sigstore.dev"), so a certificate from another instance differs only
    in the keys that signed it."""

    __test__ = False  # a helper, not a pytest test class

    def __init__(self, common_name: str = "sigstore", organization: str = "sigstore.dev",
                 fulcio_url: str = "https://fulcio.sigstore.dev", log_origin: str = "rekor.sigstore.dev"):
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        self.created = now - datetime.timedelta(days=1)
        self.fulcio_url = fulcio_url
        self.organization = organization
        ca_usage = x509.KeyUsage(False, False, False, False, False, True, True, False, False)  # certSign, cRLSign
        self.root_key = ec.generate_private_key(ec.SECP384R1())
        root_name = _name(common_name, organization)
        root_ski = x509.SubjectKeyIdentifier.from_public_key(self.root_key.public_key())
        self.root = (x509.CertificateBuilder()
                     .subject_name(root_name).issuer_name(root_name)
                     .public_key(self.root_key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(self.created).not_valid_after(self.created + datetime.timedelta(days=3650))
                     .add_extension(ca_usage, True)
                     .add_extension(x509.BasicConstraints(ca=True, path_length=1), True)
                     .add_extension(root_ski, False)
                     .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(root_ski), False)
                     .sign(self.root_key, hashes.SHA384()))
        self.intermediate_key = ec.generate_private_key(ec.SECP384R1())
        intermediate_ski = x509.SubjectKeyIdentifier.from_public_key(self.intermediate_key.public_key())
        self.intermediate = (x509.CertificateBuilder()
                             .subject_name(_name(common_name + "-intermediate", organization)).issuer_name(root_name)
                             .public_key(self.intermediate_key.public_key()).serial_number(x509.random_serial_number())
                             .not_valid_before(self.created)
                             .not_valid_after(self.created + datetime.timedelta(days=3000))
                             .add_extension(ca_usage, True)
                             .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False)
                             .add_extension(x509.BasicConstraints(ca=True, path_length=0), True)
                             .add_extension(intermediate_ski, False)
                             .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(root_ski),
                                            False)
                             .sign(self.root_key, hashes.SHA384()))
        self.log = RekorLog(origin=log_origin, valid_from=self.created)

    # ---- the trust root ----

    def certificate_authority(self) -> dict:
        return {"subject": {"organization": self.organization, "commonName": self.root.subject.get_attributes_for_oid(
                    NameOID.COMMON_NAME)[0].value},
                "uri": self.fulcio_url,
                "certChain": {"certificates": [{"rawBytes": b64(certificate_der(self.intermediate))},
                                               {"rawBytes": b64(certificate_der(self.root))}]},
                "validFor": {"start": rfc3339(self.created)}}

    def trust_root(self, also_trust: Iterable["TestSigstore"] = (), logs: Iterable[RekorLog] | None = None,
                   include_ca: bool = True) -> dict:
        """The trusted_root.json document: this CA and log, and those of `also_trust`."""
        instances = [self, *also_trust]
        chosen_logs = list(logs) if logs is not None else [instance.log for instance in instances]
        return {"mediaType": TRUST_ROOT_MEDIA_TYPE,
                "tlogs": [log.trust_root_entry() for log in chosen_logs],
                "certificateAuthorities": ([instance.certificate_authority() for instance in instances]
                                           if include_ca else []),
                "ctlogs": [],
                "timestampAuthorities": []}

    def write_trust_root(self, path: str | os.PathLike, **options) -> pathlib.Path:
        path = pathlib.Path(path)
        path.write_text(json.dumps(self.trust_root(**options), indent=2) + "\n")
        return path

    # ---- Fulcio ----

    def leaf(self, identity: Identity | None = None, *, key: ec.EllipticCurvePrivateKey | None = None,
             not_before: datetime.datetime | float | None = None, lifetime: datetime.timedelta = LEAF_LIFETIME,
             omit: Iterable[str] = (), overrides: dict[str, str] | None = None, code_signing: bool = True,
             digital_signature: bool = True, ca: bool = False, issued_by: "TestSigstore | None" = None,
             san_uri: str | None = None) -> Leaf:
        """A Fulcio-like signing certificate for `identity`, on an ephemeral P-256 key, valid for ten
        minutes from a minute ago. Breakage: `omit` leaves extensions out (by FULCIO_OIDS name),
        `overrides` replaces their values, `issued_by` has another stand-in's intermediate sign it,
        `code_signing`/`digital_signature` False drop those usages, `ca` makes it a CA."""
        identity = identity or github()
        key = key or ec.generate_private_key(ec.SECP256R1())
        if not_before is None:
            start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1)
        elif isinstance(not_before, datetime.datetime):
            start = not_before
        else:
            start = datetime.datetime.fromtimestamp(not_before, datetime.timezone.utc)
        start = start.replace(microsecond=0)
        signer = issued_by or self
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([])).issuer_name(signer.intermediate.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(start).not_valid_after(start + lifetime)
                   .add_extension(x509.KeyUsage(digital_signature, False, False, False, False, ca, False, False, False),
                                  True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING] if code_signing
                                                        else [ExtendedKeyUsageOID.EMAIL_PROTECTION]), False)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                       signer.intermediate_key.public_key()), False)
                   .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(
                       san_uri or identity.build_signer_uri)]), True))
        if ca:
            builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        values = identity.extensions()
        values.update(overrides or {})
        for name in omit:
            values.pop(name, None)
        for name in sorted(values, key=lambda n: [int(p) for p in FULCIO_OIDS[n].split(".")]):
            raw = values[name].encode() if name in RAW_EXTENSIONS else der_utf8_string(values[name])
            builder = builder.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier(FULCIO_OIDS[name]), raw),
                                            False)
        certificate = builder.sign(signer.intermediate_key, hashes.SHA384())
        return Leaf(certificate, key, identity)

    # ---- an attestation ----

    def attest(self, distribution: str | os.PathLike | bytes, filename: str | None = None,
               identity: Identity | None = None, predicate_type: str = PUBLISH_V1, *,
               leaf: Leaf | None = None,
               signed_at: float | None = None,
               sign_with: ec.EllipticCurvePrivateKey | None = None,
               payload_type: str = IN_TOTO_PAYLOAD_TYPE,
               subject_name: str | None = None,
               subject_digest: str | None = None,
               subjects: list | None = None,
               predicate: Any = _DEFAULT,
               statement: bytes | None = None,
               integrated_time: int | None = None,
               log: RekorLog | None = None,
               set_signed_by: ec.EllipticCurvePrivateKey | None = None,
               set_fields: dict | None = None,
               kind_version: dict | None = None,
               body_statement: bytes | None = None,
               body_certificate: x509.Certificate | None = None,
               body_signature: bytes | None = None,
               entries: int = 1,
               inclusion_proof: bool = True,
               certificate: bytes | None = None) -> dict:
        """The PEP 740 attestation a CI job with `identity` would upload for `distribution` (a path,
        whose name is the filename unless `filename` says, or bytes with `filename`).

        Each keyword breaks one part and leaves the rest coherent:
          leaf              a leaf made by leaf() (another CA's, expired, an extension missing …)
          signed_at         a UNIX time: the leaf's validity and the entry's integratedTime around it
          sign_with         the DSSE signature made with this key, not the leaf's
          payload_type      the DSSE signature made over PAE(payload_type, …) (the index uses in-toto's)
          subject_name, subject_digest, subjects, predicate, statement
                            the statement's subject name, sha256, whole subject list, predicate, or all
                            its bytes
          integrated_time   the entry's integratedTime (what the log signed, too)
          log               another RekorLog integrates it (a logId the trust root may not know)
          set_signed_by     the SET signed by this key instead of the log's
          set_fields        the SET signed over these fields instead ({"logIndex": …}, …)
          kind_version      the entry's kindVersion
          body_statement, body_certificate, body_signature
                            the Rekor body names another statement (its payloadHash), certificate
                            (verifier) or signature; the log signs that body honestly
          entries           how many transparency entries (0, 1 or 2: integrated twice)
          inclusion_proof   False leaves the inclusion proof out (the SET remains)
          certificate       the verification material's certificate bytes (DER), instead of the leaf's
        """
        if isinstance(distribution, (bytes, bytearray)):
            content = bytes(distribution)
            if filename is None:
                raise TypeError("attest(bytes) needs a filename")
        else:
            content = pathlib.Path(distribution).read_bytes()
            filename = filename or pathlib.Path(distribution).name
        identity = identity or (leaf.identity if leaf else github())
        now = time.time() if signed_at is None else signed_at
        if leaf is None:
            leaf = self.leaf(identity, not_before=now - 30)
        if integrated_time is None:
            integrated_time = int(min(max(now, leaf.not_before.timestamp()), leaf.not_after.timestamp() - 1))

        if statement is None:
            if subjects is None:
                subjects = [{"name": subject_name if subject_name is not None else filename,
                             "digest": {"sha256": subject_digest or hashlib.sha256(content).hexdigest()}}]
            if predicate is _DEFAULT:
                predicate = slsa_predicate(identity) if predicate_type == SLSA_PROVENANCE_V1 else None
            statement = statement_bytes(subjects, predicate_type, predicate)
        signature = (sign_with or leaf.key).sign(pae(payload_type, statement), ec.ECDSA(hashes.SHA256()))

        body = rekor_dsse_body(body_statement if body_statement is not None else statement,
                               body_signature if body_signature is not None else signature,
                               body_certificate if body_certificate is not None else leaf.certificate)
        log = log or self.log
        integrated = [log.integrate(body, integrated_time, set_key=set_signed_by, set_fields=set_fields,
                                    kind_version=kind_version, inclusion_proof=inclusion_proof)
                      for _ in range(entries)]
        return {
            "version": 1,
            "verification_material": {"certificate": b64(certificate if certificate is not None else leaf.der),
                                      "transparency_entries": integrated},
            "envelope": {"statement": b64(statement), "signature": b64(signature)},
        }


def statement_of(attestation: dict) -> dict:
    return json.loads(unb64(attestation["envelope"]["statement"]))


# ---- what an index checks ------------------------------------------------------------------------

class Refused(Exception):
    """verify_attestation's refusal; `part` is the loose keyword a test may look for."""

    def __init__(self, part: str, detail: str):
        super().__init__(f"{part}: {detail}")
        self.part = part
        self.detail = detail


def _verify_issued(child: x509.Certificate, parent: x509.Certificate) -> None:
    if child.issuer != parent.subject:
        raise InvalidSignature("issuer name differs")
    parent.public_key().verify(child.signature, child.tbs_certificate_bytes, ec.ECDSA(child.signature_hash_algorithm))


def _is_ca(certificate: x509.Certificate) -> bool:
    try:
        return certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return False


def _chain_to_trust_root(leaf: x509.Certificate, trust_root: dict, at: datetime.datetime) -> None:
    problems = []
    for authority in trust_root.get("certificateAuthorities", []):
        chain = [x509.load_der_x509_certificate(unb64(c["rawBytes"])) for c in authority["certChain"]["certificates"]]
        start = datetime.datetime.strptime(authority["validFor"]["start"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc)
        end = authority["validFor"].get("end")
        if at < start or (end and at > datetime.datetime.strptime(end[:19], "%Y-%m-%dT%H:%M:%S").replace(
                tzinfo=datetime.timezone.utc)):
            problems.append("the CA was not valid then")
            continue
        try:
            child = leaf
            for parent in chain:
                _verify_issued(child, parent)
                if not _is_ca(parent) or not valid_from(parent) <= at <= valid_until(parent):
                    raise InvalidSignature("the issuer is no CA at that time")
                child = parent
            _verify_issued(chain[-1], chain[-1])  # the root signs itself
            return
        except InvalidSignature as error:
            problems.append(str(error) or "bad signature")
    raise Refused("certificate", f"the signing certificate does not chain to the trust root ({'; '.join(problems)})")


def _extension(certificate: x509.Certificate, name: str) -> str | None:
    try:
        value = certificate.extensions.get_extension_for_oid(x509.ObjectIdentifier(FULCIO_OIDS[name])).value.value
    except x509.ExtensionNotFound:
        return None
    return value.decode() if name in RAW_EXTENSIONS else parse_der_utf8_string(value)


def verify_attestation(attestation: Any, trust_root: dict, filename: str, sha256: str,
                       publisher: dict | None = None) -> str:
    """Checks one PEP 740 attestation as the index under test must; returns its predicateType or
    raises Refused. `publisher` is publisher_of(<the identity the minting publisher is>)."""
    try:
        if attestation.get("version") != 1:
            raise Refused("attestation", "version is not 1")
        material = attestation["verification_material"]
        leaf = x509.load_der_x509_certificate(unb64(material["certificate"]))
        statement = unb64(attestation["envelope"]["statement"])
        signature = unb64(attestation["envelope"]["signature"])
        entries = material["transparency_entries"]
    except Refused:
        raise
    except Exception as error:  # noqa: BLE001 — any malformation is a refusal
        raise Refused("attestation", f"malformed: {error!r}")

    # The transparency entry: exactly one, dsse 0.0.1, from a log of the trust root, its SET good.
    if not isinstance(entries, list) or len(entries) != 1:
        raise Refused("transparency", f"expected exactly one transparency entry, got {len(entries)}")
    entry = entries[0]
    if entry.get("kindVersion") != {"kind": "dsse", "version": "0.0.1"}:
        raise Refused("transparency", f"entry kind {entry.get('kindVersion')} is not dsse 0.0.1")
    logs = {tlog["logId"]["keyId"]: tlog for tlog in trust_root.get("tlogs", [])}
    tlog = logs.get(entry["logId"]["keyId"])
    if tlog is None:
        raise Refused("transparency", "the entry's log is not in the trust root")
    log_key = serialization.load_der_public_key(unb64(tlog["publicKey"]["rawBytes"]))
    integrated_time = int(entry["integratedTime"])
    signed = canonical_json({"body": entry["canonicalizedBody"], "integratedTime": integrated_time,
                             "logID": unb64(entry["logId"]["keyId"]).hex(), "logIndex": int(entry["logIndex"])})
    try:
        log_key.verify(unb64(entry["inclusionPromise"]["signedEntryTimestamp"]), signed, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise Refused("transparency", "the signed entry timestamp does not verify")
    body = unb64(entry["canonicalizedBody"])
    proof = entry.get("inclusionProof")
    if proof:
        try:
            root = root_from_inclusion_proof(body, int(proof["logIndex"]), int(proof["treeSize"]),
                                             [unb64(h) for h in proof["hashes"]])
        except ValueError as error:
            raise Refused("transparency", f"inclusion proof: {error}")
        if root != unb64(proof["rootHash"]):
            raise Refused("transparency", "the inclusion proof does not lead to its root hash")
        note, _, signatures = proof["checkpoint"]["envelope"].partition("\n\n")
        lines = note.split("\n")
        if unb64(lines[2]) != root or int(lines[1]) != int(proof["treeSize"]):
            raise Refused("transparency", "the checkpoint is of another tree")
        for line in signatures.strip("\n").split("\n"):
            raw = unb64(line.split(" ")[2])
            try:
                log_key.verify(raw[4:], (note + "\n").encode(), ec.ECDSA(hashes.SHA256()))
            except InvalidSignature:
                raise Refused("transparency", "the checkpoint's signature does not verify")

    # The certificate: chains to a CA of the trust root when the log integrated the entry.
    at = datetime.datetime.fromtimestamp(integrated_time, datetime.timezone.utc)
    if not valid_from(leaf) <= at <= valid_until(leaf):
        raise Refused("certificate", "the signing certificate was not valid when the log integrated the entry")
    _chain_to_trust_root(leaf, trust_root, at)
    usage = leaf.extensions.get_extension_for_class(x509.KeyUsage).value
    extended = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    if not usage.digital_signature or ExtendedKeyUsageOID.CODE_SIGNING not in extended or _is_ca(leaf):
        raise Refused("certificate", "the signing certificate is not for code signing")

    # The DSSE signature, with the leaf's key, over the in-toto PAE.
    try:
        leaf.public_key().verify(signature, pae(IN_TOTO_PAYLOAD_TYPE, statement), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise Refused("signature", "the envelope's signature does not verify with the certificate's key")

    # The body names this signature, certificate and statement.
    try:
        spec = json.loads(body)["spec"]
        payload_hash = spec["payloadHash"]
        named = spec["signatures"]
    except (ValueError, KeyError, TypeError):
        raise Refused("transparency", "the entry body is no dsse body")
    if payload_hash != {"algorithm": "sha256", "value": hashlib.sha256(statement).hexdigest()}:
        raise Refused("transparency", "the entry's payload hash names another statement")
    if named != [{"signature": b64(signature), "verifier": b64(certificate_pem(leaf))}]:
        raise Refused("transparency", "the entry names another signature or certificate")

    # The statement: one subject, this file, a predicate type PyPI knows.
    try:
        parsed = json.loads(statement)
        subjects = parsed["subject"]
        predicate_type = parsed["predicateType"]
    except (ValueError, KeyError, TypeError):
        raise Refused("statement", "the statement is not an in-toto statement")
    if parsed.get("_type") != STATEMENT_TYPE:
        raise Refused("statement", "the statement is not an in-toto v1 statement")
    if not isinstance(subjects, list) or len(subjects) != 1:
        raise Refused("subject", "the statement must have exactly one subject")
    try:
        same_name = ultranormalize(subjects[0]["name"]) == ultranormalize(filename)
    except (ValueError, KeyError, TypeError):
        raise Refused("subject", "the subject's name is not a distribution filename")
    if not same_name:
        raise Refused("subject", "the subject names another file")
    if subjects[0].get("digest", {}).get("sha256") != sha256:
        raise Refused("digest", "the subject's sha256 differs from the file's")
    if predicate_type not in PREDICATE_TYPES:
        raise Refused("predicate", f"unknown predicateType {predicate_type}")

    # The identity: the trusted publisher that minted the upload token.
    if publisher is not None:
        expected_issuer = publisher["issuer"]
        if _extension(leaf, "issuer") != expected_issuer:
            raise Refused("publisher", "the certificate's issuer is not the publisher's")
        repository = f"{publisher['server']}/{publisher['repository']}"
        if (_extension(leaf, "source_repository_uri") or "").lower() != repository.lower():
            raise Refused("publisher", "the certificate names another repository")
        if _extension(leaf, "owner_id") != publisher["owner_id"]:
            raise Refused("publisher", "the certificate names another repository owner id")
        separator = "//" if publisher["kind"] == "gitlab" else "/"
        prefix = f"{publisher.get('build_config_base', repository)}{separator}{publisher['workflow']}@"
        suffixes = {_extension(leaf, "source_repository_ref"), _extension(leaf, "source_repository_digest")} - {None}
        if _extension(leaf, "build_config_uri") not in {prefix + suffix for suffix in suffixes}:
            raise Refused("publisher", "the certificate names another workflow")
    return predicate_type


# ---- self-check ----------------------------------------------------------------------------------

def _self_check() -> None:
    """Verifies a good attestation as the index will, then that every breakage is refused for the
    reason it was made for (and for no earlier one)."""
    started = time.monotonic()
    stand_in = TestSigstore()
    stranger = TestSigstore()  # same names, other keys: a CA and a log the trust root does not hold
    trust_root = stand_in.trust_root()
    wheel = b"PK\x05\x06" + bytes(18)
    filename = "flash_attn-2.8.3+cu130-cp312-cp312-linux_x86_64.whl"
    digest = hashlib.sha256(wheel).hexdigest()
    identity = github(ref="refs/tags/v2.8.3")
    publisher = publisher_of(identity)

    good = stand_in.attest(wheel, filename, identity)
    assert verify_attestation(good, trust_root, filename, digest, publisher) == PUBLISH_V1
    json.dumps(good)  # plain JSON types throughout
    slsa = stand_in.attest(wheel, filename, identity, SLSA_PROVENANCE_V1)
    assert verify_attestation(slsa, trust_root, filename, digest, publisher) == SLSA_PROVENANCE_V1
    assert statement_of(good)["predicate"] is None and statement_of(slsa)["predicate"]["runDetails"]
    at_sha = github(ref="refs/tags/v2.8.3", build_config_at="sha")
    assert verify_attestation(stand_in.attest(wheel, filename, at_sha), trust_root, filename, digest,
                              publisher_of(at_sha))
    lab = gitlab()
    assert verify_attestation(stand_in.attest(wheel, filename, lab), trust_root, filename, digest, publisher_of(lab))
    an_hour_ago = stand_in.attest(wheel, filename, identity, signed_at=time.time() - 3600)
    verify_attestation(an_hour_ago, trust_root, filename, digest, publisher)  # expired since: still good
    differently_written = filename.replace("flash_attn", "Flash_Attn")
    verify_attestation(stand_in.attest(wheel, filename, identity, subject_name=differently_written), trust_root,
                       filename, digest, publisher)
    verify_attestation(stand_in.attest(wheel, filename, identity, inclusion_proof=False), trust_root, filename, digest,
                       publisher)
    # A second trusted CA and log are honoured.
    both = stand_in.trust_root(also_trust=[stranger])
    verify_attestation(stranger.attest(wheel, filename, identity), both, filename, digest, publisher)

    # The body, SET, checkpoint, leaf: shapes as the real tools make them.
    entry = good["verification_material"]["transparency_entries"][0]
    assert list(entry) == ["logIndex", "logId", "kindVersion", "integratedTime", "inclusionPromise", "inclusionProof",
                           "canonicalizedBody"]
    assert isinstance(entry["logIndex"], str) and isinstance(entry["integratedTime"], str)
    verifier = json.loads(unb64(entry["canonicalizedBody"]))["spec"]["signatures"][0]["verifier"]
    assert unb64(verifier).startswith(b"-----BEGIN CERTIFICATE-----\n")
    assert entry["inclusionProof"]["checkpoint"]["envelope"].startswith("rekor.sigstore.dev - ")
    leaf = x509.load_der_x509_certificate(unb64(good["verification_material"]["certificate"]))
    assert _extension(leaf, "build_config_uri") == \
        "https://github.com/Dao-AILab/flash-attention/.github/workflows/release.yml@refs/tags/v2.8.3"
    assert valid_until(leaf) - valid_from(leaf) == LEAF_LIFETIME
    assert lab.build_config_uri == "https://gitlab.com/ml/kernels/nunchaku//.gitlab-ci.yml@refs/heads/main"
    own_instance = gitlab(issuer="https://gitlab.example", config_host="gitlab.example")
    assert own_instance.build_config_uri.startswith("https://gitlab.example/ml/kernels/nunchaku//")
    assert own_instance.source_repository_uri == "https://gitlab.com/ml/kernels/nunchaku"  # as Fulcio writes it
    verify_attestation(stand_in.attest(wheel, filename, own_instance), trust_root, filename, digest,
                       publisher_of(own_instance))
    assert parse_der_utf8_string(der_utf8_string("x" * 300)) == "x" * 300

    now = time.time()
    other_key = ec.generate_private_key(ec.SECP256R1())
    other_leaf = stand_in.leaf(identity)
    other_statement = statement_bytes([{"name": filename, "digest": {"sha256": "0" * 64}}], PUBLISH_V1, None)
    breakages = {
        "signed with another key": ("signature", dict(sign_with=other_key)),
        "signed as another payload type": ("signature", dict(payload_type="application/json")),
        "a leaf from another CA": ("certificate", dict(leaf=stand_in.leaf(identity, issued_by=stranger))),
        "an expired leaf": ("certificate", dict(leaf=stand_in.leaf(identity, not_before=now - 7200),
                                                integrated_time=int(now))),
        "integrated after the leaf expired": ("certificate", dict(integrated_time=int(now) + 1200)),
        "integrated before the leaf": ("certificate", dict(integrated_time=int(now) - 3600)),
        "a leaf without code signing": ("certificate", dict(leaf=stand_in.leaf(identity, code_signing=False))),
        "a CA as the leaf": ("certificate", dict(leaf=stand_in.leaf(identity, ca=True))),
        "a SET by another key": ("transparency", dict(set_signed_by=other_key)),
        "a SET over another log index": ("transparency", dict(set_fields={"logIndex": 1})),
        "a SET over another time": ("transparency", dict(set_fields={"integratedTime": int(now) - 5})),
        "a SET over another body": ("transparency", dict(set_fields={"body": b64(b"{}")})),
        "a log the trust root lacks": ("transparency", dict(log=stranger.log)),
        "two transparency entries": ("transparency", dict(entries=2)),
        "no transparency entry": ("transparency", dict(entries=0)),
        "a hashedrekord entry": ("transparency", dict(kind_version={"kind": "hashedrekord", "version": "0.0.1"})),
        "a body naming another statement": ("transparency", dict(body_statement=other_statement)),
        "a body naming another certificate": ("transparency", dict(body_certificate=other_leaf.certificate)),
        "a body naming another signature": ("transparency", dict(body_signature=b"\x30\x06\x02\x01\x01\x02\x01\x01")),
        "two subjects": ("subject", dict(subjects=[{"name": filename, "digest": {"sha256": digest}}] * 2)),
        "another filename": ("subject", dict(subject_name="flash_attn-2.8.4+cu130-cp312-cp312-linux_x86_64.whl")),
        "no distribution filename": ("subject", dict(subject_name="flash_attn.exe")),
        "another digest": ("digest", dict(subject_digest="ab" * 32)),
        "an unknown predicate type": ("predicate", dict(predicate_type="https://example.com/attestations/v9")),
        "a statement that is no JSON": ("statement", dict(statement=b"not json")),
        "no owner id": ("publisher", dict(leaf=stand_in.leaf(identity, omit=["owner_id"]))),
        "another repository": ("publisher", dict(identity=github("Dao-AILab/flash-attention-3",
                                                                 ref="refs/tags/v2.8.3"))),
        "another owner id": ("publisher", dict(identity=github(owner_id="99999", ref="refs/tags/v2.8.3"))),
        "another workflow": ("publisher", dict(identity=github(workflow="nightly.yml", ref="refs/tags/v2.8.3"))),
        "another issuer": ("publisher", dict(identity=github(issuer="https://issuer.example", ref="refs/tags/v2.8.3"))),
        "another ref in the build config": ("publisher", dict(identity=github(ref="refs/tags/v2.8.3",
                                                                               build_config_at="refs/heads/evil"))),
        "a GitLab identity": ("publisher", dict(identity=gitlab())),
        "a certificate that is no DER": ("attestation", dict(certificate=b"\x30\x03\x02\x01\x01")),
    }
    for case, (part, breakage) in breakages.items():
        breakage.setdefault("identity", identity)
        broken = stand_in.attest(wheel, filename, **breakage)
        try:
            verify_attestation(broken, trust_root, filename, digest, publisher)
        except Refused as refusal:
            assert refusal.part == part, f"{case}: refused for {refusal}, expected {part}"
        else:
            raise AssertionError(f"{case}: verified, but should not")
    print(f"sigstore_stand_in self-check: the good attestations verify, {len(breakages)} breakages are refused for "
          f"their reasons ({time.monotonic() - started:.2f}s)")


if __name__ == "__main__":
    _self_check()
