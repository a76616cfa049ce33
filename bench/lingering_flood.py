#!/usr/bin/python3
"""A normal client's success rate and p99 while a flood of refused uploads holds the connection cap
(issue 24 item 5): this build beside a baseline binary (the one before, say), in the same run.

The flood (tests/e2e/connection_flood.py): --flood connections, each a PUT without credentials
(401 at its headers) that goes on sending its 100 MB body, 2 KiB every 0.25 s, so the server
lingers on it to drop the body; a connection the server closes is opened again at its next turn.
The normal client asks for GET /simple/ every --every seconds on a new connection, as a pip
without a kept-alive connection would, --requests times, with the flood and without it. Both
servers run with --max-connections (default 24: what `ulimit -n 128` leaves with 2 threads).

Each round runs the baseline and this build in turn, alternating which goes first. Reports, per
binary and phase, the share of requests answered 200, the other answers, and p50/p99 of the 200s
(medians over the rounds), with the server's CPU seconds over the phase. Nothing is asserted;
Markdown goes to stdout and every raw figure to bench/results/.

    /usr/bin/python3 bench/lingering_flood.py --baseline /path/to/previous/wheelhouse [--rounds 3]

Everything listens on 127.0.0.1 only; both servers are stopped when the script ends, also on failure.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

from simple_pages import REPO_ROOT, Wheelhouse, cpu_seconds, load_average, save_results

sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
from connection_flood import LingeringFlood, NormalClient  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(server: Wheelhouse, args: argparse.Namespace, flooded: bool) -> dict:
    address = ("127.0.0.1", server.port)
    user_before, system_before = cpu_seconds(server.process.pid)
    client = NormalClient(address)
    flood = LingeringFlood(address, clients=args.flood)
    if flooded:
        flood.__enter__()
        time.sleep(args.settle)  # every place under the cap taken
    try:
        client.run(args.requests, args.every)
    finally:
        if flooded:
            flood.__exit__(None, None, None)
    user_after, system_after = cpu_seconds(server.process.pid)
    served = client.served()
    return {
        "success": len(served) / len(client.statuses),
        "answers": dict(collections.Counter(str(status) for status in client.statuses)),
        "p50_ms": percentile(served, 0.50) * 1000,
        "p99_ms": percentile(served, 0.99) * 1000,
        "flood_connections": flood.connections,
        "server_cpu_s": (user_after - user_before) + (system_after - system_before),
    }


def median_of(runs: list[dict]) -> dict:
    merged = collections.Counter()
    for run in runs:
        merged.update(run["answers"])
    return {
        "success": statistics.median(run["success"] for run in runs),
        "answers": dict(merged),
        "p50_ms": statistics.median(run["p50_ms"] for run in runs),
        "p99_ms": statistics.median(run["p99_ms"] for run in runs),
        "flood_connections": statistics.median(run["flood_connections"] for run in runs),
        "server_cpu_s": statistics.median(run["server_cpu_s"] for run in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build/release/server/wheelhouse")
    parser.add_argument("--baseline", type=pathlib.Path, required=True, help="the binary to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200, help="the normal client's, per phase")
    parser.add_argument("--every", type=float, default=0.05, help="seconds between the normal client's requests")
    parser.add_argument("--flood", type=int, default=160, help="connections in the flood")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds the flood runs before the client starts")
    parser.add_argument("--max-connections", type=int, default=24)
    parser.add_argument("--threads", type=int, default=2, help="server I/O threads")
    args = parser.parse_args()

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="lingering-flood-"))
    servers = {name: Wheelhouse(binary, scratch / name, args.threads, scratch / f"{name}.log", 0)
               for name, binary in (("baseline", args.baseline), ("this build", args.binary))}
    for server in servers.values():
        server.command += ["--max-connections", str(args.max_connections)]
    report = {"load_average_before": load_average(), "arguments": {k: str(v) for k, v in vars(args).items()},
              "rounds": []}
    try:
        for server in servers.values():
            server.start()
        for round_number in range(args.rounds):
            order = list(servers) if round_number % 2 == 0 else list(reversed(servers))
            figures = {name: {phase: measure(servers[name], args, phase == "flood") for phase in ("quiet", "flood")}
                       for name in order}
            report["rounds"].append(figures)
            print(f"round {round_number + 1}: " + "; ".join(
                f"{name} {figures[name]['flood']['success']:.0%} served under the flood" for name in order),
                file=sys.stderr)
    finally:
        for server in servers.values():
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    report["load_average_after"] = load_average()
    saved = save_results(report, "lingering_flood")

    print(f"{args.flood} lingering uploads against --max-connections {args.max_connections}, {args.threads} I/O "
          f"threads; the normal client: {args.requests} requests of GET /simple/, one every {args.every} s, each on "
          f"a new connection; medians of {args.rounds} rounds (load average {report['load_average_before']} before, "
          f"{report['load_average_after']} after)\n")
    print("| binary | phase | answered 200 | other answers (all rounds) | p50 of the 200s | p99 of the 200s | flood connections "
          "opened | server CPU s |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for name in servers:
        for phase in ("quiet", "flood"):
            figures = median_of([run[name][phase] for run in report["rounds"]])
            others = ", ".join(f"{count}× {'no answer' if status == '0' else status}"
                               for status, count in sorted(figures["answers"].items()) if status != "200") or "–"
            print(f"| {name} | {phase} | {figures['success']:.1%} | {others} | {figures['p50_ms']:.2f} ms | "
                  f"{figures['p99_ms']:.2f} ms | {figures['flood_connections']:.0f} | {figures['server_cpu_s']:.2f} |")
    print(f"\nraw figures: {saved}")


if __name__ == "__main__":
    main()
