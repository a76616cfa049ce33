"""Backup while CI keeps uploading, restore into a fresh data folder, and serve the same pages;
fsck on a damaged data folder; every bad input refused with a message and nothing written."""

from __future__ import annotations

import hashlib
import pathlib
import shutil
import sqlite3
import subprocess
import threading
import time

import pytest

from test_uploads import curl, make_token, twine
from wheelbuilder import build_wheel


def run(binary, *args: object) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=300)


def file_rows(data: pathlib.Path) -> list[tuple]:
    with sqlite3.connect(data / "catalog.db") as db:
        return db.execute("SELECT filename, sha256 FROM files ORDER BY filename").fetchall()


def projects(data: pathlib.Path) -> list[str]:
    with sqlite3.connect(data / "catalog.db") as db:
        return [row[0] for row in db.execute("SELECT name FROM projects ORDER BY name")]


def page(server, path: str, json: bool = False) -> bytes:
    headers = {"Accept": "application/vnd.pypi.simple.v1+json" if json else "text/html"}
    with server.get(path, headers) as response:
        return response.read()


def pages(server, names: list[str]) -> dict[str, bytes]:
    """Every simple page of `names`, both formats, in /simple/ and one variant index."""
    out = {}
    for prefix in ("/simple/", "/variants/cu130-torch2.10/simple/"):
        for path in [prefix] + [f"{prefix}{name}/" for name in names]:
            out[path] = page(server, path)
            out[path + "#json"] = page(server, path, json=True)
    return out


class UploadLoad:
    """Uploads new wheels of one project in a loop, by curl and twine in turn, until stopped."""

    def __init__(self, url: str, token: str, dist: pathlib.Path):
        self.url, self.token, self.dist = url, token, dist
        self.done: list[str] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        number = 0
        while not self._stop.is_set():
            number += 1
            wheel = build_wheel(self.dist, "loadgen", f"1.{number}", files={"loadgen/data.bin": bytes([number % 256]) * 200_000})
            if number % 2:
                status, body = curl("-u", f"__token__:{self.token}", "-F", f"content=@{wheel}", self.url + "legacy/")
                ok = status == 201
                detail = f"{status} {body}"
            else:
                result = twine(self.url, self.token, wheel)
                ok = result.returncode == 0
                detail = result.stdout + result.stderr
            (self.done if ok else self.failures).append(wheel.name if ok else f"{wheel.name}: {detail}")

    def __enter__(self):
        self._thread.start()
        return self

    def wait_for(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(self.done) < count:
            assert not self.failures, self.failures
            assert time.monotonic() < deadline, f"only {len(self.done)} uploads in {timeout}s"
            time.sleep(0.05)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=120)


@pytest.fixture
def live(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    server = start_server(data)
    dist = tmp_path / "dist"
    wheels = [
        build_wheel(dist, "kernels", "1.0.0+cu128torch2.8", tags="cp311-cp311-linux_x86_64", summary="Kernels"),
        build_wheel(dist, "kernels", "1.0.0+cu130torch2.10", tags="cp311-cp311-linux_x86_64", summary="Kernels"),
        build_wheel(dist, "kernel-helper", "0.3", requires_python=">=3.9"),
    ]
    uploaded = twine(server.url, token, *wheels)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    return server, data, token


def test_backup_under_upload_load_restores_and_serves_identical_pages(live, tmp_path, wheelhouse_bin, start_server, pip):
    server, data, token = live
    backups = tmp_path / "backups"
    with UploadLoad(server.url, token, tmp_path / "load") as load:
        load.wait_for(3)
        before = len(file_rows(data))
        made = run(wheelhouse_bin, "backup", "--data", data, "--blobs", backups / "under-load")
        during = len(load.done)
        load.wait_for(during + 2)  # the load was still running when the backup ended
    assert not load.failures, load.failures
    assert made.returncode == 0, made.stdout + made.stderr
    assert "wheelhouse backup:" in made.stdout and "blobs" in made.stdout

    restored = tmp_path / "restored"
    result = run(wheelhouse_bin, "restore", "--data", restored, backups / "under-load")
    assert result.returncode == 0, result.stdout + result.stderr
    snapshot = file_rows(restored)
    live_rows = file_rows(data)
    assert before <= len(snapshot) <= len(live_rows)
    assert set(snapshot) <= set(live_rows)  # a consistent snapshot: rows as they were, none invented
    for filename, sha256 in snapshot:
        blob = restored / "blobs" / "sha256" / sha256[:2] / sha256[2:4] / sha256
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == sha256, filename
    fsck = run(wheelhouse_bin, "fsck", "--data", restored)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr

    from_backup = start_server(restored)
    stable = ["kernel-helper", "kernels"]
    assert pages(from_backup, stable) == pages(server, stable)
    # The project under load holds exactly the snapshot's files, each line as the live page has it.
    restored_load = page(from_backup, "/simple/loadgen/").decode().splitlines()
    anchors = [line for line in restored_load if "<a href" in line]
    assert len(anchors) == sum(1 for name, _ in snapshot if name.startswith("loadgen-"))
    assert set(restored_load) <= set(page(server, "/simple/loadgen/").decode().splitlines())

    # Quiet now: a second backup restores to a server whose every page is the live one, byte for byte.
    assert run(wheelhouse_bin, "backup", "--data", data, "--blobs", backups / "quiet").returncode == 0
    quiet = tmp_path / "quiet"
    assert run(wheelhouse_bin, "restore", "--data", quiet, backups / "quiet").returncode == 0
    from_quiet = start_server(quiet)
    names = projects(data)
    assert pages(from_quiet, names) == pages(server, names)

    target = tmp_path / "site"
    pip("install", "--index-url", from_backup.url + "simple/", "--target", str(target), "kernel-helper")
    assert (target / "kernel_helper-0.3.dist-info").is_dir()


def test_catalog_only_backup_restores_with_blobs_copied_by_hand(live, tmp_path, wheelhouse_bin):
    server, data, _ = live
    made = run(wheelhouse_bin, "backup", "--data", data, tmp_path / "backup")
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in (tmp_path / "backup").iterdir()) == ["catalog.db", "manifest.json"]
    restored = tmp_path / "restored"
    result = run(wheelhouse_bin, "restore", "--data", restored, tmp_path / "backup")
    assert result.returncode == 0, result.stderr
    assert "holds the catalog only" in result.stdout
    missing = run(wheelhouse_bin, "fsck", "--data", restored)
    assert missing.returncode == 1
    assert missing.stdout.count("PROBLEM missing blob") == 3
    shutil.copytree(data / "blobs", restored / "blobs", dirs_exist_ok=True)
    assert run(wheelhouse_bin, "fsck", "--data", restored).returncode == 0


def test_fsck_finds_and_repairs_damage(live, tmp_path, wheelhouse_bin):
    server, data, _ = live  # the server keeps running: fsck is safe beside it
    (filename_a, sha_a), (filename_b, sha_b), (filename_c, sha_c) = file_rows(data)
    blob = lambda sha: data / "blobs" / "sha256" / sha[:2] / sha[2:4] / sha  # noqa: E731
    damaged = bytearray(blob(sha_a).read_bytes())
    damaged[100] ^= 0xFF
    blob(sha_a).chmod(0o644)
    blob(sha_a).write_bytes(bytes(damaged))
    pathlib.Path(str(blob(sha_b)) + ".metadata").unlink()
    orphan = data / "blobs" / "sha256" / "ee" / "ee" / ("ee" * 32)
    orphan.parent.mkdir(parents=True)
    orphan.write_bytes(b"left over")

    found = run(wheelhouse_bin, "fsck", "--data", data)
    assert found.returncode == 1
    assert f"PROBLEM corrupt blob of {filename_a}" in found.stdout
    assert f"PROBLEM missing metadata of {filename_b}" in found.stdout
    assert "PROBLEM orphan blob" in found.stdout
    assert "3 found, 0 fixed, 3 left" in found.stdout

    fixed = run(wheelhouse_bin, "fsck", "--data", data, "--fix")
    assert "fixed   corrupt blob" in fixed.stdout and "fixed   orphan blob" in fixed.stdout
    assert "fixed   missing metadata" in fixed.stdout and "written again from the wheel" in fixed.stdout
    assert len(list((data / "quarantine").iterdir())) == 1
    assert not orphan.exists()
    # The corrupt wheel left the store, so its row now lacks it: kept unless asked, and said so.
    assert fixed.returncode == 1, fixed.stdout
    assert "4 found, 3 fixed, 1 left" in fixed.stdout
    assert f"PROBLEM missing blob of {filename_a}" in fixed.stdout and "--delete-missing-rows" in fixed.stdout
    assert run(wheelhouse_bin, "fsck", "--data", data, "--fix").returncode == 1
    # A backup now carries everything else, and says what it could not.
    partial = run(wheelhouse_bin, "backup", "--data", data, "--blobs", tmp_path / "partial")
    assert partial.returncode == 3, partial.stdout + partial.stderr
    assert f"warning: the blob of {filename_a}" in partial.stderr and "run `wheelhouse fsck`" in partial.stderr
    assert (tmp_path / "partial" / "manifest.json").exists()
    deleted = run(wheelhouse_bin, "fsck", "--data", data, "--fix", "--delete-missing-rows")
    assert deleted.returncode == 0, deleted.stdout
    assert [row[0] for row in file_rows(data)] == [filename_b, filename_c]
    assert run(wheelhouse_bin, "fsck", "--data", data).returncode == 0


def test_bad_backup_targets_and_broken_backups_are_refused(live, tmp_path, wheelhouse_bin):
    server, data, _ = live
    good = tmp_path / "good"
    assert run(wheelhouse_bin, "backup", "--data", data, "--blobs", good).returncode == 0

    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    (tmp_path / "a-file").write_text("x")
    for target, message in [
        (pathlib.Path("/sys/wheelhouse-backup"), "cannot write in /sys"),  # unwritable, even for root
        (tmp_path / "a-file" / "backup", "cannot create the folder"),
        (full, "is not empty"),
    ]:
        result = run(wheelhouse_bin, "backup", "--data", data, "--blobs", target)
        assert result.returncode == 1, (target, result.stdout)
        assert message in result.stderr and "no backup was written" in result.stderr, result.stderr
    assert sorted(p.name for p in full.iterdir()) == ["keep.txt"]
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name]
    missing = run(wheelhouse_bin, "backup", "--data", tmp_path / "nowhere", tmp_path / "b")
    assert missing.returncode == 1 and "no catalog at" in missing.stderr
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / "b").exists()

    def broken(name: str, damage) -> pathlib.Path:
        copy = tmp_path / name
        shutil.copytree(good, copy)
        damage(copy)
        return copy

    def truncate(path: pathlib.Path) -> None:
        path.chmod(0o644)
        with open(path, "r+b") as handle:
            handle.truncate(path.stat().st_size // 2)

    half_written = broken("half", lambda d: (d / "manifest.json").unlink())
    cut_catalog = broken("cut", lambda d: truncate(d / "catalog.db"))
    sha = file_rows(data)[0][1]
    cut_blob = broken("cut-blob", lambda d: truncate(d / "blobs" / "sha256" / sha[:2] / sha[2:4] / sha))
    not_json = broken("garbled", lambda d: (d / "manifest.json").write_text("{\"format\": \"wheelhouse-b"))
    for backup, message in [
        (half_written, "not a finished wheelhouse backup"),
        (cut_catalog, "cut short"),
        (cut_blob, "cut short"),
        (not_json, "not valid JSON"),
        (tmp_path / "no-such-backup", "is not a folder"),
    ]:
        target = tmp_path / f"restored-{backup.name}"
        result = run(wheelhouse_bin, "restore", "--data", target, backup)
        assert result.returncode == 1, (backup, result.stdout)
        assert message in result.stderr and "nothing was restored" in result.stderr, result.stderr
        assert not target.exists()
    # A restore never overwrites a data folder, the live one least of all.
    result = run(wheelhouse_bin, "restore", "--data", data, good)
    assert result.returncode == 1 and "is not empty" in result.stderr
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name]
