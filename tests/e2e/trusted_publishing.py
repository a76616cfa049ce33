"""Fixtures and helpers the trusted-publishing tests share (test_trusted_publishing.py and
test_hostile_oidc.py): the local issuer, an index that trusts it, publishers added with the CLI."""

from __future__ import annotations

import dataclasses
import pathlib
import sqlite3
import subprocess

import pytest

from oidc_issuer import OidcIssuer, Workflow
from server_process import ServerProcess

# The index's schemes the tests run over: over https the index serves the issuer's certificate
# (the clients refuse plain http outside tests, so https is how CI meets it).
INDEX_SCHEMES = ["http", "https"]


@dataclasses.dataclass
class Index:
    server: ServerProcess
    data: pathlib.Path
    scheme: str
    issuer: OidcIssuer
    binary: pathlib.Path

    @property
    def url(self) -> str:
        return self.server.url

    def publisher(self, project: str, *extra: str, repository: str = "Dao-AILab/flash-attention",
                  owner_id: str = "77001", workflow: str = "release.yml") -> str:
        """Adds a trusted publisher with the CLI (beside the running server); returns its id."""
        result = subprocess.run([str(self.binary), "publisher", "add", "--data", str(self.data), "--project", project,
                                 "--issuer", self.issuer.url, "--repository", repository, "--owner-id", owner_id,
                                 "--workflow", workflow, *extra], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return result.stdout.split()[1]

    def minted_tokens(self) -> list[tuple]:
        with sqlite3.connect(self.data / "catalog.db") as db:
            return db.execute("SELECT name, projects, builds FROM tokens WHERE publisher_id IS NOT NULL").fetchall()

    def audit(self, action: str) -> list[tuple]:
        with sqlite3.connect(self.data / "catalog.db") as db:
            return db.execute("SELECT actor, target, detail FROM audit_log WHERE action = ? ORDER BY id",
                              (action,)).fetchall()

    def files(self) -> list[tuple]:
        with sqlite3.connect(self.data / "catalog.db") as db:
            return db.execute("SELECT filename, uploaded_by FROM files ORDER BY filename").fetchall()


@pytest.fixture(scope="module")
def issuer(tmp_path_factory):
    running = OidcIssuer(tmp_path_factory.mktemp("oidc-issuer"))
    yield running
    running.stop()


@pytest.fixture
def fresh_issuer(issuer):
    """The module's issuer, up, running the default workflow."""
    issuer.down = False
    issuer.workflow = Workflow()
    yield issuer
    issuer.down = False


def index_arguments(scheme: str, issuer: OidcIssuer) -> list[str]:
    # The index fetches the issuer's keys over HTTPS it checks against the test CA; the issuer is
    # on loopback, which only tests may allow.
    arguments = ["--ca-bundle", str(issuer.ca), "--remote-allow-private-addresses"]
    if scheme == "https":
        directory = issuer.ca.parent
        arguments += ["--tls-cert", str(directory / "server.pem"), "--tls-key", str(directory / "server.key")]
    return arguments


@pytest.fixture(params=INDEX_SCHEMES)
def index(request, tmp_path, wheelhouse_bin, start_server, fresh_issuer, monkeypatch) -> Index:
    data = tmp_path / "data"
    data.mkdir()
    if request.param == "https":  # requests, twine, curl and urllib trust the test CA, as CI trusts a real one
        for variable in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"):
            monkeypatch.setenv(variable, str(fresh_issuer.ca))
    server = start_server(data, *index_arguments(request.param, fresh_issuer))
    return Index(server, data, request.param, fresh_issuer, wheelhouse_bin)
