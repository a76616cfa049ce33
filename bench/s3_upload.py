"""1 GiB into an S3 bucket (issue 29): wheelhouse's S3 client (`wheelhouse s3-check --probe-size`,
which streams a file of random bytes with its sha256 signed, for radosgw to check) beside s3cmd
putting a file of the same size into the same bucket, on a one-node Ceph radosgw on loopback
(deploy/radosgw.sh), in turns. The rates compared are both the transfer's own: wheelhouse's from
the PUT's start to its answer; s3cmd's as it reports it (its hashing of the file before the PUT
not counted). Peak RSS of each client from /usr/bin/time.

    /usr/bin/python3 bench/s3_upload.py [--size-mib 1024] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from server_process import wheelhouse_binary  # noqa: E402

MiB = 1 << 20


def timed(command: list[str], env: dict[str, str]) -> tuple[str, float]:
    """(output, peak RSS in MiB) of a command run under /usr/bin/time -v."""
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"{command[0]} failed:\n{done.stdout}\n{done.stderr}")
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1)) / 1024
    return done.stdout + done.stderr, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    size = arguments.size_mib * MiB
    folder = pathlib.Path(tempfile.mkdtemp(prefix="rgw-", dir="/tmp"))
    subprocess.run(["bash", str(REPO / "deploy" / "radosgw.sh"), "start", str(folder)], check=True,
                   capture_output=True, timeout=180)
    settings = dict(line.split("=", 1) for line in (folder / "env").read_text().splitlines())
    host = f"127.0.0.1:{settings['RGW_PORT']}"
    s3cmd = ["s3cmd", "--no-ssl", f"--host={host}", f"--host-bucket={host}", f"--access_key={settings['S3_ACCESS_KEY']}",
             f"--secret_key={settings['S3_SECRET_KEY']}", "--config=/dev/null"]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": settings["S3_ACCESS_KEY"],
           "AWS_SECRET_ACCESS_KEY": settings["S3_SECRET_KEY"]}
    source = folder / "upload.bin"
    with open(source, "wb") as out:
        for _ in range(arguments.size_mib):
            out.write(os.urandom(MiB))
    rows = []
    try:
        subprocess.run([*s3cmd, "mb", "s3://bench"], check=True, capture_output=True, timeout=60)
        for run in range(1, arguments.runs + 1):
            row = {}

            def ours() -> None:
                output, peak = timed([wheelhouse_binary(), "s3-check", "--s3-endpoint", settings["S3_ENDPOINT"],
                                      "--s3-bucket", "bench", "--probe-size", str(size)], env)
                row["wheelhouse"] = (float(re.search(r"bytes at (\d+) MiB/s", output).group(1)), peak)

            def theirs() -> None:
                output, peak = timed([*s3cmd, "--multipart-chunk-size-mb=5120", "put", str(source),
                                      "s3://bench/s3cmd.bin"], env)
                speed = re.search(r"([\d.]+) (k?B|MB)/s", output)
                scale = {"kB": 1 / 1024, "MB": 1.0, "B": 1 / MiB}[speed.group(2)]
                row["s3cmd"] = (float(speed.group(1)) * scale, peak)
                subprocess.run([*s3cmd, "del", "s3://bench/s3cmd.bin"], check=True, capture_output=True, timeout=60)

            for step in ([ours, theirs] if run % 2 else [theirs, ours]):
                step()
            rows.append(row)
            print(f"run {run}: wheelhouse {row['wheelhouse'][0]:.0f} MiB/s (RSS {row['wheelhouse'][1]:.0f} MiB), "
                  f"s3cmd {row['s3cmd'][0]:.0f} MiB/s (RSS {row['s3cmd'][1]:.0f} MiB)", flush=True)
    finally:
        subprocess.run(["bash", str(REPO / "deploy" / "radosgw.sh"), "stop", str(folder)], capture_output=True,
                       timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
    print("\n| run | wheelhouse PUT | s3cmd put | ratio | peak RSS wheelhouse / s3cmd |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for number, row in enumerate(rows, 1):
        print(f"| {number} | {row['wheelhouse'][0]:.0f} MiB/s | {row['s3cmd'][0]:.0f} MiB/s | "
              f"{row['wheelhouse'][0] / row['s3cmd'][0]:.2f}× | {row['wheelhouse'][1]:.0f} / {row['s3cmd'][1]:.0f} MiB |")


if __name__ == "__main__":
    main()
