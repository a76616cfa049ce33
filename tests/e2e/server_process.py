"""Starts the real `wheelhouse serve` binary on a free loopback port and stops it again."""

import os
import re
import signal
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def wheelhouse_binary() -> str:
    return os.environ.get("WHEELHOUSE_BIN", str(REPO_ROOT / "build" / "release" / "server" / "wheelhouse"))


class ServerProcess:
    """One `wheelhouse serve` on 127.0.0.1:<free port>, with its access log in a file (or where
    `access_log` says: "-" puts it in stdout_path, which holds whatever the server writes there)."""

    def __init__(self, data_dir: Path, *extra_args: str, env: dict | None = None, access_log: str | None = None,
                 preexec_fn=None, ca: Path | None = None):
        self.data_dir = Path(data_dir)
        self.access_log = self.data_dir.parent / f"{self.data_dir.name}-access.log"
        self.access_log_argument = access_log or str(self.access_log)
        self.stdout_path = self.data_dir.parent / f"{self.data_dir.name}-stdout.log"
        self.stderr_path = self.data_dir.parent / f"{self.data_dir.name}-stderr.log"
        self.extra_args = list(extra_args)
        self.env = env
        self.preexec_fn = preexec_fn  # run in the child before exec (a lower resource limit, say)
        self.ca = ca  # the test CA that signed --tls-cert's certificate, when the server speaks HTTPS
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self, timeout: float = 15.0) -> "ServerProcess":
        command = [wheelhouse_binary(), "serve", "--listen", "127.0.0.1:0", "--data", str(self.data_dir),
                   "--access-log", self.access_log_argument, *self.extra_args]
        self._stderr = open(self.stderr_path, "wb")
        self._stdout = open(self.stdout_path, "wb")
        environment = dict(os.environ, **(self.env or {}))
        self.process = subprocess.Popen(command, stdout=self._stdout, stderr=self._stderr, env=environment,
                                        preexec_fn=self.preexec_fn)
        deadline = time.monotonic() + timeout
        pattern = re.compile(rb"listening on (https?://[^/\s]+/)")
        while time.monotonic() < deadline:
            match = pattern.search(self.stderr_path.read_bytes())
            if match:
                self.url = match.group(1).decode()
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"wheelhouse serve exited with {self.process.returncode}: {self.stderr()}")
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"wheelhouse serve did not start within {timeout}s: {self.stderr()}")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def access_lines(self, settle: float = 1.5) -> list[str]:
        """The access log's lines; it is flushed once a second, so wait for it to settle."""
        time.sleep(settle)
        return self.access_log.read_text().splitlines() if self.access_log.exists() else []

    def get(self, path: str, headers: dict | None = None):
        request = urllib.request.Request(self.url.rstrip("/") + path, headers=headers or {})
        context = ssl.create_default_context(cafile=str(self.ca)) if self.ca else None
        return urllib.request.urlopen(request, timeout=10, context=context)

    def stop(self, timeout: float = 15.0) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise RuntimeError("wheelhouse serve did not drain and exit after SIGTERM")
        self._stderr.close()
        self._stdout.close()
        code = self.process.returncode
        self.process = None
        return code

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        code = self.stop()
        if exc[0] is None:
            assert code == 0, f"wheelhouse serve exited with {code} after SIGTERM: {self.stderr()}"
