#!/usr/bin/python3
"""What the transport's own read loop costs: this build beside a baseline binary (the previous
one, say main's), in the same run, on the two paths every request takes.

- `GET /healthz` on kept-alive connections: the header read (a request with no body).
- `GET /healthz` with a 60,000-byte body on kept-alive connections: the body read loop (read
  into the 64 KiB buffer, parsed, dropped), deadline bookkeeping included.

Both servers run at once on their own data folders; each round runs wrk against one and then the
other, alternating which goes first. Reports requests a second, p99 and server CPU per request,
as medians over the rounds, and this build's ratio to the baseline. Nothing is asserted; Markdown
goes to stdout and every raw figure to bench/results/.

    /usr/bin/python3 bench/transport_overhead.py --baseline /path/to/previous/wheelhouse [--rounds 5]

Everything listens on 127.0.0.1 only; every wrk run stops by itself after --duration, and both
servers are stopped when the script ends, also on failure.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import statistics
import tempfile

from simple_pages import REPO_ROOT, Wheelhouse, cpu_seconds, load_average, run_wrk, save_results

BODY_BYTES = 60_000  # under the 64 KiB a request without a body route may send, read and dropped
SCENARIOS = {
    "no body": None,
    f"{BODY_BYTES:,}-byte body": f'wrk.method = "GET"\nwrk.body = string.rep("a", {BODY_BYTES})\n',
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", type=pathlib.Path, default=REPO_ROOT / "build/release/server/wheelhouse")
    parser.add_argument("--baseline", type=pathlib.Path, required=True, help="the binary to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2, help="server I/O threads")
    args = parser.parse_args()
    args.nice, args.wrk_threads = 0, 2

    scratch = pathlib.Path(tempfile.mkdtemp(prefix="transport-overhead-"))
    servers = {name: Wheelhouse(binary, scratch / name, args.threads, scratch / f"{name}.log", args.nice)
               for name, binary in (("baseline", args.baseline), ("this build", args.binary))}
    scripts = {}
    for scenario, lua in SCENARIOS.items():
        if lua:
            scripts[scenario] = scratch / f"{len(scripts)}.lua"
            scripts[scenario].write_text(lua)
    report = {"load_average_before": load_average(), "binaries": {"baseline": str(args.baseline),
              "this build": str(args.binary)}, "rounds": []}
    try:
        for server in servers.values():
            server.start()
        for round_number in range(args.rounds):
            order = list(servers) if round_number % 2 == 0 else list(reversed(servers))
            row = {}
            for scenario in SCENARIOS:
                for name in order:
                    server = servers[name]
                    before = sum(cpu_seconds(server.process.pid))
                    run = run_wrk(f"http://127.0.0.1:{server.port}/healthz", "*/*", args, args.duration,
                                  scripts.get(scenario))
                    run["cpu_ms_per_request"] = ((sum(cpu_seconds(server.process.pid)) - before) * 1000 /
                                                 max(run.get("requests", 1), 1))
                    errors = [run["socket_errors"].get(kind) for kind in ("connect", "read", "write")]
                    if run["non_2xx_3xx"] or any(errors):  # then nothing was measured
                        raise RuntimeError(f"{name} failed requests of '{scenario}': {run}")
                    row.setdefault(scenario, {})[name] = run
                    print(f"  round {round_number + 1} {scenario:<20} {name:<10} {run['requests_per_second']:>9,.0f} "
                          f"req/s  p99 {run['latency_p99_us'] / 1000:6.2f} ms  "
                          f"{run['cpu_ms_per_request']:.4f} ms CPU/req  "
                          f"{run['socket_errors'].get('timeout', 0)} wrk timeouts", flush=True)
            report["rounds"].append(row)
    finally:
        for server in servers.values():
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    report["load_average_after"] = load_average()

    def median(scenario: str, name: str, key: str) -> float:
        return statistics.median(row[scenario][name][key] for row in report["rounds"])

    print("\n| request | figure | baseline | this build | ratio |")
    print("| --- | --- | ---: | ---: | ---: |")
    for scenario in SCENARIOS:
        for label, key, scale, form in (("req/s", "requests_per_second", 1, ",.0f"),
                                        ("p99 (ms)", "latency_p99_us", 1e-3, ".2f"),
                                        ("CPU ms/req", "cpu_ms_per_request", 1, ".4f")):
            base, this = median(scenario, "baseline", key) * scale, median(scenario, "this build", key) * scale
            print(f"| {scenario} | {label} | {base:{form}} | {this:{form}} | {this / base:.2f}x |")
    timeouts = {name: sum(row[scenario][name]["socket_errors"].get("timeout", 0) for row in report["rounds"]
                          for scenario in SCENARIOS) for name in servers}
    print(f"\nwrk timeouts (a request outstanding past 2 s), all runs: {timeouts}")
    print(f"load average before {report['load_average_before']}, after {report['load_average_after']}")
    print(f"raw figures: {save_results(report, 'transport-overhead')}")


if __name__ == "__main__":
    main()
