#!/usr/bin/python3
"""What access logging costs wheelhouse against nginx, measured in one run, and whether a line is lost.

The load is simple_pages.py's `mix` (a random project page per request, pip's JSON) from the same
corpus (default 200 projects x 25 wheels), with every page first fetched from wheelhouse and written
as static files for nginx. These servers are started once each, side by side:

    nginx       access_log off
    nginx       access_log to a file, one write(2) per request (nginx's default)
    nginx       access_log to a file with buffer=64k flush=1s (nginx tuned for a busy log)
    wheelhouse  --access-log off
    wheelhouse  --access-log FILE
    wheelhouse  --access-log -   (the default), standard output redirected to a file

plus, with --reference-binary, that binary's FILE and - modes (the build before a change). Each
round runs wrk against every server in turn, the order rotated from round to round; the table shows
each server's median round, and a second table each comparison round by round (the two servers of a
pair ran seconds apart, so their ratio does not carry the box's drift from one minute to the next).
`--servers` picks a subset, e.g. `--servers "nginx off,wheelhouse off" --rounds 30 --duration 3`
for many short alternations of one pair. Both servers log the same facts per line (time, peer, method and target,
status, bytes, duration).

Lines against requests: after the load every wheelhouse is scraped until /metrics has counted every
request, then stopped with SIGTERM; its log must then hold exactly one line per counted request,
each well formed (none torn or interleaved), and /metrics must report none lost. Both are also set
against the requests wrk counted, which misses only the requests in flight when each wrk run stopped.

    /usr/bin/python3 bench/access_log.py --rounds 3
    /usr/bin/python3 bench/access_log.py --rounds 3 --reference-binary /tmp/wheelhouse-before

Prints Markdown tables and writes them with every raw figure to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import resource
import shutil
import sys
import tempfile
import time
import urllib.request

BENCH_DIR = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
import simple_pages as pages  # noqa: E402

# The facts wheelhouse writes, in nginx's variables.
NGINX_LOG_FORMAT = ("log_format same_facts '$time_iso8601 $remote_addr \"$request_method $request_uri\" $status "
                    "$body_bytes_sent $request_time';")
WHEELHOUSE_LINE = re.compile(rb'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z \S+ "[A-Z]+ \S+" \d{3} \d+ -?\d+us')


def count_lines(path: pathlib.Path, pattern: re.Pattern | None = None) -> tuple[int, int]:
    """Lines in a log, and how many of them do not match `pattern` (torn, interleaved, other)."""
    lines = malformed = 0
    with open(path, "rb") as log:
        for line in log:
            lines += 1
            if pattern and not pattern.fullmatch(line.rstrip(b"\n")):
                malformed += 1
    return lines, malformed


def metric(page: str, name: str) -> int:
    """A counter's value on a /metrics page, summed over its labels."""
    return sum(int(float(value)) for value in re.findall(rf"^{name}(?:\{{[^}}]*\}})? (\S+)$", page, re.MULTILINE))


def settled_metrics(port: int, timeout: float = 10.0) -> str:
    """/metrics once every request is counted (a request is counted just after its last byte): the
    page of two scrapes in a row whose counts differ only by the first scrape itself."""
    def scrape() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            return response.read().decode()
    previous = scrape()
    deadline = time.monotonic() + timeout
    while True:
        page = scrape()
        settled = metric(page, "wheelhouse_http_requests_total") == metric(previous, "wheelhouse_http_requests_total") + 1
        if settled or time.monotonic() > deadline:
            return page
        previous = page


class Server:
    """One server under test: a name, how to reach and measure it, and where its log goes."""

    def __init__(self, name: str, kind: str, process, port: int, log: pathlib.Path | None):
        self.name, self.kind, self.process, self.port, self.log = name, kind, process, port, log
        self.runs: list[dict] = []
        self.wrk_requests = 0


def start_wheelhouse(binary: pathlib.Path, name: str, mode: str, args, data: pathlib.Path,
                     scratch: pathlib.Path) -> Server:
    slug = name.replace(" ", "-")
    log = scratch / f"{slug}.log" if mode != "off" else None
    process = pages.Wheelhouse(binary, data, args.threads, scratch / f"{slug}-stderr.log", args.nice,
                               access_log={"off": "off", "file": str(log), "stdout": "-"}[mode],
                               stdout_path=log if mode == "stdout" else None)
    process.start()
    return Server(name, "wheelhouse", process, process.port, log)


def start_nginx(name: str, mode: str, args, site: dict, scratch: pathlib.Path) -> Server:
    slug = name.replace(" ", "-")
    log = scratch / f"{slug}.log" if mode != "off" else None
    directives = {"off": "access_log off;",
                  "file": f"{NGINX_LOG_FORMAT}\n    access_log {log} same_facts;",
                  "buffered": f"{NGINX_LOG_FORMAT}\n    access_log {log} same_facts buffer=64k flush=1s;"}[mode]
    own_site = dict(site, port=pages.free_port())
    process = pages.Nginx(scratch / slug, args.threads, {"json": own_site}, args.nice, access_log=directives)
    process.start()
    return Server(name, "nginx", process, own_site["port"], log)


def box_counters() -> dict[str, int]:
    """The whole box's CPU time by kind (/proc/stat, in ticks) and the TCP segments it has sent."""
    fields = open("/proc/stat").readline().split()[1:]
    kinds = dict(zip(("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"), map(int, fields)))
    tcp = [line.split() for line in open("/proc/net/snmp") if line.startswith("Tcp:")]
    kinds["tcp_out_segments"] = int(dict(zip(tcp[0][1:], tcp[1][1:]))["OutSegs"])
    return kinds


def box_share(before: dict[str, int], after: dict[str, int], requests: int) -> dict:
    """Where the box's time went during a run, in microseconds a request (every process: the
    server, wrk and the kernel's network work on loopback), and the segments a request sent. The
    split shows whether a slow round did more work a request or did the same work slower."""
    ticks = os.sysconf("SC_CLK_TCK")
    per_request = {kind: (after[kind] - before[kind]) / ticks * 1e6 / max(requests, 1)
                   for kind in ("user", "system", "softirq", "idle", "steal")}
    per_request["tcp_segments"] = (after["tcp_out_segments"] - before["tcp_out_segments"]) / max(requests, 1)
    return per_request


def measure(server: Server, args, script: pathlib.Path, duration: int) -> dict:
    cpu_before = server.process.cpu()
    box_before = box_counters()
    wrk_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = pages.run_wrk(f"http://127.0.0.1:{server.port}/", pages.PIP_ACCEPT, args, duration, script)
    wrk_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run["box_per_request"] = box_share(box_before, box_counters(), run.get("requests", 0))
    # wrk does the same work for every request of every server: its CPU a request is this
    # moment's speed of the box, the yardstick a slow round is read against.
    run["box_per_request"]["wrk_cpu"] = ((wrk_after.ru_utime - wrk_before.ru_utime) +
                                         (wrk_after.ru_stime - wrk_before.ru_stime)) * 1e6 / max(run.get("requests", 0), 1)
    cpu_after = server.process.cpu()
    run["cpu_seconds"] = (cpu_after[0] - cpu_before[0]) + (cpu_after[1] - cpu_before[1])
    run["requests_per_cpu_second"] = run.get("requests", 0) / max(run["cpu_seconds"], 1e-9)
    run["load_average_after"] = pages.load_average()
    server.wrk_requests += run.get("requests", 0)
    return run


def account_lines(server: Server) -> dict:
    """Stops the server and sets its log's lines against the requests it served."""
    found: dict = {"server": server.name, "wrk_requests": server.wrk_requests}
    if server.kind == "wheelhouse":
        page = settled_metrics(server.port)
        # The last scrape is counted just after it answered, and logged.
        found["metrics_requests"] = metric(page, "wheelhouse_http_requests_total") + 1
        found["lost"] = metric(page, "wheelhouse_access_log_lines_lost_total")
        found["waits"] = metric(page, "wheelhouse_access_log_waits_total")
        found["exit_code"] = server.process.stop()
    else:
        server.process.stop()
    pattern = WHEELHOUSE_LINE if server.kind == "wheelhouse" else None
    found["lines"], found["malformed"] = count_lines(server.log, pattern)
    if "metrics_requests" in found:
        found["missing"] = found["metrics_requests"] - found["lines"]
    return found


def cpu_against_wrk(run: dict) -> float:
    """The server's CPU a request over wrk's: the box's speed moves both alike, so this ratio
    holds still between rounds where req/s moves by a quarter."""
    return (1e6 / max(run["requests_per_cpu_second"], 1e-9)) / max(run["box_per_request"]["wrk_cpu"], 1e-9)


def median_of(values: list[float]) -> float:
    ordered = sorted(values)
    return (ordered[(len(ordered) - 1) // 2] + ordered[len(ordered) // 2]) / 2


def row(name: str, runs: list[dict]) -> dict:
    median = pages.median_run(runs)
    return {"server": name, "requests_per_second": median["requests_per_second"],
            "cpu_against_wrk": median_of([cpu_against_wrk(run) for run in runs]),
            "latency_p99_us": median["latency_p99_us"], "requests_per_cpu_second": median["requests_per_cpu_second"],
            "all_rounds": [run["requests_per_second"] for run in runs]}


RATIOS = [  # (wheelhouse, nginx): the comparisons issue 15 asks for
    ("wheelhouse off", "nginx off"),
    ("wheelhouse file", "nginx file"),
    ("wheelhouse file", "nginx file buffered"),
    ("wheelhouse stdout", "nginx file"),
    ("wheelhouse stdout", "nginx file buffered"),
    ("wheelhouse stdout", "nginx off"),
    ("reference file", "nginx file"),
    ("reference stdout", "nginx off"),
    ("wheelhouse off", "reference off"),
    ("wheelhouse file", "reference file"),
    ("wheelhouse stdout", "reference stdout"),
]


def paired_ratios(runs: dict[str, list[dict]]) -> list[str]:
    """Each comparison round by round: both servers of a pair ran within seconds of each other, so
    their ratio is free of the drift in this box's speed that moves whole rounds by a quarter."""
    out = ["| comparison, round by round | req/s ratio: median (min-max) | rounds at >= 1.0 | "
           "req/CPU-s ratio: median | CPU a request against wrk's, theirs / ours: median | "
           "p99 ratio (theirs / ours): median |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    median = median_of
    for ours, theirs in RATIOS:
        if ours not in runs or theirs not in runs:
            continue
        pairs = list(zip(runs[ours], runs[theirs]))
        rate = [a["requests_per_second"] / b["requests_per_second"] for a, b in pairs]
        per_cpu = [a["requests_per_cpu_second"] / b["requests_per_cpu_second"] for a, b in pairs]
        p99 = [b["latency_p99_us"] / a["latency_p99_us"] for a, b in pairs]
        steady = [cpu_against_wrk(b) / cpu_against_wrk(a) for a, b in pairs]
        out.append(f"| {ours} / {theirs} | {median(rate):.2f} ({min(rate):.2f}-{max(rate):.2f}) | "
                   f"{sum(value >= 1.0 for value in rate)} of {len(rate)} | {median(per_cpu):.2f} | {median(steady):.3f} | "
                   f"{median(p99):.2f} |")
    return out


def tables(rows: dict[str, dict], lines: list[dict], runs: dict[str, list[dict]]) -> str:
    out = ["| server | req/s (median) | p99 | req/CPU-s | CPU a request ÷ wrk's (median) | req/s each round |",
           "| --- | ---: | ---: | ---: | ---: | --- |"]
    for name, figures in rows.items():
        out.append(f"| {name} | {figures['requests_per_second']:,.0f} | {pages.format_us(figures['latency_p99_us'])} | "
                   f"{figures['requests_per_cpu_second']:,.0f} | {figures['cpu_against_wrk']:.3f} | "
                   f"{', '.join(f'{value:,.0f}' for value in figures['all_rounds'])} |")
    out += ["", "| comparison | req/s ratio | req/CPU-s ratio |", "| --- | ---: | ---: |"]
    for ours, theirs in RATIOS:
        if ours in rows and theirs in rows:
            out.append(f"| {ours} / {theirs} | "
                       f"{rows[ours]['requests_per_second'] / rows[theirs]['requests_per_second']:.2f} | "
                       f"{rows[ours]['requests_per_cpu_second'] / rows[theirs]['requests_per_cpu_second']:.2f} |")
    out += [""] + paired_ratios(runs)
    out += ["", "| log | lines | requests /metrics counted | missing lines | requests wrk counted | "
                "malformed lines | lost (/metrics) | waits for the writer |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for found in lines:
        def cell(key: str) -> str:
            return f"{found[key]:,}" if key in found else "-"
        malformed = cell("malformed") if "metrics_requests" in found else "-"  # nginx's lines are its own format
        out.append(f"| {found['server']} | {cell('lines')} | {cell('metrics_requests')} | {cell('missing')} | "
                   f"{cell('wrk_requests')} | {malformed} | {cell('lost')} | {cell('waits')} |")
    return "\n".join(out)


SERVER_MODES = {  # name: (kind, mode)
    "nginx off": ("nginx", "off"), "nginx file": ("nginx", "file"), "nginx file buffered": ("nginx", "buffered"),
    "wheelhouse off": ("wheelhouse", "off"), "wheelhouse file": ("wheelhouse", "file"),
    "wheelhouse stdout": ("wheelhouse", "stdout"),
    "reference off": ("reference", "off"), "reference file": ("reference", "file"),
    "reference stdout": ("reference", "stdout"),
}
DEFAULT_SERVERS = "nginx off,nginx file,nginx file buffered,wheelhouse off,wheelhouse file,wheelhouse stdout"


def start_servers(args, data: pathlib.Path, site: dict, scratch: pathlib.Path) -> dict[str, Server]:
    servers = {}
    for name in args.servers:
        kind, mode = SERVER_MODES[name]
        if kind == "nginx":
            servers[name] = start_nginx(name, mode, args, site, scratch)
        else:
            binary = args.binary if kind == "wheelhouse" else args.reference_binary
            servers[name] = start_wheelhouse(binary, name, mode, args, data, scratch)
    return servers


def benchmark(args: argparse.Namespace) -> dict:
    work = args.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    corpus, summary = pages.prepare_corpus(args, work)
    data = work / f"data-{corpus.name}"
    report: dict = {"setup": {
        "projects": args.projects, "wheels_per_project": args.wheels_per_project, "wheels": summary["wheels"],
        "threads": args.threads, "wrk_threads": args.wrk_threads, "connections": args.connections,
        "duration_s": args.duration, "rounds": args.rounds, "nice": args.nice, "cores": os.cpu_count(),
        "commit": pages.run_text("git", "-C", str(pages.REPO_ROOT), "rev-parse", "HEAD"),
        "nginx": pages.run_text("nginx", "-v"), "binary": str(args.binary),
        "reference_binary": str(args.reference_binary) if args.reference_binary else None,
        "load_average_before": pages.load_average()}}
    report["ingest"] = pages.ingest(args, corpus, summary, data)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="access-log-", dir=work))
    servers: dict[str, Server] = {}
    try:
        paths = pages.scenario_paths(summary["project_names"], "cu128")["mix"]
        (scratch / "paths.txt").write_text("".join(path + "\n" for path in paths))
        script = scratch / "mix.lua"
        script.write_text(pages.MIX_SCRIPT % {"path_file": json.dumps(str(scratch / "paths.txt"))})
        source = pages.Wheelhouse(args.binary, data, args.threads, scratch / "pages-stderr.log", args.nice)
        source.start()
        sites = pages.mirror_pages(source.port, paths, ["json"], scratch / "roots")
        source.stop()

        servers = start_servers(args, data, sites["json"], scratch)
        for server in servers.values():  # warm: connections, page caches, page-ins
            measure(server, args, script, args.warmup)
        names = list(servers)
        for round_number in range(args.rounds):
            # Rotate the order, so no server always runs first or right after another.
            order = names[round_number % len(names):] + names[:round_number % len(names)]
            for name in order:
                run = measure(servers[name], args, script, args.duration)
                servers[name].runs.append(run)
                print(f"  round {round_number + 1}  {name:<22} {run['requests_per_second']:>9,.0f} req/s  "
                      f"p99 {pages.format_us(run['latency_p99_us']):>9}  {run['requests_per_cpu_second']:>8,.0f} "
                      f"req/CPU-s  box us/request: " + " ".join(
                          f"{kind} {value:.2f}" for kind, value in run["box_per_request"].items()), flush=True)
        rows = {name: row(name, server.runs) for name, server in servers.items()}
        lines = [account_lines(server) for server in servers.values() if server.log]
        runs = {name: server.runs for name, server in servers.items()}
        report.update(rows=rows, lines=lines, runs=runs, table=tables(rows, lines, runs))
        report["setup"]["load_average_after"] = pages.load_average()
    finally:
        for server in servers.values():
            server.process.stop()
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--wheels-per-project", type=int, default=25)
    parser.add_argument("--duration", type=int, default=10, help="seconds of each wrk run (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of warm-up per server")
    parser.add_argument("--rounds", type=int, default=3, help="runs per server; the table shows the median")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2, help="wheelhouse --threads and nginx worker_processes")
    parser.add_argument("--wrk-threads", type=int, default=2)
    parser.add_argument("--nice", type=int, default=0, help="nice value for wrk and every server alike")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--payload-bytes", type=int, default=2048)
    parser.add_argument("--ingest-jobs", type=int, default=0)
    parser.add_argument("--binary", type=pathlib.Path,
                        default=pages.REPO_ROOT / "build" / "release" / "server" / "wheelhouse")
    parser.add_argument("--reference-binary", type=pathlib.Path,
                        help="another wheelhouse (the build before a change) to run in its file and stdout modes")
    parser.add_argument("--work-dir", type=pathlib.Path, default=pages.REPO_ROOT / "build" / "bench")
    parser.add_argument("--results-dir", type=pathlib.Path, default=BENCH_DIR / "results")
    parser.add_argument("--reuse-data", action="store_true", help="reuse the ingested data folder of an earlier run")
    parser.add_argument("--keep", action="store_true", help="keep the logs, nginx prefixes and pages")
    parser.add_argument("--servers", default=DEFAULT_SERVERS,
                        help="comma-separated, from: " + ", ".join(SERVER_MODES) + " (default: the six without a "
                             "reference; --reference-binary adds its file and stdout modes)")
    args = parser.parse_args()
    args.servers = [name.strip() for name in args.servers.split(",") if name.strip()]
    if args.reference_binary and args.servers == DEFAULT_SERVERS.split(","):
        args.servers += ["reference file", "reference stdout"]
    unknown = [name for name in args.servers if name not in SERVER_MODES]
    if unknown:
        parser.error(f"unknown --servers {unknown}; choose from {', '.join(SERVER_MODES)}")
    if any(name.startswith("reference") for name in args.servers) and not args.reference_binary:
        parser.error("a reference server needs --reference-binary")
    for binary in filter(None, (args.binary, args.reference_binary)):
        if not binary.exists():
            parser.error(f"{binary} does not exist")
    for tool in ("wrk", "nginx"):
        if not shutil.which(tool):
            parser.error(f"{tool} is not on PATH (Debian: apt-get install wrk nginx-light)")

    report = benchmark(args)
    out = pages.save_results(report, "access-log", args.results_dir)
    setup = report["setup"]
    print(f"\n{setup['wheels']:,} wheels; {setup['threads']} server threads / nginx workers, wrk -t{setup['wrk_threads']} "
          f"-c{setup['connections']} -d{setup['duration_s']}s x {setup['rounds']} rounds; load average "
          f"{setup['load_average_before'][0]:.1f} before, {setup['load_average_after'][0]:.1f} after\n")
    print(report["table"])
    print(f"\nresults: {out}")
    # The binary under test must account for every request; the reference's shortfall is a figure.
    bad = [found for found in report["lines"] if found["server"].startswith("wheelhouse") and
           (found["missing"] or found["malformed"] or found["lost"] or found["exit_code"])]
    if bad:
        sys.exit(f"lines do not match requests: {bad}")


if __name__ == "__main__":
    main()
