#!/usr/bin/python3
"""The admin catalog's project list at 10,000 projects: what each keystroke and page turn costs.

Generates (or reuses) a corpus of N projects (default 10,000 × 2 wheels), ingests it, starts
`wheelhouse serve`, and runs wrk against each query the web page makes for its project list: the
first page in every sort order, a page deep in the list, searches that match a few projects
or thousands, and the builds filters (CUDA, torch, SM, Python, lacks), whose figures compare with
the unfiltered first page measured in the same run. One connection (a person typing) and 16 (many admins, or a script). Nothing is
asserted; the figures go to stdout as Markdown and, whole, to bench/results/.

    /usr/bin/python3 bench/admin_projects.py                   # 10,000 projects
    /usr/bin/python3 bench/admin_projects.py --projects 2000   # a smaller catalog beside it

Everything listens on 127.0.0.1 only, and every wrk run stops by itself after --duration.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import tempfile
import urllib.request

from simple_pages import REPO_ROOT, Wheelhouse, add_admin_corpus_arguments, ingested_corpus, load_average, run_wrk, save_results

QUERIES = {
    "first page, by name": "/api/v1/projects?per_page=50",
    "first page, most recent upload": "/api/v1/projects?per_page=50&sort=recent",
    "first page, most files": "/api/v1/projects?per_page=50&sort=files",
    "first page, largest": "/api/v1/projects?per_page=50&sort=size",
    "page 150 (rows 7,451-7,500), by name": "/api/v1/projects?per_page=50&page=150",
    "search 'flash' (few matches)": "/api/v1/projects?per_page=50&q=flash",
    "search 'Flash_Attn' (normalised)": "/api/v1/projects?per_page=50&q=Flash_Attn",
    "search 'a' (thousands of matches), most recent": "/api/v1/projects?per_page=50&q=a&sort=recent",
    # The builds filters: one pass over every file's variant columns, then the page in SQL.
    "with a cu130 build": "/api/v1/projects?per_page=50&cuda=cu130",
    "without a cu130 build": "/api/v1/projects?per_page=50&cuda=cu130&lacks=1",
    "with a cu128 · torch2.8 · sm89 build, most recent": "/api/v1/projects?per_page=50&cuda=cu128&torch=2.8&sm=sm89&sort=recent",
    "with a build for cp312": "/api/v1/projects?per_page=50&python=cp312",
    "search 'a' with a torch2.10 build": "/api/v1/projects?per_page=50&q=a&torch=2.10",
    "the filters' words (GET /api/v1/variants)": "/api/v1/variants",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_admin_corpus_arguments(parser, duration=5)
    args = parser.parse_args()
    work, data, summary, ingested = ingested_corpus(args)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="admin-projects-", dir=work))
    server = Wheelhouse(args.binary, data, args.threads, scratch / "wheelhouse-stderr.log", args.nice)
    report = {"projects": args.projects, "wheels": summary["wheels"], "ingest": ingested,
              "load_average_before": load_average(), "rows": []}
    try:
        server.start()
        for label, path in QUERIES.items():
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=30) as answer:
                body = json.load(answer)
            row = {"query": label, "path": path, "total": body.get("total")}
            for connections in (1, 16):
                args.connections = connections
                run = run_wrk(f"http://127.0.0.1:{server.port}{path}", "application/json", args, args.duration, None)
                row[f"c{connections}"] = run
                print(f"  {label:<48} c={connections:<3} {run['requests_per_second']:>8,.0f} req/s  "
                      f"p50 {run['latency_p50_us'] / 1000:6.2f} ms  p99 {run['latency_p99_us'] / 1000:6.2f} ms  "
                      f"({row['total']} matches)", flush=True)
            report["rows"].append(row)
        report["rss_kib"] = server.memory()["VmRSS"]
    finally:
        server.stop()
    report["load_average_after"] = load_average()

    print(f"\n{args.projects:,} projects, {summary['wheels']:,} wheels; RSS {report['rss_kib'] / 1024:.1f} MiB\n")
    print("| query | matches | 1 connection: req/s, p50, p99 | 16 connections: req/s, p99 |")
    print("| --- | ---: | ---: | ---: |")
    for row in report["rows"]:
        one, many = row["c1"], row["c16"]
        matches = "—" if row["total"] is None else f"{row['total']:,}"  # the words list has no total
        print(f"| {row['query']} | {matches} | {one['requests_per_second']:,.0f}, "
              f"{one['latency_p50_us'] / 1000:.2f} ms, {one['latency_p99_us'] / 1000:.2f} ms | "
              f"{many['requests_per_second']:,.0f}, {many['latency_p99_us'] / 1000:.2f} ms |")
    print(f"\nwritten: {save_results(report, f'admin-projects-{args.projects}').relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
