"""HTTPS served by the binary itself (issue 25 item 1): pip, twine, curl and poetry over TLS with a
test CA; the certificate read again on SIGHUP under load; the plain-HTTP listener that only
redirects; and what an attacker sends to a TLS port (or TLS to a plain one). The framing, limit
and slow-client tests of test_hostile_clients.py run over TLS there."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import os
import pathlib
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.parse

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import clean_pip_environment, ingest
from server_process import ServerProcess, wheelhouse_binary
from test_clients import client_environment, installed_version
from test_uploads import make_token, twine
from tls_client import TlsConnection, client_context
from wheelbuilder import build_wheel

VERSION = "1.0+cu128torch2.8"


# --- certificates ------------------------------------------------------------------------------

def issue(directory: pathlib.Path, ca_pem: pathlib.Path, ca_key: pathlib.Path, name: str,
          valid_from: datetime.datetime | None = None, valid_for: datetime.timedelta = datetime.timedelta(days=2)):
    """A server certificate for 127.0.0.1 and localhost signed by the test CA; returns (pem, key)."""
    ca = x509.load_pem_x509_certificate(ca_pem.read_bytes())
    signer = serialization.load_pem_private_key(ca_key.read_bytes(), None)
    key = ec.generate_private_key(ec.SECP256R1())
    start = valid_from or datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    certificate = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                   .issuer_name(ca.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(start).not_valid_after(start + valid_for)
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                               x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .sign(signer, hashes.SHA256()))
    pem, key_file = directory / f"{name}.pem", directory / f"{name}.key"
    pem.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return pem, key_file


def served_certificate(url: str) -> x509.Certificate:
    host, port = url.removeprefix("https://").rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        with context.wrap_socket(raw, server_hostname=host) as tls:
            return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))


def common_name(certificate: x509.Certificate) -> str:
    return certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value


def port_of(url: str) -> int:
    return int(url.rstrip("/").rsplit(":", 1)[1])


@pytest.fixture
def https(tmp_path, wheelhouse_bin, start_server, tls_files):
    """A data folder with one kernels wheel and an upload token, served over HTTPS."""
    data = tmp_path / "data"
    data.mkdir()
    wheel = build_wheel(tmp_path / "wheels", "kernels", VERSION)
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    token = make_token(wheelhouse_bin, data, "ci", "--scope", "upload")
    server = start_server(data, *tls_files.serve_arguments(), ca=tls_files.ca)
    assert server.url.startswith("https://127.0.0.1:")
    return server, token


def pip_over(tmp_path, ca: pathlib.Path) -> dict:
    env = clean_pip_environment(tmp_path)
    env["PIP_CERT"] = str(ca)
    return env


# --- the clients -------------------------------------------------------------------------------

def test_pip_installs_over_https_with_the_test_ca_and_refuses_without_it(https, tmp_path, tls_files):
    server, _ = https
    command = ["/usr/bin/python3", "-m", "pip", "install", "--no-deps", "--target", str(tmp_path / "target"),
               "--index-url", server.url + "simple/", "kernels"]
    installed = subprocess.run(command, env=pip_over(tmp_path, tls_files.ca), capture_output=True, text=True,
                               timeout=300)
    assert installed.returncode == 0, installed.stderr
    assert (tmp_path / "target" / "kernels").is_dir()
    untrusted = subprocess.run(command[:-1] + ["--retries", "0", "kernels"], env=clean_pip_environment(tmp_path),
                               capture_output=True, text=True, timeout=300)
    assert untrusted.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in untrusted.stdout + untrusted.stderr


def test_twine_uploads_over_https(https, tmp_path, tls_files):
    server, token = https
    wheel = build_wheel(tmp_path / "new", "kernels", "1.1+cu128torch2.8")
    uploaded = twine(server.url, token, wheel, extra=("--cert", str(tls_files.ca)))
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    with server.get("/simple/kernels/") as page:
        assert wheel.name in page.read().decode()


def test_curl_downloads_a_large_file_over_https_whole_and_by_range_with_flat_memory(tmp_path, wheelhouse_bin,
                                                                                      start_server, tls_files):
    data = tmp_path / "data"
    data.mkdir()
    payload = os.urandom(48 << 20)  # incompressible: the wheel is as large as its file
    wheel = build_wheel(tmp_path / "wheels", "bigkernels", "1.0", files={"bigkernels/kernel.so": payload})
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    server = start_server(data, *tls_files.serve_arguments(), ca=tls_files.ca)
    with server.get("/simple/bigkernels/") as page:
        link = re.search(r'href="([^"#]+)', page.read().decode()).group(1)
    url = urllib.parse.urljoin(server.url + "simple/bigkernels/", link)
    before = rss_kib(server)
    whole = subprocess.run(["curl", "-sS", "--fail", "--cacert", str(tls_files.ca), url], capture_output=True,
                           timeout=120)
    assert whole.returncode == 0, whole.stderr
    assert hashlib.sha256(whole.stdout).hexdigest() == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert rss_kib(server) - before < 16 << 10  # pieces of 64 KiB, never the file
    part = subprocess.run(["curl", "-sS", "--fail", "--cacert", str(tls_files.ca), "-r", "1000-70999", url],
                          capture_output=True, timeout=60)
    assert part.stdout == wheel.read_bytes()[1000:71000]


def rss_kib(server: ServerProcess) -> int:
    status = pathlib.Path(f"/proc/{server.process.pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))


def test_poetry_adds_a_package_from_the_index_over_https(https, tmp_path, tls_files):
    if not shutil.which("poetry", path="/usr/bin"):
        pytest.fail("poetry is missing; run deploy/install-deps.sh (Debian's python3-poetry)")
    server, _ = https
    folder = tmp_path / "app"
    folder.mkdir()
    script = (f"poetry init --no-interaction --name app\n"
              f"poetry source add --default wheelhouse {server.url}simple/\n"
              f"poetry config certificates.wheelhouse.cert {tls_files.ca}\n"
              f"poetry add kernels\n")
    env = client_environment(folder, "")
    ran = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=env, capture_output=True,
                         text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert installed_version(folder) == VERSION


# --- the certificate: at start and on SIGHUP ----------------------------------------------------

def test_sighup_swaps_the_certificate_under_load_without_a_failed_request(tmp_path, start_server, tls_files):
    if not shutil.which("wrk"):
        pytest.fail("wrk is missing; run deploy/install-deps.sh")
    directory = tmp_path / "certs"
    directory.mkdir()
    ca_key = tls_files.ca.parent / "ca.key"
    first_pem, first_key = issue(directory, tls_files.ca, ca_key, "first")
    live_pem, live_key = directory / "live.pem", directory / "live.key"
    shutil.copy(first_pem, live_pem)
    shutil.copy(first_key, live_key)
    (tmp_path / "data").mkdir()
    server = start_server(tmp_path / "data", "--tls-cert", str(live_pem), "--tls-key", str(live_key),
                          ca=tls_files.ca)
    assert common_name(served_certificate(server.url)) == "first"
    second_pem, second_key = issue(directory, tls_files.ca, ca_key, "second")
    # New connections a second (wrk's threads reconnect on Connection: close) and kept-alive ones.
    load = [subprocess.Popen(["wrk", "-t1", "-c4", "-d4s", *extra, server.url + "simple/"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
            for extra in ([], ["-H", "Connection: close"])]
    time.sleep(1.5)
    shutil.copy(second_pem, live_pem)
    shutil.copy(second_key, live_key)
    server.process.send_signal(signal.SIGHUP)
    outputs = [run.communicate(timeout=30)[0] for run in load]
    for output in outputs:
        assert "requests in" in output, output
        assert "Socket errors" not in output and "Non-2xx" not in output, output
    assert common_name(served_certificate(server.url)) == "second"
    assert "new connections get the certificate of /CN=second" in server.stderr()
    # A key that is not the certificate's: the one in use stays, and says why in the log.
    shutil.copy(first_key, live_key)
    server.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while "kept the certificate in use" not in server.stderr() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "kept the certificate in use (/CN=second" in server.stderr()
    assert "is another key's" in server.stderr()
    assert common_name(served_certificate(server.url)) == "second"
    with server.get("/healthz") as answer:
        assert answer.status == 200


def start_refused(tmp_path, *arguments: str) -> subprocess.CompletedProcess:
    (tmp_path / "data").mkdir(exist_ok=True)
    return subprocess.run([wheelhouse_binary(), "serve", "--listen", "127.0.0.1:0", "--data", str(tmp_path / "data"),
                           *arguments], capture_output=True, text=True, timeout=30)


def test_a_bad_certificate_or_key_stops_the_start_with_the_fix(tmp_path, tls_files):
    ca_key = tls_files.ca.parent / "ca.key"
    now = datetime.datetime.now(datetime.timezone.utc)
    expired_pem, expired_key = issue(tmp_path, tls_files.ca, ca_key, "expired",
                                     valid_from=now - datetime.timedelta(days=3))
    future_pem, future_key = issue(tmp_path, tls_files.ca, ca_key, "future", valid_from=now + datetime.timedelta(days=1))
    other_pem, other_key = issue(tmp_path, tls_files.ca, ca_key, "other")
    garbage = tmp_path / "garbage.pem"
    garbage.write_bytes(b"\xff\xfe not a certificate\n")
    cases = [
        (["--tls-cert", str(expired_pem), "--tls-key", str(expired_key)], "renew the certificate in"),
        (["--tls-cert", str(future_pem), "--tls-key", str(future_key)], "is valid only from"),
        (["--tls-cert", str(tls_files.certificate), "--tls-key", str(other_key)], "give --tls-key the key of"),
        (["--tls-cert", str(garbage), "--tls-key", str(other_key)], "give --tls-cert a readable PEM file"),
        (["--tls-cert", str(tmp_path / "missing.pem"), "--tls-key", str(other_key)], "give --tls-cert a readable"),
        (["--tls-cert", str(other_pem)], "give --tls-cert and --tls-key together"),
        (["--redirect-http", "127.0.0.1:0"], "give --tls-cert and --tls-key with --redirect-http"),
    ]
    for arguments, fix in cases:
        refused = start_refused(tmp_path, *arguments)
        assert refused.returncode == 2, (arguments, refused.stderr)
        assert fix in refused.stderr and "listening on" not in refused.stderr, (arguments, refused.stderr)


# --- the plain-HTTP listener that redirects ------------------------------------------------------

def redirect_url(server: ServerProcess) -> str:
    return re.search(r"redirecting (http://[^/\s]+/) to https", server.stderr()).group(1)


def test_the_plain_listener_redirects_every_method_and_pip_follows_it(tmp_path, wheelhouse_bin, start_server,
                                                                       tls_files):
    data = tmp_path / "data"
    data.mkdir()
    wheel = build_wheel(tmp_path / "wheels", "kernels", VERSION)
    assert ingest(wheelhouse_bin, data, wheel).returncode == 0
    server = start_server(data, *tls_files.serve_arguments(), "--redirect-http", "127.0.0.1:0", ca=tls_files.ca)
    plain = redirect_url(server)
    port = port_of(server.url)
    head = subprocess.run(["curl", "-sSI", plain + "simple/kernels/?x=1"], capture_output=True, text=True, timeout=30)
    assert head.stdout.startswith("HTTP/1.1 301 ")
    assert f"Location: https://127.0.0.1:{port}/simple/kernels/?x=1\n" in head.stdout
    # An upload is not dropped to a GET: 308 keeps the method, and its body is never read here.
    post = subprocess.run(["curl", "-sS", "-i", "-X", "POST", "--data-binary", "@" + str(wheel), plain + "legacy/"],
                          capture_output=True, text=True, timeout=30)
    assert post.stdout.startswith("HTTP/1.1 308 ") and f"Location: https://127.0.0.1:{port}/legacy/" in post.stdout
    assert "Connection: close" in post.stdout
    forged = subprocess.run(["curl", "-sS", "-i", "-H", "Host: evil.example/../x", plain + "simple/"],
                            capture_output=True, text=True, timeout=30)
    assert forged.stdout.startswith("HTTP/1.1 400 ") and "Location" not in forged.stdout
    installed = subprocess.run(["/usr/bin/python3", "-m", "pip", "install", "--no-deps", "--target",
                                str(tmp_path / "target"), "--index-url", plain + "simple/", "kernels"],
                               env=pip_over(tmp_path, tls_files.ca), capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    assert (tmp_path / "target" / "kernels").is_dir()


# --- an attacker at the TLS port ----------------------------------------------------------------

def client_hello() -> bytes:
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def read_all(connection: socket.socket, timeout: float) -> tuple[bytes, float]:
    """What arrives until the server closes, and after how many seconds it closed."""
    started = time.monotonic()
    connection.settimeout(timeout)
    received = b""
    try:
        while piece := connection.recv(65536):
            received += piece
    except (socket.timeout, ConnectionResetError):
        pass
    return received, time.monotonic() - started


def address_of(url: str) -> tuple[str, int]:
    return "127.0.0.1", port_of(url)


def test_plain_http_to_the_tls_port_hears_to_use_https(https):
    server, _ = https
    with socket.create_connection(address_of(server.url)) as connection:
        connection.sendall(b"GET /simple/ HTTP/1.1\r\nHost: x\r\n\r\n")
        answer, _ = read_all(connection, 5)
    assert answer.startswith(b"HTTP/1.1 400 ") and b"use https:// for this address" in answer, answer
    with server.get("/healthz") as healthy:
        assert healthy.status == 200


def test_tls_to_a_plain_port_is_a_400_and_the_server_serves_on(tmp_path, start_server):
    (tmp_path / "data").mkdir()
    server = start_server(tmp_path / "data")
    with socket.create_connection(address_of(server.url)) as connection:
        connection.sendall(client_hello())
        answer, _ = read_all(connection, 5)
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    with server.get("/healthz") as healthy:
        assert healthy.status == 200


def test_a_handshake_that_stops_halfway_is_closed_at_its_deadline_and_others_are_served(tmp_path, start_server,
                                                                                         tls_files):
    (tmp_path / "data").mkdir()
    server = start_server(tmp_path / "data", *tls_files.serve_arguments(), "--idle-timeout", "2",
                          ca=tls_files.ca)
    hello = client_hello()
    stalled = [socket.create_connection(address_of(server.url)) for _ in range(20)]
    for connection in stalled:
        connection.sendall(hello[:len(hello) // 2])
    with server.get("/healthz") as healthy:  # served while they stall
        assert healthy.status == 200
    for connection in stalled:
        answer, after = read_all(connection, 10)
        assert answer == b"" and after < 4, (answer, after)
        connection.close()


def test_garbage_handshakes_cost_nothing_lasting(https):
    server, _ = https
    before = rss_kib(server)
    hello = client_hello()
    for number in range(300):
        with socket.create_connection(address_of(server.url)) as connection:
            # Random records, a truncated hello, a hello with its length field lying, a bare alert.
            junk = [os.urandom(600), hello[:40], hello[:3] + b"\xff\xff" + hello[5:], b"\x15\x03\x03\x00\x02\x02\x28"]
            try:
                connection.sendall(junk[number % len(junk)])
                connection.shutdown(socket.SHUT_WR)  # and hangs up: the stall is the test above
            except OSError:  # the server refused the junk and closed first
                pass
            _, after = read_all(connection, 5)
            assert after < 2
    assert rss_kib(server) - before < 8 << 10
    with server.get("/healthz") as healthy:
        assert healthy.status == 200


def test_old_protocols_and_foreign_alpn_are_refused_at_the_handshake(https, tls_files):
    server, _ = https
    address = address_of(server.url)
    old = client_context(tls_files.ca)
    old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
    old.set_ciphers("DEFAULT:@SECLEVEL=0")
    with socket.create_connection(address) as raw, pytest.raises(ssl.SSLError):
        old.wrap_socket(raw, server_hostname="127.0.0.1")
    with pytest.raises(ssl.SSLError, match="NO_APPLICATION_PROTOCOL|no application protocol"):
        TlsConnection(address, tls_files.ca, alpn=["h2"])
    chosen = client_context(tls_files.ca)
    chosen.set_alpn_protocols(["h2", "http/1.1"])
    with socket.create_connection(address) as raw, chosen.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        assert tls.selected_alpn_protocol() == "http/1.1"
        assert tls.version() in ("TLSv1.2", "TLSv1.3")


def test_at_the_cap_idle_tls_connections_give_way_and_stalled_handshakes_do_not(tmp_path, start_server, tls_files):
    (tmp_path / "data").mkdir()
    server = start_server(tmp_path / "data", *tls_files.serve_arguments(), "--max-connections", "4",
                          ca=tls_files.ca)
    address = address_of(server.url)
    idle = [socket.create_connection(address) for _ in range(4)]  # connected, nothing sent: idle
    time.sleep(0.3)
    with server.get("/healthz") as healthy:  # one of them gives way
        assert healthy.status == 200
    for connection in idle:
        connection.close()
    time.sleep(0.3)
    hello = client_hello()
    stalled = [socket.create_connection(address) for _ in range(4)]
    for connection in stalled:  # mid-handshake: busy, as a request being read is
        connection.sendall(hello[:len(hello) // 2])
    time.sleep(0.3)
    with socket.create_connection(address) as newcomer:
        newcomer.sendall(hello)
        answer, after = read_all(newcomer, 5)
    assert answer == b"" and after < 2  # closed at once: no handshake is spent on a refusal
    for connection in stalled:
        connection.close()
