"""Fixtures every end-to-end test shares: the binary, a clean pip, a running server."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fake_github import FakeGitHub, make_certificates  # noqa: E402
from server_process import ServerProcess, wheelhouse_binary  # noqa: E402


@pytest.fixture(scope="session")
def wheelhouse_bin() -> pathlib.Path:
    binary = pathlib.Path(wheelhouse_binary())
    if not binary.exists():
        pytest.fail(f"{binary} does not exist; build it first (cmake --build --preset release)")
    return binary


def clean_pip_environment(tmp_path: pathlib.Path) -> dict[str, str]:
    """pip as a fresh machine has it: no site configuration, no cache, no index but ours."""
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("PIP_"):
            del env[key]
    # requests prefers these to pip's --cert, so a test's own CA (the fake GitHub's) would be ignored.
    for key in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        env.pop(key, None)
    env.update({
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_CACHE_DIR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        "PIP_NO_BUILD_ISOLATION": "1",
        "HOME": str(tmp_path),
    })
    return env


@pytest.fixture
def pip(tmp_path):
    """Runs Debian's pip (/usr/bin/python3 -m pip) with a clean configuration."""
    env = clean_pip_environment(tmp_path)

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(["/usr/bin/python3", "-m", "pip", *args], env=env, capture_output=True, text=True,
                                timeout=300)
        if check and result.returncode != 0:
            raise AssertionError(f"pip {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    return run


def ingest(binary: pathlib.Path, data: pathlib.Path, *paths: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "ingest", "--data", str(data), *map(str, paths)], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def start_server(tmp_path):
    """Starts `wheelhouse serve` on a free port over a data folder; stops it (checking a clean exit)."""
    started: list[ServerProcess] = []

    def start(data: pathlib.Path, *extra_args: str, env: dict | None = None,
              ca: pathlib.Path | None = None, preexec_fn=None) -> ServerProcess:
        server = ServerProcess(data, *extra_args, env=env, ca=ca, preexec_fn=preexec_fn).start()
        started.append(server)
        return server

    yield start
    for server in started:
        code = server.stop()
        assert code == 0, f"wheelhouse serve exited with {code} after SIGTERM:\n{server.stderr()}"


@pytest.fixture(scope="session")
def fake_github_process(tmp_path_factory):
    """One fake GitHub (tests/e2e/fake_github.py) for the session: its certificates cost a second."""
    fake = FakeGitHub(tmp_path_factory.mktemp("fake-github"))
    yield fake
    fake.stop()


@pytest.fixture
def fake_github(fake_github_process) -> FakeGitHub:
    """The fake GitHub, emptied for this test: no releases, faults, log or token; full rate limit.
    fake_github.server_flags() points wheelhouse at it."""
    fake_github_process.reset()
    return fake_github_process


@dataclasses.dataclass(frozen=True)
class TlsFiles:
    """A test CA and a server certificate it signed (localhost, 127.0.0.1, ::1), made by openssl."""
    ca: pathlib.Path
    certificate: pathlib.Path
    key: pathlib.Path

    def serve_arguments(self) -> list[str]:
        return ["--tls-cert", str(self.certificate), "--tls-key", str(self.key)]


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory) -> TlsFiles:
    return TlsFiles(*make_certificates(tmp_path_factory.mktemp("tls")))


@pytest.fixture(params=["http", "https"])
def scheme(request) -> str:
    """Both transports a test's raw clients should find alike."""
    return request.param


@pytest.fixture
def start_over(start_server, scheme, tls_files):
    """start_server over `scheme`: with the test certificate (and the server's `ca` set) for https."""
    def start(data: pathlib.Path, *extra_args: str, env: dict | None = None) -> ServerProcess:
        if scheme == "https":
            return start_server(data, *tls_files.serve_arguments(), *extra_args, env=env, ca=tls_files.ca)
        return start_server(data, *extra_args, env=env)
    return start
