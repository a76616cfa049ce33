"""The bucket store (issue 29), on a one-node Ceph radosgw on loopback (deploy/radosgw.sh) sharing
the box with the server, each figure beside a reference measured in the same run:

1. A 1 GiB wheel uploaded to `wheelhouse serve --s3-endpoint …` two ways: twine's form (curl -F,
   sha256_digest before the content: the parts go to the bucket as the body arrives) and curl -T
   (spooled, then put in parts beside the checks), each to its 201 (row committed), beside `s3cmd
   put` of the same file into the same bucket. Wall time from the first byte sent to the answer;
   the server's peak RSS and its CPU time during the upload.
2. The download's 302 to a presigned URL, under wrk, beside nginx answering `return 302` for the
   same path: req/s, p99, CPU per request (the server's or nginx's worker's own).
3. Small durable uploads (curl -T, 8 at once): wheels/s into the bucket beside the same server
   on a local folder.

radosgw is warmed first (its pools are made at their first use), and left to go idle after each
upload's objects are deleted (its garbage collector), so no contender pays for another's.

    /usr/bin/python3 bench/s3_store.py [--size-mib 1024] [--runs 3] [--duration 10] [--baseline BIN]
                                       [--only upload|redirect|small]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import itertools
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "bench"))

from remote_downloads import big_wheel  # noqa: E402
from server_process import ServerProcess  # noqa: E402
from simple_pages import cpu_seconds, free_port, parse_wrk, proc_status  # noqa: E402
from wheelbuilder import build_wheel  # noqa: E402

MiB = 1 << 20


def token(data: pathlib.Path) -> str:
    done = subprocess.run([os.environ.get("WHEELHOUSE_BIN", str(REPO / "build/release/server/wheelhouse")), "token",
                           "create", "--data", str(data), "--name", "bench"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def twine_digests(wheel: pathlib.Path) -> dict[str, str]:
    """The three digests twine sends before the content."""
    hashers = {"md5_digest": hashlib.md5(), "sha256_digest": hashlib.sha256(),
               "blake2_256_digest": hashlib.blake2b(digest_size=32)}
    with wheel.open("rb") as file:
        while block := file.read(8 * MiB):
            for hasher in hashers.values():
                hasher.update(block)
    return {name: hasher.hexdigest() for name, hasher in hashers.items()}


def upload(url: str, secret: str, wheel: pathlib.Path, digests: dict[str, str] | None = None) -> float:
    """curl -T; or, given twine's digests, twine's form (POST /legacy/, the digests before the content)."""
    how = ["-T", str(wheel), url + "api/v1/files/"]
    if digests is not None:
        how = ["-F", ":action=file_upload", "-F", "protocol_version=1",
               *(flag for name, value in digests.items() for flag in ("-F", f"{name}={value}")),
               "-F", f"content=@{wheel}", url + "legacy/"]
    started = time.monotonic()
    done = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u", f"__token__:{secret}", *how],
                          capture_output=True, text=True, timeout=1800)
    if done.stdout != "201":
        sys.exit(f"upload of {wheel.name}: {done.stdout} {done.stderr}")
    return time.monotonic() - started


def cpu_total(pid: int) -> float:
    return sum(cpu_seconds(pid))


def settle(rgw: pathlib.Path, longest: float = 30.0) -> None:
    """Waits until radosgw and the OSD are idle (under 5% of a core for half a second): the
    garbage collector throwing away the last upload's GiB must not slow the next one down."""
    pids = [int((rgw / f"{daemon}.pid").read_text()) for daemon in ("radosgw", "osd")]
    deadline = time.monotonic() + longest
    while time.monotonic() < deadline:
        before = [cpu_total(pid) for pid in pids]
        time.sleep(0.5)
        if all(cpu_total(pid) - was < 0.025 for pid, was in zip(pids, before)):
            return


def warm_up(work: pathlib.Path, s3cmd: list[str], rgw: pathlib.Path) -> None:
    """Ceph makes radosgw's data pools at their first use (the multipart one at the first upload
    in parts): an upload in parts and one in one PUT first, so no measured upload pays for it."""
    sample = work / "warm-up"
    sample.write_bytes(os.urandom(24 * MiB))
    for flags in (["--multipart-chunk-size-mb=8"], ["--disable-multipart"]):
        subprocess.run([*s3cmd, "put", *flags, str(sample), "s3://bench/warm-up"], check=True, capture_output=True,
                       timeout=300)
        subprocess.run([*s3cmd, "del", "s3://bench/warm-up"], check=True, capture_output=True, timeout=300)
    sample.unlink()
    settle(rgw)


def wrk(url: str, duration: int) -> dict:
    done = subprocess.run(["wrk", "-t2", "-c32", f"-d{duration}s", "--latency", url], capture_output=True, text=True,
                          timeout=duration + 60, check=True)
    return parse_wrk(done.stdout)


def nginx_redirect(work: pathlib.Path, location: str) -> tuple[subprocess.Popen, int, int]:
    """nginx, one worker, answering every request with a 302 to `location`."""
    port = free_port()
    (work / "nginx").mkdir(exist_ok=True)
    conf = work / "nginx" / "nginx.conf"
    conf.write_text(f"""worker_processes 1; daemon off; pid {work}/nginx/pid; error_log {work}/nginx/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; server {{ listen 127.0.0.1:{port}; location / {{ return 302 '{location}'; }} }} }}
""")
    process = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(work / "nginx")], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        if workers:
            return process, port, int(workers[0])
        time.sleep(0.05)
    sys.exit("nginx did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--small", type=int, default=200, help="small wheels per durable-upload run")
    parser.add_argument("--only", choices=("upload", "redirect", "small"), help="run one of the three alone")
    parser.add_argument("--baseline", help="a wheelhouse binary measured alike, uploads and 302s (the one before)")
    arguments = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="s3b-", dir="/tmp"))
    rgw = work / "rgw"
    subprocess.run(["bash", str(REPO / "deploy" / "radosgw.sh"), "start", str(rgw)], check=True, capture_output=True,
                   timeout=180)
    env = dict(line.split("=", 1) for line in (rgw / "env").read_text().splitlines())
    host = f"127.0.0.1:{env['RGW_PORT']}"
    s3cmd = ["s3cmd", "--no-ssl", f"--host={host}", f"--host-bucket={host}", f"--access_key={env['S3_ACCESS_KEY']}",
             f"--secret_key={env['S3_SECRET_KEY']}", "--config=/dev/null"]
    subprocess.run([*s3cmd, "mb", "s3://bench"], check=True, capture_output=True, timeout=60)
    bucket_env = {**os.environ, "AWS_ACCESS_KEY_ID": env["S3_ACCESS_KEY"], "AWS_SECRET_ACCESS_KEY": env["S3_SECRET_KEY"]}

    def bucket_server(data: pathlib.Path, prefix: str) -> ServerProcess:
        return ServerProcess(data, "--threads", "2", "--s3-endpoint", env["S3_ENDPOINT"], "--s3-bucket", "bench",
                             "--s3-prefix", prefix, env=bucket_env, access_log="off").start()

    try:
        warm_up(work, s3cmd, rgw)
        if arguments.only in (None, "upload"):
            big_upload(arguments, work, s3cmd, bucket_server, rgw)
        if arguments.only in (None, "redirect"):
            redirect(arguments, work, bucket_server)
        if arguments.only in (None, "small"):
            small_uploads(arguments, work, bucket_server)
    finally:
        subprocess.run(["bash", str(REPO / "deploy" / "radosgw.sh"), "stop", str(rgw)], capture_output=True, timeout=60)
        shutil.rmtree(work, ignore_errors=True)


def big_upload(arguments, work: pathlib.Path, s3cmd: list[str], bucket_server, rgw: pathlib.Path) -> None:
    wheel = big_wheel(work / "big", arguments.size_mib * MiB)
    print(f"1. {arguments.size_mib} MiB: wheelhouse upload into the bucket vs s3cmd put, its default multipart "
          "and one PUT (wall s, RSS MiB, the server's CPU s)")
    digests = twine_digests(wheel)
    for run in range(arguments.runs):
        ours, peaks, cpu = {}, {}, {}
        builds = [("", os.environ.get("WHEELHOUSE_BIN", str(REPO / "build/release/server/wheelhouse")))]
        if arguments.baseline:
            builds.append(("baseline ", arguments.baseline))
        for (build, binary), (mode, tag, declared) in itertools.product(
                builds, (("twine's form", "form", digests), ("curl -T", "put", None))):
            mode, tag = build + mode, tag + str(len(build))
            os.environ["WHEELHOUSE_BIN"] = binary  # ServerProcess and token() start this one
            data = work / f"big-data-{run}-{tag}"
            data.mkdir()
            secret = token(data)
            server = bucket_server(data, f"big{run}{tag}/")
            before = proc_status(server.process.pid)["VmHWM"] / 1024
            cpu_before = cpu_total(server.process.pid)
            try:
                ours[mode] = upload(server.url, secret, wheel, declared)
            except SystemExit:
                print(server.stderr()[-3000:], file=sys.stderr)
                raise
            cpu[mode] = cpu_total(server.process.pid) - cpu_before
            peaks[mode] = f"{proc_status(server.process.pid)['VmHWM'] / 1024:.0f} (before {before:.0f})"
            server.stop()
            subprocess.run([*s3cmd, "del", "--recursive", "--force", f"s3://bench/big{run}{tag}/"],
                           capture_output=True, timeout=600)
            shutil.rmtree(data)
            settle(rgw)
        os.environ["WHEELHOUSE_BIN"] = builds[0][1]
        theirs = {}
        for mode, flags in (("parts", []), ("one PUT", ["--disable-multipart"])):
            started = time.monotonic()
            subprocess.run([*s3cmd, "put", *flags, str(wheel), f"s3://bench/s3cmd{run}.whl"],
                           check=True, capture_output=True, timeout=1800)
            theirs[mode] = time.monotonic() - started
            subprocess.run([*s3cmd, "del", f"s3://bench/s3cmd{run}.whl"], capture_output=True, timeout=600)
            settle(rgw)
        best = min(theirs.values())
        print(f"   run {run + 1}: wheelhouse " + ", ".join(
            f"{mode} {took:.2f} s ({arguments.size_mib / took:.0f} MiB/s, {best / took:.2f}x s3cmd's faster)"
            for mode, took in ours.items())
            + "; s3cmd " + ", ".join(f"{mode} {took:.2f} s" for mode, took in theirs.items())
            + "; server RSS peak MiB " + ", ".join(f"{mode} {peak}" for mode, peak in peaks.items())
            + "; server CPU s " + ", ".join(f"{mode} {seconds:.2f}" for mode, seconds in cpu.items()))


def redirect(arguments, work: pathlib.Path, bucket_server) -> None:
    print(f"2. the download's 302 under wrk -t2 -c32 -d{arguments.duration}s: wheelhouse vs nginx `return 302`")
    small = build_wheel(work / "small", "redirected", "1.0")
    sha256 = hashlib.sha256(small.read_bytes()).hexdigest()
    path = f"files/{sha256}/{small.name}"
    builds = [("wheelhouse", os.environ.get("WHEELHOUSE_BIN", str(REPO / "build/release/server/wheelhouse")))]
    if arguments.baseline:
        builds.append(("baseline", arguments.baseline))
    servers = []
    for name, binary in builds:  # each with its own catalog, the same wheel under its own prefix
        os.environ["WHEELHOUSE_BIN"] = binary
        data = work / f"redirect-data-{name}"
        data.mkdir()
        secret = token(data)
        server = bucket_server(data, f"redirect-{name}/")
        upload(server.url, secret, small)
        servers.append((name, server))
    os.environ["WHEELHOUSE_BIN"] = builds[0][1]
    location = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{redirect_url}", servers[0][1].url + path],
                              capture_output=True, text=True, check=True).stdout
    nginx, nginx_port, nginx_worker = nginx_redirect(work, location)
    targets = [(name, server.url + path, server.process.pid) for name, server in servers]
    targets.append(("nginx", f"http://127.0.0.1:{nginx_port}/{path}", nginx_worker))
    for run in range(arguments.runs):
        # Who goes first turns each run, so no one always meets the box as the one before left it.
        for name, url, pid in targets[run % len(targets):] + targets[:run % len(targets)]:
            cpu = cpu_total(pid)
            result = wrk(url, arguments.duration)
            used = cpu_total(pid) - cpu
            print(f"   run {run + 1} {name:10} {result['requests_per_second']:9.0f} req/s  "
                  f"p99 {result['latency_p99_us'] / 1000:.2f} ms  "
                  f"{used / result['requests'] * 1e6:.1f} µs CPU/request  "
                  f"RSS {proc_status(pid)['VmRSS'] / 1024:.0f} MiB")
    nginx.terminate()
    nginx.wait()
    for _, server in servers:
        server.stop()


def small_uploads(arguments, work: pathlib.Path, bucket_server) -> None:
    print(f"3. small durable uploads, 8 at once, {arguments.small} wheels: bucket vs local folder (wheels/s)")
    farm = work / "farm"
    ours = os.environ.get("WHEELHOUSE_BIN", str(REPO / "build/release/server/wheelhouse"))
    setups = [("bucket", ours), ("folder", ours)] + ([("baseline bucket", arguments.baseline)] if arguments.baseline else [])
    for run in range(arguments.runs):
        for where, binary in setups:
            os.environ["WHEELHOUSE_BIN"] = binary  # ServerProcess and token() start this one
            tag = where.replace(" ", "-")
            data = work / f"small-{tag}-{run}"
            data.mkdir()
            secret = token(data)
            wheels = [build_wheel(farm / f"{tag}{run}", "durable", f"1.{run}.{i}") for i in range(arguments.small)]
            server = (bucket_server(data, f"small{run}{tag}/") if where.endswith("bucket") else
                      ServerProcess(data, "--threads", "2", access_log="off").start())
            started = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda w: upload(server.url, secret, w), wheels))
            took = time.monotonic() - started
            server.stop()
            print(f"   run {run + 1} {where:15} {len(wheels) / took:6.1f} wheels/s")
    os.environ["WHEELHOUSE_BIN"] = ours


if __name__ == "__main__":
    main()
