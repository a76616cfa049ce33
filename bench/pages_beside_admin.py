#!/usr/bin/python3
"""Cached simple pages while the admin catalog sorts and searches beside them, on this build and
on a reference build (the previous binary), alternated in one run.

The route table runs the admin catalog's queries on a read pool instead of the I/O threads
(issue 15, item 4: nothing slow on an I/O thread). What pip sees is measured: wrk on one cached
project page alone, then the same with a second wrk sending the admin list's heavy queries
(a search matching thousands of projects, sorted by last upload or size) beside it. Each build
serves its own copy of one data folder; who goes first alternates between rounds.

    /usr/bin/python3 bench/pages_beside_admin.py --reference /work/main/build/release/server/wheelhouse

Everything listens on 127.0.0.1 only, and every wrk run stops by itself after --duration.
Prints a Markdown table and writes every figure to bench/results/.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import statistics
import tempfile
import threading
import urllib.request

from simple_pages import (PIP_ACCEPT, REPO_ROOT, Wheelhouse, add_admin_corpus_arguments, ingested_corpus, load_average,
                          run_text, run_wrk, save_results, with_connections)

PAGE = "/simple/flash-attn/"
ADMIN_SCRIPT = """
local paths = {"/api/v1/projects?per_page=50&q=a&sort=recent", "/api/v1/projects?per_page=50&q=e&sort=size"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
"""


def measure(binary: pathlib.Path, data: pathlib.Path, args: argparse.Namespace, scratch: pathlib.Path,
            admin_script: pathlib.Path, label: str) -> dict:
    server = Wheelhouse(binary, data, args.threads, scratch / f"{label}-stderr.log", args.nice)
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        for path in (PAGE, "/api/v1/projects?per_page=50&q=a&sort=recent"):  # the page into the cache
            with urllib.request.urlopen(base + path, timeout=60) as answer:
                answer.read()
        pages = with_connections(args, args.page_connections)
        run_wrk(base + PAGE, PIP_ACCEPT, pages, args.warmup, None)
        alone = run_wrk(base + PAGE, PIP_ACCEPT, pages, args.duration, None)

        admin: dict = {}
        admin_load = with_connections(args, args.admin_connections)
        beside_thread = threading.Thread(target=lambda: admin.update(
            run_wrk(base + "/", "application/json", admin_load, args.duration, admin_script)))
        beside_thread.start()
        beside = run_wrk(base + PAGE, PIP_ACCEPT, pages, args.duration, None)
        beside_thread.join()
        return {"binary": str(binary), "page_alone": alone, "page_beside_admin": beside, "admin": admin,
                "memory_kib": server.memory()}
    finally:
        server.stop()


def summary_row(label: str, runs: list[dict]) -> str:
    def median(key: str, field: str) -> float:
        return statistics.median(run[key][field] for run in runs)

    return (f"| {label} | {median('page_alone', 'requests_per_second'):,.0f} | "
            f"{median('page_alone', 'latency_p99_us') / 1000:.2f} ms | "
            f"{median('page_beside_admin', 'requests_per_second'):,.0f} | "
            f"{median('page_beside_admin', 'latency_p99_us') / 1000:.2f} ms | "
            f"{median('admin', 'requests_per_second'):,.0f} | {median('admin', 'latency_p99_us') / 1000:.2f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_admin_corpus_arguments(parser, duration=10)
    parser.add_argument("--reference", type=pathlib.Path, required=True, help="the build to compare with")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--page-connections", type=int, default=32)
    parser.add_argument("--admin-connections", type=int, default=4)
    args = parser.parse_args()
    work, data, summary, ingested = ingested_corpus(args)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="pages-beside-admin-", dir=work))
    builds = {"this build": args.binary.resolve(), "reference": args.reference.resolve()}
    folders = {"this build": scratch / "data", "reference": scratch / "reference-data"}
    for folder in folders.values():  # each its own copy: neither writes where the other reads
        shutil.copytree(data, folder)
    admin_script = scratch / "admin.lua"
    admin_script.write_text(ADMIN_SCRIPT)
    report = {"projects": args.projects, "wheels": summary["wheels"], "ingest": ingested, "page": PAGE,
              "commit": run_text("git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"),
              "builds": {label: str(path) for label, path in builds.items()},
              "load_average_before": load_average(), "runs": {label: [] for label in builds}}
    try:
        for round_number in range(args.rounds):
            order = list(builds) if round_number % 2 == 0 else list(reversed(builds))
            for label in order:
                run = measure(builds[label], folders[label], args, scratch, admin_script, label)
                report["runs"][label].append(run)
                print(f"  round {round_number + 1} {label:<10} page alone "
                      f"{run['page_alone']['requests_per_second']:>8,.0f} req/s p99 "
                      f"{run['page_alone']['latency_p99_us'] / 1000:6.2f} ms | beside admin "
                      f"{run['page_beside_admin']['requests_per_second']:>8,.0f} req/s p99 "
                      f"{run['page_beside_admin']['latency_p99_us'] / 1000:6.2f} ms | admin "
                      f"{run['admin']['requests_per_second']:>6,.0f} req/s p99 "
                      f"{run['admin']['latency_p99_us'] / 1000:6.2f} ms", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report["load_average_after"] = load_average()

    print(f"\n{args.projects:,} projects; {PAGE} with {args.page_connections} connections, the admin "
          f"list's heavy queries with {args.admin_connections}; medians of {args.rounds} rounds\n")
    print("| build | page alone req/s | p99 | page beside admin req/s | p99 | admin req/s | admin p99 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, runs in report["runs"].items():
        print(summary_row(label, runs))
    print(f"\nload average {report['load_average_before']} -> {report['load_average_after']}")
    print(f"written: {save_results(report, f'pages-beside-admin-{args.projects}').relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
