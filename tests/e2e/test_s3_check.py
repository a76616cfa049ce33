"""`wheelhouse s3-check` against a real Ceph radosgw (deploy/radosgw.sh: one mon, one memstore
OSD, radosgw's beast frontend on loopback), issue 29: the S3 client's Signature V4 requests,
uploads with their sha256, presigned URLs and its refusals, before any blob depends on them.
s3cmd, a client of its own, makes the bucket and looks at what the check leaves behind."""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import threading

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
RADOSGW = REPO / "deploy" / "radosgw.sh"


def read_env(path: pathlib.Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture(scope="module")
def radosgw():
    for tool in ("ceph-mon", "ceph-osd", "radosgw", "s3cmd"):
        assert shutil.which(tool), f"{tool} is not installed; run deploy/install-deps.sh"
    # Short: Ceph's admin sockets live under it, and a socket path is at most 107 bytes.
    folder = pathlib.Path(tempfile.mkdtemp(prefix="rgw-", dir="/tmp"))
    started = subprocess.run(["bash", str(RADOSGW), "start", str(folder)], capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr
    env = read_env(folder / "env")
    env["RADOSGW_DIR"] = str(folder)  # for deploy/radosgw.sh stop-gateway / start-gateway
    made = s3cmd(env, "mb", "s3://wheels")
    assert made.returncode == 0, made.stderr
    yield env
    subprocess.run(["bash", str(RADOSGW), "stop", str(folder)], capture_output=True, timeout=60)
    shutil.rmtree(folder, ignore_errors=True)


def s3cmd(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
    host = f"127.0.0.1:{env['RGW_PORT']}"
    return subprocess.run(["s3cmd", "--no-ssl", f"--host={host}", f"--host-bucket={host}",
                           f"--access_key={env['S3_ACCESS_KEY']}", f"--secret_key={env['S3_SECRET_KEY']}",
                           "--config=/dev/null", *arguments], capture_output=True, text=True, timeout=60)


def check(wheelhouse_bin, env: dict[str, str], *arguments: str, secret: str | None = None,
          endpoint: str | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    environment.update(AWS_ACCESS_KEY_ID=env["S3_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=secret or env["S3_SECRET_KEY"])
    return subprocess.run([str(wheelhouse_bin), "s3-check", "--s3-endpoint", endpoint or env["S3_ENDPOINT"],
                           *arguments], capture_output=True, text=True, timeout=120, env=environment)


def test_a_bucket_that_will_do_passes_every_step_and_is_left_as_found(wheelhouse_bin, radosgw):
    done = check(wheelhouse_bin, radosgw, "--s3-bucket", "wheels", "--s3-prefix", "team/wheels/")
    assert done.returncode == 0, done.stdout + done.stderr
    steps = done.stdout.splitlines()
    assert len(steps) == 6 and all(step.startswith("ok  ") for step in steps), done.stdout
    assert "put team/wheels/.wheelhouse-check/" in steps[1]
    # The store itself refused the lying body, by its own error code.
    assert "XAmzContentSHA256Mismatch" in steps[4], steps[4]
    listed = s3cmd(radosgw, "ls", "--recursive", "s3://wheels/")
    assert listed.returncode == 0 and listed.stdout.strip() == "", listed.stdout
    # The secret is never printed.
    assert radosgw["S3_SECRET_KEY"] not in done.stdout + done.stderr


def test_credentials_from_a_file_first_profile_only(wheelhouse_bin, radosgw, tmp_path):
    credentials = tmp_path / "credentials"
    credentials.write_text(f"[default]\naws_access_key_id = {radosgw['S3_ACCESS_KEY']}\n"
                           f"aws_secret_access_key = {radosgw['S3_SECRET_KEY']}\n\n"
                           "[other]\naws_access_key_id = WRONG\naws_secret_access_key = wrong\n")
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    done = subprocess.run([str(wheelhouse_bin), "s3-check", "--s3-endpoint", radosgw["S3_ENDPOINT"], "--s3-bucket",
                           "wheels", "--s3-credentials-file", str(credentials)], capture_output=True, text=True,
                          timeout=120, env=environment)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("case,arguments,secret,message", [
    ("wrong secret", ["--s3-bucket", "wheels"], "not-the-secret",
     "the bucket: check the access key pair (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or s3-credentials-file)"),
    ("no bucket", ["--s3-bucket", "no-such-bucket"], None, "the bucket: create the bucket, or correct s3-bucket"),
    ("a bucket that is a path", ["--s3-bucket", "wheels/x"], None, "settings: s3-bucket must name one bucket"),
])
def test_what_will_not_do_is_said_at_once_with_the_fix_first(wheelhouse_bin, radosgw, case, arguments, secret,
                                                              message):
    done = check(wheelhouse_bin, radosgw, *arguments, secret=secret)
    assert done.returncode == 1, done.stdout
    assert done.stderr.startswith("wheelhouse s3-check: " + message), done.stderr
    assert radosgw["S3_SECRET_KEY"] not in done.stderr
    if secret:
        assert secret not in done.stderr


@pytest.mark.parametrize("endpoint,why", [
    ("http://key:secret@127.0.0.1:1", "has credentials in it"),
    ("http://127.0.0.1:1/wheels", "has a path, query or fragment"),
    ("ftp://127.0.0.1:1", "is neither http nor https"),
    ("not a url", "is not a URL"),
])
def test_an_endpoint_of_the_wrong_form_is_refused_before_any_request(wheelhouse_bin, radosgw, endpoint, why):
    done = check(wheelhouse_bin, radosgw, "--s3-bucket", "wheels", endpoint=endpoint)
    assert done.returncode == 1
    assert why in done.stderr and "secret" not in done.stderr.replace("has credentials", ""), done.stderr


def test_no_credentials_anywhere_is_refused_with_where_to_put_them(wheelhouse_bin, radosgw):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    done = subprocess.run([str(wheelhouse_bin), "s3-check", "--s3-endpoint", radosgw["S3_ENDPOINT"], "--s3-bucket",
                           "wheels"], capture_output=True, text=True, timeout=60, env=environment)
    assert done.returncode == 1
    assert done.stderr.startswith("wheelhouse s3-check: credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")


def test_a_store_that_is_down_or_silent_is_reported_within_the_timeout(wheelhouse_bin, radosgw):
    # Nothing listens: refused at once.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    done = check(wheelhouse_bin, radosgw, "--s3-bucket", "wheels", endpoint=f"http://127.0.0.1:{closed_port}")
    assert done.returncode == 1 and "failed while connecting" in done.stderr, done.stderr

    # Accepts and never answers: cut at --s3-timeout.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    held = []
    stop = threading.Event()

    def accept() -> None:
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(silent.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        done = check(wheelhouse_bin, radosgw, "--s3-bucket", "wheels", "--s3-timeout", "1",
                     endpoint=f"http://127.0.0.1:{silent.getsockname()[1]}")
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        silent.close()
    assert done.returncode == 1 and "no answer in time (s3-timeout)" in done.stderr, done.stderr


# --- wheelhouse s3-push: the blob store's files copied into the bucket ------------------------

def push(wheelhouse_bin, env: dict[str, str], data: pathlib.Path, *arguments: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    environment.update(AWS_ACCESS_KEY_ID=env["S3_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=env["S3_SECRET_KEY"])
    return subprocess.run([str(wheelhouse_bin), "s3-push", "--data", str(data), "--s3-endpoint", env["S3_ENDPOINT"],
                           "--s3-bucket", "wheels", *arguments], capture_output=True, text=True, timeout=300,
                          env=environment)


def listed(env: dict[str, str], prefix: str) -> dict[str, int]:
    """Key → size of what s3cmd lists under s3://wheels/PREFIX."""
    done = s3cmd(env, "ls", "--recursive", f"s3://wheels/{prefix}")
    assert done.returncode == 0, done.stderr
    sizes = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        sizes[fields[-1].removeprefix("s3://wheels/")] = int(fields[2])
    return sizes


def test_push_copies_every_blob_and_metadata_by_its_name_and_skips_them_the_second_time(wheelhouse_bin, radosgw,
                                                                                      tmp_path):
    from conftest import ingest
    from wheelbuilder import build_wheel

    farm = tmp_path / "farm"
    build_wheel(farm, "pushed", "1.0")
    build_wheel(farm, "pushed", "1.1", files={"pushed/big.bin": os.urandom(300_000).hex()})
    data = tmp_path / "data"
    assert ingest(wheelhouse_bin, data, farm).returncode == 0
    on_disk = {str(path.relative_to(data)): path.stat().st_size for path in (data / "blobs").rglob("*")
               if path.is_file()}
    assert len(on_disk) == 4  # two wheels, two METADATA

    first = push(wheelhouse_bin, radosgw, data, "--s3-prefix", "idx/")
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.startswith("copied 4 files ("), first.stdout
    # An object another tool wrote under a blob's name, same size, other bytes: put again.
    wheel_key = next(name for name in on_disk if not name.endswith(".metadata"))
    impostor = tmp_path / "impostor"
    impostor.write_bytes(b"\0" * on_disk[wheel_key])
    assert s3cmd(radosgw, "put", str(impostor), f"s3://wheels/idx/{wheel_key}").returncode == 0
    mended = push(wheelhouse_bin, radosgw, data, "--s3-prefix", "idx/")
    assert mended.returncode == 0, mended.stderr
    assert mended.stdout.startswith("copied 1 files ("), mended.stdout
    assert listed(radosgw, "idx/") == {f"idx/{name}": size for name, size in on_disk.items()}
    # The bytes, fetched by a client of its own, are the ones on disk.
    wheel = next(name for name in on_disk if not name.endswith(".metadata"))
    fetched = s3cmd(radosgw, "get", f"s3://wheels/idx/{wheel}", str(tmp_path / "fetched"))
    assert fetched.returncode == 0, fetched.stderr
    assert (tmp_path / "fetched").read_bytes() == (data / wheel).read_bytes()

    again = push(wheelhouse_bin, radosgw, data, "--s3-prefix", "idx/")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("copied 0 files (0 bytes) to bucket 'wheels'; 4 were there already; 0 refused")


def test_push_refuses_a_local_blob_whose_bytes_no_longer_match_its_name(wheelhouse_bin, radosgw, tmp_path):
    from conftest import ingest
    from wheelbuilder import build_wheel

    build_wheel(tmp_path / "farm", "rotted", "1.0")
    data = tmp_path / "data"
    assert ingest(wheelhouse_bin, data, tmp_path / "farm").returncode == 0
    blob = next(path for path in (data / "blobs").rglob("*") if path.is_file() and path.suffix != ".metadata")
    rotten = bytearray(blob.read_bytes())
    rotten[100] ^= 0xFF
    blob.chmod(0o644)
    blob.write_bytes(bytes(rotten))

    done = push(wheelhouse_bin, radosgw, data, "--s3-prefix", "rot/")
    assert done.returncode == 1, done.stdout
    assert "was refused (XAmzContentSHA256Mismatch): run wheelhouse fsck" in done.stderr, done.stderr
    assert done.stdout.startswith("copied 1 files"), done.stdout  # the METADATA went; the blob did not
    assert [key for key in listed(radosgw, "rot/") if not key.endswith(".metadata")] == []


def test_push_needs_an_existing_data_folder_and_a_bucket_that_will_do(wheelhouse_bin, radosgw, tmp_path):
    done = push(wheelhouse_bin, radosgw, tmp_path / "nothing-here")
    assert done.returncode == 1 and "catalog" in done.stderr, done.stderr
    assert not (tmp_path / "nothing-here").exists()
    (tmp_path / "data").mkdir()
    from conftest import ingest
    from wheelbuilder import build_wheel
    build_wheel(tmp_path / "farm", "nobucket", "1.0")
    assert ingest(wheelhouse_bin, tmp_path / "data", tmp_path / "farm").returncode == 0
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    environment.update(AWS_ACCESS_KEY_ID=radosgw["S3_ACCESS_KEY"], AWS_SECRET_ACCESS_KEY=radosgw["S3_SECRET_KEY"])
    done = subprocess.run([str(wheelhouse_bin), "s3-push", "--data", str(tmp_path / "data"), "--s3-endpoint",
                           radosgw["S3_ENDPOINT"], "--s3-bucket", "no-such-bucket"], capture_output=True, text=True,
                          timeout=60, env=environment)
    assert done.returncode == 1
    assert done.stderr.startswith("wheelhouse s3-push: create the bucket, or correct s3-bucket"), done.stderr
