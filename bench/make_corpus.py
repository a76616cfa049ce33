#!/usr/bin/python3
"""Generates a corpus of real wheels for the benchmarks: N projects x M wheels, laid out as
<out>/<project>/<wheel>.whl, with the names a CUDA wheel index really holds (flash-attn,
nunchaku, ...; local labels such as +cu128torch2.8 and +cu130sm89torch2.10.0; several
python tags; Requires-Python on some projects).

The corpus is a function of its parameters: the same --seed, sizes and payload give the same
files, byte for byte (zip entry times are pinned), so pages and their sizes repeat across runs.
The wheels themselves are written by tests/e2e/wheelbuilder.py.

    /usr/bin/python3 bench/make_corpus.py --projects 200 --wheels-per-project 25 --out /tmp/corpus
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import pathlib
import random
import re
import sys
import time
import types
import zipfile

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests" / "e2e"))
import wheelbuilder  # noqa: E402

# Bumped whenever the layout or content of a corpus changes, so cached corpora are rebuilt.
GENERATOR_VERSION = 1
COMPLETE_MARKER = "corpus.json"

# 2025-01-01T00:00:00Z: every zip entry carries this time, so a corpus is reproducible.
PINNED_EPOCH = 1735689600

REAL_PROJECTS = [
    "flash-attn", "sageattention", "nunchaku", "xformers", "cupy-cuda12x", "flashinfer-python",
    "causal-conv1d", "mamba-ssm", "natten", "torch-scatter", "torch-sparse", "bitsandbytes",
    "deepspeed", "apex", "transformer-engine", "flash-attn-3", "spconv-cu120", "triton",
    "llama-cpp-python", "vllm", "sgl-kernel", "xgrammar", "auto-gptq", "torchao",
]
NAME_PARTS = (
    ["fused", "fast", "tiny", "paged", "sparse", "grouped", "ring", "block", "quant", "mixed", "deep", "open"],
    ["attn", "rope", "moe", "gemm", "conv", "norm", "scan", "kv", "lora", "sampler", "tokenizer", "ops"],
    ["kernels", "cuda", "ext", "lib", "core", "triton", "cpp", "", "", ""],
)

CUDA_TAGS = ["118", "121", "124", "126", "128", "129", "130"]
TORCH_VERSIONS = ["2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10"]
SM_ARCHS = ["80", "86", "89", "90a", "100", "120"]
PYTHON_TAGS = ["cp39", "cp310", "cp311", "cp312", "cp313", "cp313t", "cp314", "cp314t"]
PLATFORMS = [
    "linux_x86_64", "manylinux_2_28_x86_64", "manylinux_2_17_x86_64.manylinux2014_x86_64",
    "manylinux_2_28_aarch64", "win_amd64",
]
REQUIRES_PYTHON = [">=3.9", ">=3.10", ">=3.9,<3.15", "!=3.12.0,>=3.10"]


def display_name(index: int, rng: random.Random) -> str:
    """A project name as its author wrote it; the first ones are real CUDA-wheel projects."""
    if index < len(REAL_PROJECTS):
        return REAL_PROJECTS[index]
    words = [rng.choice(part) for part in NAME_PARTS]
    name = "-".join(word for word in words if word) + f"-{index}"
    # Some authors write names pip normalises: Fused_Rope.Kernels -> fused-rope-kernels.
    if rng.random() < 0.2:
        name = re.sub(r"-", rng.choice(["_", "."]), name).title()
    return name


def label_family(rng: random.Random) -> str:
    """How one project spells its local labels, after the projects that publish such builds."""
    return rng.choice(["cuda-torch", "cuda-sm-torch", "cuda-torch-abi", "torch-andhigher", "rocm-cpu", "none"])


def local_labels(family: str, rng: random.Random) -> list[str]:
    cudas = sorted(rng.sample(CUDA_TAGS, 3))
    torches = sorted(rng.sample(TORCH_VERSIONS, 3), key=lambda v: tuple(map(int, v.split("."))))
    if family == "cuda-torch":  # flash-attn on its releases: +cu128torch2.8
        return [f"cu{c}torch{t}" for c in cudas for t in torches]
    if family == "cuda-sm-torch":  # nunchaku-style per-architecture builds: +cu130sm89torch2.10.0
        return [f"cu{c}sm{s}torch{t}.0" for c in cudas[-2:] for s in rng.sample(SM_ARCHS, 2) for t in torches[-2:]]
    if family == "cuda-torch-abi":  # flash-attn's older spelling: +cu12torch2.7cxx11abiTRUE
        return [f"cu{c[:2]}torch{t}cxx11abi{abi}" for c in cudas[:1] for t in torches for abi in ("TRUE", "FALSE")]
    if family == "torch-andhigher":  # SageAttention: +cu128torch2.9.0andhigher
        return [f"cu{c}torch{t}.0andhigher" for c in cudas for t in torches[-1:]]
    if family == "rocm-cpu":
        return ["rocm6.2", "rocm6.4", "cpu"]
    return [""]


def project_versions(count: int, rng: random.Random) -> list[str]:
    major, minor, patch = rng.randint(0, 3), rng.randint(0, 12), 0
    versions = []
    for _ in range(count):
        step = rng.random()
        if step < 0.15:
            minor, patch = minor + 1, 0
            versions.append(f"{major}.{minor}.0rc1")
        if step < 0.6:
            patch += 1
        else:
            minor, patch = minor + 1, 0
        versions.append(f"{major}.{minor}.{patch}" + (".post1" if rng.random() < 0.05 else ""))
    return versions


def plan_project(index: int, wheels: int, seed: int) -> dict:
    """Every wheel of one project: name, version (with label), tags, Requires-Python."""
    rng = random.Random(f"{seed}:project:{index}")
    name = display_name(index, rng)
    family = label_family(rng)
    labels = local_labels(family, rng)
    python_tags = sorted(rng.sample(PYTHON_TAGS, rng.randint(2, 5)), key=PYTHON_TAGS.index)
    platform = rng.choice(PLATFORMS)
    requires_python = rng.choice(REQUIRES_PYTHON) if rng.random() < 0.5 else None
    pure = family == "none" and rng.random() < 0.5
    tag_sets = ["py3-none-any"] if pure else [f"{p}-{p}-{platform}" for p in python_tags]
    per_version = len(labels) * len(tag_sets)
    versions = project_versions(-(-wheels // per_version) + 1, rng)
    combinations = list(itertools.product(versions, labels, tag_sets))
    chosen = sorted(rng.sample(range(len(combinations)), wheels))
    planned = []
    for position in chosen:
        version, label, tags = combinations[position]
        planned.append({
            "name": name,
            "version": f"{version}+{label}" if label else version,
            "tags": tags,
            "requires_python": requires_python,
            "seed": f"{seed}:wheel:{index}:{position}",
        })
    return {"name": name, "family": family, "wheels": planned}


def _pin_zip_clock() -> None:
    # zipfile stamps entries written by writestr() with the current time; a fixed clock makes
    # the archives (and so their sha256) reproducible.
    zipfile.time = types.SimpleNamespace(time=lambda: PINNED_EPOCH, localtime=time.gmtime)


def _write_project(job: tuple[pathlib.Path, dict, int]) -> int:
    out_dir, project, payload_bytes = job
    directory = out_dir / re.sub(r"[-_.]+", "-", project["name"]).lower()
    module = wheelbuilder.escape_name(project["name"]).lower()
    for wheel in project["wheels"]:
        rng = random.Random(wheel["seed"])
        # Random bytes do not compress, so a wheel is about payload_bytes on disk.
        files = {
            f"{module}/__init__.py": f"__version__ = {wheel['version']!r}\n",
            f"{module}/_kernels.bin": rng.randbytes(payload_bytes),
        }
        extra = "Requires-Dist: torch\n" if "torch" in wheel["version"] else ""
        wheelbuilder.build_wheel(directory, wheel["name"], wheel["version"], tags=wheel["tags"], files=files,
                                 metadata_extra=extra, requires_python=wheel["requires_python"],
                                 summary=f"{wheel['name']} benchmark wheel")
    return len(project["wheels"])


def corpus_parameters(projects: int, wheels_per_project: int, seed: int, payload_bytes: int) -> dict:
    return {"generator": GENERATOR_VERSION, "projects": projects, "wheels_per_project": wheels_per_project,
            "seed": seed, "payload_bytes": payload_bytes}


def make_corpus(out_dir: str | pathlib.Path, projects: int, wheels_per_project: int, seed: int = 1,
                payload_bytes: int = 2048, jobs: int | None = None) -> dict:
    """Writes the corpus into out_dir (which must be empty or absent) and returns its summary:
    the parameters, the project names in order, wheel count, bytes and seconds taken."""
    out_dir = pathlib.Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise SystemExit(f"{out_dir} is not empty; give a new directory or remove it first")
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    plans = [plan_project(index, wheels_per_project, seed) for index in range(projects)]
    normalized = [re.sub(r"[-_.]+", "-", plan["name"]).lower() for plan in plans]
    if len(set(normalized)) != len(normalized):
        raise SystemExit("two generated projects share a normalised name; this is a bug in make_corpus.py")
    jobs = jobs or os.cpu_count() or 1
    with multiprocessing.Pool(jobs, initializer=_pin_zip_clock) as pool:
        written = sum(pool.imap_unordered(_write_project, [(out_dir, plan, payload_bytes) for plan in plans],
                                          chunksize=max(1, projects // (jobs * 8))))
    total_bytes = sum(path.stat().st_size for path in out_dir.rglob("*.whl"))
    summary = {
        **corpus_parameters(projects, wheels_per_project, seed, payload_bytes),
        "wheels": written,
        "bytes": total_bytes,
        "seconds": round(time.monotonic() - started, 2),
        "project_names": normalized,
    }
    # Written last: a corpus without it was interrupted and is not reused.
    (out_dir / COMPLETE_MARKER).write_text(json.dumps(summary, indent=1))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--wheels-per-project", type=int, default=25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--payload-bytes", type=int, default=2048, help="incompressible bytes in each wheel")
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: one per core)")
    parser.add_argument("--out", required=True, help="directory to create")
    args = parser.parse_args()
    if args.projects < 1 or args.wheels_per_project < 1:
        parser.error("--projects and --wheels-per-project must be at least 1")
    summary = make_corpus(args.out, args.projects, args.wheels_per_project, args.seed, args.payload_bytes, args.jobs)
    rate = summary["wheels"] / max(summary["seconds"], 1e-9)
    print(f"{summary['wheels']} wheels in {summary['projects']} projects, {summary['bytes'] / 1e6:.1f} MB, "
          f"{summary['seconds']} s ({rate:.0f} wheels/s) -> {args.out}")


if __name__ == "__main__":
    main()
