"""Configuration of the real binary: a TOML file (--config or WHEELHOUSE_CONFIG), WHEELHOUSE_*
variables and flags, in the order DESIGN.md gives (flags > environment > file > defaults), each
shown by what the running server does. A bad file stops the start naming the file and the key."""

from __future__ import annotations

import os
import pathlib
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from test_uploads import curl, make_token
from wheelbuilder import build_wheel


def clean_environment(**extra: str) -> dict[str, str]:
    """The test's environment without any WHEELHOUSE_* setting of its own, plus `extra`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("WHEELHOUSE_")}
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Serve:
    """`wheelhouse serve` with exactly the arguments and environment a test gives. Its output, both
    streams in one file (the banner and spdlog's messages go to stderr, an access log of "-" to stdout)."""

    def __init__(self, binary: pathlib.Path, workdir: pathlib.Path, args: list[str], env: dict[str, str]):
        self.stderr_path = workdir / f"serve-{time.monotonic_ns()}.log"
        self._stderr = open(self.stderr_path, "wb")
        self.process = subprocess.Popen([str(binary), "serve", *args], stdout=self._stderr, stderr=subprocess.STDOUT,
                                        env=env, cwd=workdir)
        self.url = ""
        self.banner = ""

    def output(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_listening(self, timeout: float = 15.0) -> "Serve":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(r"listening on (http://[^/\s]+/).*", self.output())
            if match:
                self.url, self.banner = match.group(1), match.group(0)
                return self
            if self.process.poll() is not None:
                raise AssertionError(f"serve exited with {self.process.returncode}:\n{self.output()}")
            time.sleep(0.02)
        raise AssertionError(f"serve did not start:\n{self.output()}")

    def wait_exit(self, timeout: float = 15.0) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        return self.process.returncode


@pytest.fixture
def serve(tmp_path, wheelhouse_bin):
    started: list[Serve] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Serve:
        process = Serve(wheelhouse_bin, tmp_path, list(args), env if env is not None else clean_environment())
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def write_config(path: pathlib.Path, text: str) -> pathlib.Path:
    path.write_text(text)
    return path


def cache_control(url: str, path: str = "simple/") -> str:
    with urllib.request.urlopen(url + path, timeout=10) as response:
        return response.headers["Cache-Control"]


def max_age(url: str) -> int:
    match = re.search(r"max-age=(\d+)", cache_control(url))
    assert match, cache_control(url)
    return int(match.group(1))


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as failure:
        return failure.code


# --- a file alone ---------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["--config", "WHEELHOUSE_CONFIG"])
def test_a_config_file_sets_the_server_up(serve, tmp_path, wheelhouse_bin, how):
    data = tmp_path / "from-file"
    port = free_port()
    access_log = tmp_path / "access.log"
    config = write_config(tmp_path / "wheelhouse.toml", f"""# wheelhouse settings
listen = "127.0.0.1:{port}"
data = "{data}"
access-log = "{access_log}"
page-max-age = 123
max-upload-size = 2000
threads = 2
""")
    # `token create --config` finds the same data folder the server will use.
    created = subprocess.run([str(wheelhouse_bin), "token", "create", "--name", "ci", "--config", str(config)],
                             capture_output=True, text=True, timeout=30, env=clean_environment(), cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert (data / "catalog.db").is_file()

    if how == "--config":
        server = serve("--config", str(config)).wait_listening()
    else:
        server = serve(env=clean_environment(WHEELHOUSE_CONFIG=str(config))).wait_listening()
    assert server.url == f"http://127.0.0.1:{port}/", server.banner
    assert f"data {data}" in server.banner and "2 threads" in server.banner, server.banner
    assert not (tmp_path / "var").exists()  # the default data folder was not used

    assert max_age(server.url) == 123
    small = build_wheel(tmp_path / "small", "kernels", "1.0")
    assert curl("-u", f"__token__:{token}", "-T", str(small), server.url + "api/v1/files/")[0] == 201
    big = build_wheel(tmp_path / "big", "kernels", "1.1", files={"kernels/blob.bin": os.urandom(5000)})
    status, body = curl("-u", f"__token__:{token}", "-T", str(big), server.url + "api/v1/files/")
    assert status == 413 and "at most 2000" in body, body
    assert server.stop() == 0
    assert "GET /simple/" in access_log.read_text()


# --- precedence -----------------------------------------------------------------------------------

def test_flags_beat_environment_beats_file_beats_defaults(serve, tmp_path, wheelhouse_bin):
    data = tmp_path / "data"
    data.mkdir()
    make_token(wheelhouse_bin, data, "ci")
    config = write_config(tmp_path / "wheelhouse.toml", 'page-max-age = 111\nlisten = "127.0.0.1:1"\n')
    common = ("--data", str(data), "--access-log", "off")

    default = serve("--listen", "127.0.0.1:0", *common).wait_listening()
    assert max_age(default.url) == 60
    default.stop()

    from_file = serve("--config", str(config), "--listen", "127.0.0.1:0", *common).wait_listening()
    assert max_age(from_file.url) == 111
    from_file.stop()

    environment = clean_environment(WHEELHOUSE_CONFIG=str(config), WHEELHOUSE_PAGE_MAX_AGE="222",
                                    WHEELHOUSE_LISTEN="127.0.0.1:0")
    from_env = serve(*common, env=environment).wait_listening()
    assert max_age(from_env.url) == 222
    assert not from_env.url.endswith(":1/")  # the environment's listen beat the file's
    from_env.stop()

    from_flag = serve("--page-max-age", "333", *common, env=environment).wait_listening()
    assert max_age(from_flag.url) == 333
    from_flag.stop()


def test_the_data_flag_beats_the_files_data(serve, tmp_path, wheelhouse_bin):
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    ignored = tmp_path / "ignored"
    config = write_config(tmp_path / "wheelhouse.toml", f'data = "{ignored}"\n')
    server = serve("--config", str(config), "--data", str(chosen), "--listen", "127.0.0.1:0").wait_listening()
    assert f"data {chosen}" in server.banner
    assert (chosen / "catalog.db").is_file() and not ignored.exists()
    server.stop()
    server = serve("--config", str(config), "--listen", "127.0.0.1:0",
                   env=clean_environment(WHEELHOUSE_DATA=str(chosen))).wait_listening()
    assert f"data {chosen}" in server.banner and not ignored.exists()


def test_private_true_in_the_file_makes_the_index_private(serve, tmp_path):
    """The file alone must be enough: an operator who writes `private = true` gets a private index."""
    data = tmp_path / "data"
    data.mkdir()
    on = write_config(tmp_path / "on.toml", "private = true\n")
    server = serve("--config", str(on), "--data", str(data), "--listen", "127.0.0.1:0").wait_listening()
    assert status_of(server.url + "simple/") == 401
    assert status_of(server.url + "healthz") == 200


def test_private_from_flag_and_environment_over_the_file(serve, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    on = write_config(tmp_path / "on.toml", "private = true\n")
    off = write_config(tmp_path / "off.toml", "private = false\n")
    base = ("--data", str(data), "--listen", "127.0.0.1:0")
    cases = [
        ((), {}, 200),  # the default is a public index
        (("--config", str(off)), {}, 200),
        (("--config", str(off), "--private"), {}, 401),
        (("--config", str(off)), {"WHEELHOUSE_PRIVATE": "1"}, 401),
        ((), {"WHEELHOUSE_PRIVATE": "1"}, 401),
        ((), {"WHEELHOUSE_PRIVATE": "true"}, 401),
        ((), {"WHEELHOUSE_PRIVATE": "0"}, 200),
        # --help: "WHEELHOUSE_PRIVATE=0 overrides the file's private = true"
        (("--config", str(on)), {"WHEELHOUSE_PRIVATE": "0"}, 200),
    ]
    for args, env, expected in cases:
        server = serve(*base, *args, env=clean_environment(**env)).wait_listening()
        assert status_of(server.url + "simple/") == expected, (args, env)
        assert server.stop() == 0


def test_a_flag_value_neither_on_nor_off_is_a_usage_error(serve, tmp_path):
    """A typo in a unit file's WHEELHOUSE_PRIVATE used to abort the process (an uncaught exception)."""
    base = ("--data", str(tmp_path / "data"), "--listen", "127.0.0.1:0")
    for args, env in (((), {"WHEELHOUSE_PRIVATE": "maybe"}), (("--private=maybe",), {}),
                      ((), {"WHEELHOUSE_REMOTE_ALLOW_PRIVATE_ADDRESSES": "sometimes"})):
        server = serve(*base, *args, env=clean_environment(**env))
        assert server.wait_exit() == 2, (args, env, server.output())
        assert "is neither on nor off; write 1 or 0" in server.output(), server.output()
        assert "listening" not in server.output()


# --- a bad file ---------------------------------------------------------------------------------

BAD_FILES = [
    ("max_upload_size = 1000\n", "unknown key 'max_upload_size'"),
    ("[server]\nlisten = \"127.0.0.1:0\"\n", "unknown key 'server'"),
    ("colour = \"blue\"\n", "unknown key 'colour'"),
    ("page-max-age = \"60\"\n", "'page-max-age' must be a non-negative integer"),
    ("threads = -1\n", "'threads' must be a non-negative integer"),
    # 2^32 + 16 was read as 16: refused, not truncated.
    ("ingest-queue = 4294967312\n", "'ingest-queue' must be a non-negative integer (at most 4294967295)"),
    ("max-upload-size = 1.5\n", "'max-upload-size' must be a non-negative integer"),
    ("private = \"yes\"\n", "'private' must be true or false"),
    ("listen = 8080\n", "'listen' must be a string"),
    ("data = [\"a\", \"b\"]\n", "'data' must be a string"),
    ("page-max-age = 60\nlisten = \n", "(line 2)"),
    ("page-max-age = 60\npage-max-age = 61\n", "(line 2)"),
]


@pytest.mark.parametrize("text,phrase", BAD_FILES, ids=[phrase for _, phrase in BAD_FILES])
def test_a_bad_config_file_stops_the_start_naming_file_and_key(serve, tmp_path, text, phrase):
    config = write_config(tmp_path / "bad.toml", text)
    server = serve("--config", str(config), "--data", str(tmp_path / "data"), "--listen", "127.0.0.1:0")
    code = server.wait_exit()
    assert code == 2, server.output()
    message = server.output()
    assert f"configuration file {config}" in message, message
    assert phrase in message, message
    assert "listening" not in message
    assert not (tmp_path / "data").exists()  # nothing was created


def test_a_missing_config_file_is_named(serve, tmp_path):
    missing = tmp_path / "nowhere.toml"
    server = serve("--config", str(missing), "--data", str(tmp_path / "data"), "--listen", "127.0.0.1:0")
    assert server.wait_exit() != 0
    assert str(missing) in server.output(), server.output()
    assert "listening" not in server.output()


def test_other_commands_refuse_a_bad_config_file_too(tmp_path, wheelhouse_bin):
    config = write_config(tmp_path / "bad.toml", "dta = \"/tmp/x\"\n")
    result = subprocess.run([str(wheelhouse_bin), "token", "list", "--config", str(config)], capture_output=True,
                            text=True, timeout=30, env=clean_environment(), cwd=tmp_path)
    assert result.returncode != 0
    assert "unknown key 'dta'" in result.stderr and str(config) in result.stderr, result.stderr
    assert not (tmp_path / "var").exists()


def test_a_bad_listen_address_in_the_file_names_the_file(serve, tmp_path):
    config = write_config(tmp_path / "bad.toml", 'listen = "localhost"\n')
    server = serve("--config", str(config), "--data", str(tmp_path / "data"))
    assert server.wait_exit() == 2
    message = server.output()
    assert "listen address 'localhost' has no port" in message, message
    assert str(config) in message and "'listen'" in message, message


def test_a_bad_listen_address_says_how_to_write_it(serve, tmp_path):
    for listen, phrase in (("localhost", "has no port; write it as HOST:PORT"),
                           ("127.0.0.1:99999", "has no valid port (0-65535)"),
                           ("127.0.0.1:http", "has no valid port")):
        server = serve("--listen", listen, "--data", str(tmp_path / "data"))
        assert server.wait_exit() == 2, listen
        assert f"listen address '{listen}' {phrase}" in server.output(), server.output()


# --- a port in use -------------------------------------------------------------------------------

def test_a_port_in_use_exits_non_zero_saying_so(serve, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        server = serve("--listen", f"127.0.0.1:{port}", "--data", str(data))
        code = server.wait_exit()
        message = server.output()
        assert code == 1, message
        assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in message, message
        assert "listening on" not in message
        # Another wheelhouse on the port gets the same answer.
    first = serve("--listen", "127.0.0.1:0", "--data", str(data)).wait_listening()
    port = int(first.url.rstrip("/").rsplit(":", 1)[1])
    second = serve("--listen", f"127.0.0.1:{port}", "--data", str(tmp_path / "other"))
    assert second.wait_exit() == 1
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in second.output(), second.output()
    assert status_of(first.url + "healthz") == 200  # the first server is untouched


def test_remote_settings_follow_the_same_precedence(serve, tmp_path):
    """A remote setting from the file, overridden by its WHEELHOUSE_* variable, overridden by its
    flag; shown by the start-up check of the value that wins."""
    data = str(tmp_path / "data")
    config = write_config(tmp_path / "remote.toml", 'remote-download-mode = "proxy"\nremote-connect-timeout = 0\n'
                                                    'remote-allowed-hosts = ["github.com", "Mirror.Example"]\n')
    from_file = serve("--config", str(config), "--data", data, "--listen", "127.0.0.1:0")
    assert from_file.wait_exit() == 2
    assert f"configuration file {config}: key 'remote-connect-timeout': must be at least 1 second" in from_file.output()

    environment = clean_environment(WHEELHOUSE_REMOTE_CONNECT_TIMEOUT="5")
    serve("--config", str(config), "--data", data, "--listen", "127.0.0.1:0", env=environment).wait_listening()

    from_flag = serve("--config", str(config), "--data", data, "--listen", "127.0.0.1:0",
                      "--remote-connect-timeout", "0", env=environment)
    assert from_flag.wait_exit() == 2
    assert "--remote-connect-timeout: must be at least 1 second" in from_flag.output()

    bad_mode = serve("--data", data, "--listen", "127.0.0.1:0",
                     env=clean_environment(WHEELHOUSE_REMOTE_DOWNLOAD_MODE="teleport"))
    assert bad_mode.wait_exit() == 2
    assert "--remote-download-mode: 'teleport' is not a download mode; use redirect, proxy or cache" in bad_mode.output()

    bad_host = serve("--data", data, "--listen", "127.0.0.1:0", "--remote-allowed-hosts", "github.com,https://x.example/")
    assert bad_host.wait_exit() == 2
    assert "'https://x.example/' is not a host name" in bad_host.output()


def test_remote_options_are_documented_in_help(wheelhouse_bin):
    text = subprocess.run([str(wheelhouse_bin), "serve", "--help"], capture_output=True, text=True, timeout=30).stdout
    for flag, variable in (("--github-api-url", "WHEELHOUSE_GITHUB_API_URL"), ("--github-token", "WHEELHOUSE_GITHUB_TOKEN"),
                           ("--ca-bundle", "WHEELHOUSE_CA_BUNDLE"),
                           ("--remote-allowed-hosts", "WHEELHOUSE_REMOTE_ALLOWED_HOSTS"),
                           ("--remote-allow-private-addresses", "WHEELHOUSE_REMOTE_ALLOW_PRIVATE_ADDRESSES"),
                           ("--remote-download-mode", "WHEELHOUSE_REMOTE_DOWNLOAD_MODE"),
                           ("--remote-connect-timeout", "WHEELHOUSE_REMOTE_CONNECT_TIMEOUT"),
                           ("--remote-read-timeout", "WHEELHOUSE_REMOTE_READ_TIMEOUT")):
        assert flag in text and variable in text, (flag, text)
