#!/usr/bin/python3
"""Upload rate under load (issue 15, item 2), measured against the binary before the change in
the same run.

wrk PUTs distinct small wheels (about 3.5 KB, 50 projects) on 16 kept-alive connections, each
wheel exactly once (bench/upload_rate.lua), into an empty catalog and into one that already holds
20,000 other wheels. Every trial gets a fresh data folder and a fresh server; the binaries
(--binary, and --baseline when given) take turns in every round, so the machine's mood falls on
both alike. Reported per trial: wheels per second from the first request to the last answer,
wrk's latency p50/p99, the server's CPU per upload, and that every answer was 201 and every
wheel has its row.

Sync calls per acknowledged upload are counted in every trial by the kernel's syscall
tracepoints (`perf stat -e syscalls:sys_enter_fsync,…` attached to the server for the wrk run):
counters in the kernel, nothing stops the server, so the count is of the timed run itself.
With --count-syncs, one more trial per binary and catalog runs the server under
`strace -f -c --seccomp-bpf -e trace=fsync,fdatasync,syncfs,sync_file_range` as a cross-check:
each of those calls then stops the server for strace, which slows it and so changes the batches.

    cmake --build --preset release --target wheelhouse
    /usr/bin/python3 bench/upload_rate.py --baseline /tmp/wheelhouse-before --count-syncs

Prints a Markdown table and writes every raw figure to bench/results/upload_rate-<time>.json.
Wheels and the preloaded catalog are cached under --work-dir (default build/bench/uploads/).
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import pathlib
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time

BENCH_DIR = pathlib.Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
from simple_pages import at_priority, children_of, cpu_seconds, load_average, save_results  # noqa: E402
from wheelbuilder import build_wheel, escape_name  # noqa: E402

LUA_SCRIPT = BENCH_DIR / "upload_rate.lua"
SYNC_CALLS = ("fsync", "fdatasync", "syncfs", "sync_file_range")
TRIAL_NUMBERS = itertools.count()


class BenchError(RuntimeError):
    """A run that did not do what the benchmark needs; the message says which."""


# ----------------------------------------------------------------------------- wheels


def build_one(job: tuple[str, str, int]) -> str:
    directory, prefix, index = job
    project = f"{prefix}-{index % 50:02d}"
    release = index // 50
    version = f"1.0.{release}" + (f"+cu130torch2.{release % 10}" if index % 3 == 0 else "")
    module = escape_name(project).lower()
    body = "".join(f"def function_{i}(x):\n    return x * {i} + {index}\n\n" for i in range(60))
    files = {f"{module}/__init__.py": f"__version__ = {version!r}\n", f"{module}/core.py": body}
    return str(build_wheel(directory, project, version, files=files, summary=f"Benchmark project {index}"))


def wheel_set(work: pathlib.Path, prefix: str, count: int) -> pathlib.Path:
    """A manifest of `count` distinct wheels of projects `<prefix>-00` … `<prefix>-49`, built once
    and kept under `work`."""
    directory = work / f"wheels-{prefix}-{count}"
    manifest = directory / "manifest.txt"
    if manifest.exists() and len(manifest.read_text().splitlines()) == count:
        return manifest
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    started = time.monotonic()
    with multiprocessing.Pool(os.cpu_count()) as pool:
        paths = pool.map(build_one, [(str(directory), prefix, i) for i in range(count)], chunksize=200)
    manifest.write_text("\n".join(paths) + "\n")
    print(f"# built {count} wheels ({prefix}) in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return manifest


def preloaded_catalog(work: pathlib.Path, binary: pathlib.Path, count: int) -> pathlib.Path:
    """A data folder holding `count` wheels, ingested once with `wheelhouse ingest`."""
    data = work / f"preloaded-{count}"
    done = data / ".complete"
    if done.exists():
        return data
    shutil.rmtree(data, ignore_errors=True)
    manifest = wheel_set(work, "preload-project", count)
    started = time.monotonic()
    ingested = subprocess.run([str(binary), "ingest", "--data", str(data), str(manifest.parent)],
                              capture_output=True, text=True, timeout=3600)
    if ingested.returncode != 0:
        raise BenchError(f"wheelhouse ingest failed: {ingested.stdout[-500:]}{ingested.stderr[-500:]}")
    done.write_text("")
    print(f"# ingested {count} wheels in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return data


def fresh_data(work: pathlib.Path, name: str, preloaded: pathlib.Path | None) -> pathlib.Path:
    """An empty data folder, or a copy of the preloaded one (catalog copied, blobs hard-linked:
    blobs never change, so sharing their inodes changes nothing a trial measures). Trials' folders
    are deleted only at the end of the run: deleting tens of thousands of files takes minutes on
    a loaded box and leaves the file system's journal busy for the next trial."""
    data = work / "trials" / name
    data.mkdir(parents=True)
    if preloaded is not None:
        for database in preloaded.glob("catalog.db*"):
            shutil.copy2(database, data / database.name)
        subprocess.run(["cp", "-al", str(preloaded / "blobs"), str(data / "blobs")], check=True)
    return data


def file_rows(data: pathlib.Path) -> int:
    with sqlite3.connect(data / "catalog.db") as db:
        return db.execute("SELECT count(*) FROM files").fetchone()[0]


# ----------------------------------------------------------------------------- one trial


class Server:
    """`wheelhouse serve` on a free loopback port, optionally under strace counting sync calls."""

    def __init__(self, binary: pathlib.Path, data: pathlib.Path, strace_out: pathlib.Path | None, nice: int):
        self.data = data
        command = [str(binary), "serve", "--listen", "127.0.0.1:0", "--data", str(data), "--access-log", "off"]
        if strace_out is not None:
            command = ["strace", "-f", "-c", "--seccomp-bpf", "-e", "trace=" + ",".join(SYNC_CALLS), "-o",
                       str(strace_out), "--", *command]
        self.stderr_path = data.parent / f"{data.name}-stderr.log"
        self.stderr_file = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self.stderr_file,
                                        preexec_fn=at_priority(nice))
        deadline = time.monotonic() + 60
        while True:
            match = re.search(rb"listening on (http://127\.0\.0\.1:\d+/)", self.stderr_path.read_bytes())
            if match:
                self.url = match.group(1).decode()
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"wheelhouse serve did not start: {self.stderr_path.read_text()[-1000:]}")
            time.sleep(0.02)
        # Under strace the server is strace's child.
        self.pid = self.process.pid if strace_out is None else children_of(self.process.pid)[0]

    def cpu(self) -> float:
        user, system = cpu_seconds(self.pid)
        return user + system

    def stop(self) -> None:
        os.kill(self.pid, signal.SIGTERM)
        if self.process.wait(timeout=120) != 0:
            raise BenchError(f"wheelhouse serve exited with {self.process.returncode}: "
                             f"{self.stderr_path.read_text()[-1000:]}")
        self.stderr_file.close()


def make_token(binary: pathlib.Path, data: pathlib.Path) -> str:
    created = subprocess.run([str(binary), "token", "create", "--data", str(data), "--name", "bench"],
                             capture_output=True, text=True, timeout=60)
    if created.returncode != 0:
        raise BenchError(f"wheelhouse token create failed: {created.stderr.strip()}")
    return created.stdout.strip()


def run_wrk(url: str, manifest: pathlib.Path, token: str, args: argparse.Namespace) -> dict:
    """Runs wrk until every thread has had all its uploads answered; returns the figures."""
    command = ["wrk", f"-t{args.wrk_threads}", f"-c{args.connections}", "-d600s", "--timeout", "30s",
               "-s", str(LUA_SCRIPT), url, "--", str(manifest), token, str(args.wrk_threads)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=at_priority(args.nice))
    assert process.stdout is not None
    lines = []
    finished = 0
    for line in process.stdout:
        lines.append(line)
        if line.strip() == "thread-finished":
            finished += 1
            if finished == args.wrk_threads:
                process.send_signal(signal.SIGINT)  # wrk then prints its summary and runs done()
    process.wait(timeout=60)
    threads = [json.loads(line) for line in lines if line.startswith('{"thread"')]
    latency = next((json.loads(line) for line in lines if line.startswith('{"latency')), None)
    if len(threads) != args.wrk_threads or latency is None or finished != args.wrk_threads:
        raise BenchError("wrk did not finish every upload:\n" + "".join(lines[-40:]))
    statuses: dict[str, int] = {}
    for thread in threads:
        for status, count in thread["statuses"].items():
            statuses[status] = statuses.get(status, 0) + count
    uploads = sum(thread["uploads"] for thread in threads)
    elapsed = max(t["finished"] for t in threads) - min(t["started"] for t in threads)
    return {"uploads": uploads, "statuses": statuses, "elapsed_s": elapsed, "wheels_per_s": uploads / elapsed,
            **latency}


class SyncCounter:
    """`perf stat` counting the server's sync calls (and its context switches) from now until
    stop(); None of it when perf or the tracepoints are missing."""

    def __init__(self, pid: int, out: pathlib.Path):
        self.out = out
        events = ["context-switches"] + [f"syscalls:sys_enter_{call}" for call in SYNC_CALLS]
        self.process = None
        if shutil.which("perf"):
            self.process = subprocess.Popen(["perf", "stat", "-x,", "-e", ",".join(events), "-p", str(pid),
                                             "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)  # attached before the first upload

    def stop(self) -> dict[str, int]:
        if self.process is None:
            return {}
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=60)
        counts = {}
        for line in self.out.read_text().splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[0].isdigit():
                counts[fields[2].removeprefix("syscalls:sys_enter_")] = int(fields[0])
        return counts


def parse_strace_counts(path: pathlib.Path) -> dict[str, int]:
    counts = {}
    for line in path.read_text().splitlines():
        words = line.split()
        if words and words[-1] in SYNC_CALLS:
            # "% time seconds usecs/call calls [errors] syscall": calls is the 4th column.
            counts[words[-1]] = int(words[3])
    return counts


def trial(label: str, binary: pathlib.Path, catalog: str, manifest: pathlib.Path, preloaded: pathlib.Path | None,
          args: argparse.Namespace, work: pathlib.Path, count_syncs: bool = False) -> dict:
    data = fresh_data(work, f"{next(TRIAL_NUMBERS):02d}-{label}-{catalog}", preloaded)
    rows_before = file_rows(data) if preloaded else 0
    token = make_token(binary, data)
    strace_out = data.parent / f"{data.name}-strace.txt" if count_syncs else None
    load_before = load_average()[0]
    server = Server(binary, data, strace_out, args.nice)
    try:
        counter = None if count_syncs else SyncCounter(server.pid, data.parent / f"{data.name}-perf.csv")
        cpu_before = server.cpu()
        figures = run_wrk(server.url, manifest, token, args)
        figures["server_cpu_ms_per_upload"] = 1000 * (server.cpu() - cpu_before) / max(1, figures["uploads"])
        if counter is not None:
            counted = counter.stop()
            figures["context_switches_per_upload"] = counted.pop("context-switches", 0) / figures["uploads"]
            if counted:
                figures["sync_calls"] = counted
                figures["syncs_per_upload"] = sum(counted.values()) / figures["uploads"]
    finally:
        server.stop()
    figures.update({"binary": label, "catalog": catalog, "rows_before": rows_before,
                    "loadavg_1min": [load_before, load_average()[0]]})
    if figures["statuses"] != {"201": figures["uploads"]}:
        raise BenchError(f"{label} into the {catalog} catalog answered {figures['statuses']}, expected only 201")
    if file_rows(data) != rows_before + figures["uploads"]:
        raise BenchError(f"{label}: {file_rows(data) - rows_before} rows for {figures['uploads']} uploads")
    if strace_out is not None:
        figures["sync_calls"] = parse_strace_counts(strace_out)
        figures["syncs_per_upload"] = sum(figures["sync_calls"].values()) / figures["uploads"]
        figures["counted_by"] = "strace"
    print(f"# {label:>9} {catalog:>9}: {figures['wheels_per_s']:7.0f} wheels/s, p99 "
          f"{figures['latency_p99_us'] / 1000:.1f} ms, {figures['server_cpu_ms_per_upload']:.2f} ms CPU/upload"
          + (f", {figures['syncs_per_upload']:.3f} syncs/upload {figures['sync_calls']}" if "sync_calls" in figures else "")
          + (" (strace)" if count_syncs else ""),
          file=sys.stderr)
    return figures


# ----------------------------------------------------------------------------- report


def summary_table(trials: list[dict]) -> str:
    lines = ["| binary | catalog | wheels/s (each trial) | median | p99 ms (median) | CPU ms/upload | "
             "syncs/upload (perf, median) | syncs/upload (strace) |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    groups: dict[tuple[str, str], list[dict]] = {}
    for entry in trials:
        groups.setdefault((entry["binary"], entry["catalog"]), []).append(entry)
    medians: dict[tuple[str, str], float] = {}
    for (binary, catalog), entries in groups.items():
        timed = [e for e in entries if e.get("counted_by") != "strace"]
        traced = [e for e in entries if e.get("counted_by") == "strace"]
        rates = [e["wheels_per_s"] for e in timed] or [0]
        medians[(binary, catalog)] = statistics.median(rates)
        p99 = statistics.median(e["latency_p99_us"] for e in timed) / 1000 if timed else 0
        cpu = statistics.median(e["server_cpu_ms_per_upload"] for e in timed) if timed else 0
        counted = [e["syncs_per_upload"] for e in timed if "syncs_per_upload" in e]
        perf_syncs = f"{statistics.median(counted):.3f}" if counted else "–"
        strace_syncs = f"{traced[0]['syncs_per_upload']:.3f}" if traced else "–"
        lines.append(f"| {binary} | {catalog} | {', '.join(f'{r:.0f}' for r in rates)} | "
                     f"{medians[(binary, catalog)]:.0f} | {p99:.1f} | {cpu:.2f} | {perf_syncs} | {strace_syncs} |")
    for catalog in dict.fromkeys(c for _, c in groups):
        if medians.get(("baseline", catalog)):
            lines.append(f"\n{catalog}: candidate / baseline = "
                         f"{medians[('candidate', catalog)] / medians[('baseline', catalog)]:.2f}x (medians)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build/release/server/wheelhouse")
    parser.add_argument("--baseline", type=pathlib.Path, help="the binary before the change, measured alike")
    parser.add_argument("--uploads", type=int, default=10_000, help="distinct wheels uploaded per trial")
    parser.add_argument("--preload", type=int, default=20_000, help="wheels already in the non-empty catalog")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--wrk-threads", type=int, default=2)
    parser.add_argument("--catalogs", default="empty,preloaded")
    parser.add_argument("--count-syncs", action="store_true")
    parser.add_argument("--nice", type=int, default=0,
                        help="nice value for wrk and the servers alike; -10 (as root) shields them from other work")
    parser.add_argument("--work-dir", type=pathlib.Path, default=REPO_ROOT / "build/bench/uploads")
    args = parser.parse_args()

    work = args.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    binaries = [("candidate", args.binary.resolve())]
    if args.baseline:
        binaries.append(("baseline", args.baseline.resolve()))
    shutil.rmtree(work / "trials", ignore_errors=True)  # a stopped run's
    (work / "trials").mkdir()
    manifest = wheel_set(work, "upload-project", args.uploads)
    catalogs = args.catalogs.split(",")
    preloaded = preloaded_catalog(work, binaries[-1][1], args.preload) if "preloaded" in catalogs else None

    trials = []
    for round_number in range(args.rounds):
        order = binaries if round_number % 2 == 0 else list(reversed(binaries))
        for catalog in catalogs:
            for label, binary in order:
                trials.append(trial(label, binary, catalog, manifest, preloaded if catalog == "preloaded" else None,
                                    args, work))
    if args.count_syncs:
        for catalog in catalogs:
            for label, binary in binaries:
                trials.append(trial(label, binary, catalog, manifest, preloaded if catalog == "preloaded" else None,
                                    args, work, count_syncs=True))

    shutil.rmtree(work / "trials", ignore_errors=True)
    table = summary_table(trials)
    print(table)
    report = {"arguments": {k: str(v) for k, v in vars(args).items()}, "trials": trials, "table": table,
              "nproc": os.cpu_count()}
    print(f"# raw figures: {save_results(report, 'upload_rate')}", file=sys.stderr)


if __name__ == "__main__":
    main()
