"""Real pip against the variant indexes: /simple/ lets PEP 440 choose among the builds of one
release, which compares local labels as text and installs a build for the wrong torch; the
variant index of the machine installs exactly its build, with its pure-Python dependency."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
import urllib.error

import pytest
from packaging.version import Version

from conftest import ingest
from wheelbuilder import build_wheel

PY = f"cp{sys.version_info.major}{sys.version_info.minor}"  # Debian's python3 runs this and pip
NATIVE_TAGS = f"{PY}-{PY}-linux_x86_64"

# Requirements spell the name as flash-attn's METADATA does ("flash_attn"): Debian 12's pip 23.0
# refuses PEP 658 metadata whose Name differs from the requirement's spelling (pypa/pip#12038).
RELEASE = "2.8.3"
# One release of flash-attn, built for several machines, as CI names them.
LABELS = [
    "cu128torch2.8",
    "cu12torch2.8cxx11abiTRUE",  # upstream's CUDA-12-for-any-minor build
    "cu130torch2.10",            # torch 2.10, any GPU
    "cu130sm89torch2.10.0",      # torch 2.10, built for Ada (sm89) only
    "cu130sm120torch2.10.0",     # torch 2.10, built for Blackwell (sm120) only
    "cu130sm90atorch2.10.0",     # torch 2.10, Hopper's arch-specific code (sm_90a): an H100 only
    "cu130torch2.11",            # the newest torch: wrong for everyone still on 2.10
]

# The machine the test describes: CUDA 13.0, torch 2.10, an RTX 4090 (sm89).
MACHINE_SELECTOR = "cu130-torch2.10-sm89"
MACHINE_BUILD = "cu130sm89torch2.10.0"


@pytest.fixture
def index(tmp_path, wheelhouse_bin, start_server):
    farm = tmp_path / "farm"
    for label in LABELS:
        build_wheel(farm, "flash_attn", f"{RELEASE}+{label}", NATIVE_TAGS,
                    metadata_extra="Requires-Dist: einops>=0.8\n",
                    files={"flash_attn/__init__.py": f"BUILD = {label!r}\n",
                           "flash_attn/_C.so": b"\x7fELF" + label.encode() * 200})
    build_wheel(farm, "einops", "0.7.0", files={"einops/__init__.py": "VERSION = '0.7.0'\n"})
    build_wheel(farm, "einops", "0.8.1", files={"einops/__init__.py": "VERSION = '0.8.1'\n"})
    data = tmp_path / "data"
    result = ingest(wheelhouse_bin, data, farm)
    assert result.returncode == 0, result.stdout + result.stderr
    return start_server(data)


def installed(target: pathlib.Path) -> dict[str, str]:
    """What pip put in a --target directory: distribution -> version, from the dist-info names."""
    found = {}
    for path in target.glob("*.dist-info"):
        name, version = path.name[: -len(".dist-info")].split("-", 1)
        found[name] = version
    return found


def build_of(target: pathlib.Path) -> str:
    namespace: dict = {}
    exec((target / "flash_attn" / "__init__.py").read_text(), namespace)
    return namespace["BUILD"]


def test_plain_index_lets_pep440_pick_a_build_for_the_wrong_torch(index, pip, tmp_path):
    # What PEP 440 orders highest among the builds of the release: packaging decides, as pip does.
    pep440_choice = max(LABELS, key=lambda label: Version(f"{RELEASE}+{label}"))
    assert pep440_choice == "cu130torch2.11", "the test's premise: text order puts torch2.11 on top"
    # and between the two GPU builds, text order puts sm89 above sm120
    assert Version(f"{RELEASE}+cu130sm89torch2.10.0") > Version(f"{RELEASE}+cu130sm120torch2.10.0")

    target = tmp_path / "site"
    pip("install", "--index-url", index.url + "simple/", "--target", str(target), f"flash_attn=={RELEASE}")
    assert installed(target)["flash_attn"] == f"{RELEASE}+{pep440_choice}"
    assert build_of(target) == pep440_choice != MACHINE_BUILD


def test_variant_index_installs_exactly_the_machines_build_and_its_dependency(index, pip, tmp_path):
    target = tmp_path / "site"
    before = len(index.access_lines())
    pip("install", "--index-url", index.url + f"variants/{MACHINE_SELECTOR}/simple/", "--target", str(target),
        f"flash_attn=={RELEASE}")
    assert installed(target) == {"flash_attn": f"{RELEASE}+{MACHINE_BUILD}", "einops": "0.8.1"}
    assert build_of(target) == MACHINE_BUILD
    assert (target / "einops" / "__init__.py").read_text() == "VERSION = '0.8.1'\n"
    lines = index.access_lines()[before:]
    # both came through the variant index: the dependency is listed there although it has no variant
    assert any(f'"GET /variants/{MACHINE_SELECTOR}/simple/flash-attn/" 200' in line for line in lines), lines
    assert any(f'"GET /variants/{MACHINE_SELECTOR}/simple/einops/" 200' in line for line in lines), lines
    assert not any('"GET /simple/' in line for line in lines), lines


@pytest.mark.parametrize("selector, build", [
    ("cu130-torch2.10-sm120", "cu130sm120torch2.10.0"),  # sm120 sorts below sm89 as text
    ("cu130-torch2.10-sm90", "cu130sm90atorch2.10.0"),   # a 9.0 GPU runs sm_90a code (issue 16 item 4)
    ("cu130-torch2.10-sm100", "cu130torch2.10"),         # no Blackwell build: the one for any GPU
    ("cu130-torch2.10-sm89", MACHINE_BUILD),             # sm_90a code does not run on 8.9
    ("cu130-torch2.10", "cu130torch2.10"),               # GPU not named: never a one-GPU build
    ("cu128-torch2.8", "cu128torch2.8"),                 # 12.8 named exactly beats "any 12.x"
    ("cu126-torch2.8", "cu12torch2.8cxx11abiTRUE"),      # only the any-12.x build fits CUDA 12.6
])
def test_each_machine_gets_its_own_build(index, pip, tmp_path, selector, build):
    report = tmp_path / "report.json"
    pip("install", "--dry-run", "--ignore-installed", "--report", str(report),
        "--index-url", index.url + f"variants/{selector}/simple/", "flash_attn")
    resolved = {item["metadata"]["name"]: item["metadata"]["version"]
                for item in json.loads(report.read_text())["install"]}
    assert resolved == {"flash_attn": f"{RELEASE}+{build}", "einops": "0.8.1"}


def test_a_selector_in_another_spelling_redirects_and_still_installs(index, pip, tmp_path):
    report = tmp_path / "report.json"
    pip("install", "--dry-run", "--ignore-installed", "--report", str(report),
        "--index-url", index.url + "variants/SM89-torch2.10-cu130/simple/", "flash_attn")
    versions = [item["metadata"]["version"] for item in json.loads(report.read_text())["install"]]
    assert f"{RELEASE}+{MACHINE_BUILD}" in versions


# What people copy (issue 16 item 3): the wheel's own label, underscores, torch.__version__ with
# nvidia-smi's compute capability.
@pytest.mark.parametrize("spelling", ["cu130sm89torch2.10.0", "cu130_torch2.10_sm89", "torch2.10.0+cu130-sm8.9"])
def test_the_spellings_people_copy_redirect_and_install_the_machines_build(index, pip, tmp_path, spelling):
    report = tmp_path / "report.json"
    pip("install", "--dry-run", "--ignore-installed", "--report", str(report),
        "--index-url", index.url + f"variants/{spelling}/simple/", "flash_attn")
    versions = [item["metadata"]["version"] for item in json.loads(report.read_text())["install"]]
    assert versions == [f"{RELEASE}+{MACHINE_BUILD}", "0.8.1"]


def resolved_through(pip, tmp_path, index, selector: str) -> dict[str, str]:
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.json"
    pip("install", "--dry-run", "--ignore-installed", "--report", str(report),
        "--index-url", index.url + f"variants/{selector}/simple/", "flash_attn")
    return {item["metadata"]["name"]: item["metadata"]["version"] for item in json.loads(report.read_text())["install"]}


# Issue 28 item 3: torch.__version__, nvidia-smi's "CUDA Version: 13.0" and compute capability,
# nvcc's "release 12.8, V12.8.93", pasted together where they agree with each other.
@pytest.mark.parametrize("pasted, canonical", [
    ("2.10.0+cu130-sm8.9", "cu130-torch2.10.0-sm89"),
    ("cu130-torch2.10.0+cu130-sm89", "cu130-torch2.10.0-sm89"),
    ("cuda13.0-2.10.0+cu130", "cu130-torch2.10.0"),
    ("cuda12.8.93-2.8.0+cu128", "cu128-torch2.8.0"),
    ("cu12-2.8.0+cu128", "cu128-torch2.8.0"),
])
def test_a_pasted_selector_that_agrees_with_itself_resolves_as_its_canonical_spelling(index, pip, tmp_path, pasted,
                                                                                       canonical):
    expected = resolved_through(pip, tmp_path, index, canonical)
    before = len(index.access_lines())
    assert resolved_through(pip, tmp_path, index, pasted) == expected
    lines = index.access_lines()[before:]
    # pip followed the 301 to the canonical page, and was answered there
    asked = re.escape(pasted).replace(re.escape("+"), "(\\+|%2B)")
    assert any(re.search(f'"GET /variants/{asked}/simple/flash-attn/" 301', line) for line in lines), lines
    assert any(f'"GET /variants/{canonical}/simple/flash-attn/" 200' in line for line in lines), lines


def test_a_pasted_selector_that_disagrees_with_itself_names_the_spelling_to_use(index, pip, tmp_path):
    pasted = "cu128-torch2.10.0+cu130"
    result = pip("install", "--dry-run", "--ignore-installed", "--report", str(tmp_path / "report.json"),
                 "--index-url", index.url + f"variants/{pasted}/simple/", "flash_attn", check=False)
    assert result.returncode != 0
    with pytest.raises(urllib.error.HTTPError) as refused:
        index.get(f"/variants/{pasted}/simple/flash-attn/")
    assert refused.value.code == 400
    assert refused.value.read().decode() == (
        "400 Bad Request: use cu130-torch2.10.0 (what torch.__version__ says) or cu128-torch2.10.0: the variant "
        "selector 'cu128-torch2.10.0+cu130' names a CUDA version twice (cu128 and cu130), and a machine has one\n")
    # the first spelling offered is one pip installs from
    assert resolved_through(pip, tmp_path, index, "cu130-torch2.10.0")["flash_attn"] == f"{RELEASE}+cu130torch2.10"


def readme_selector_snippet() -> str:
    """The Python of README's "To print your selector" snippet, as written there."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    after = text.split("To print your selector", 1)[1]
    block = after.split("```sh\n", 1)[1].split("```", 1)[0]
    assert block.startswith("python -c '") and block.rstrip().endswith("'"), block
    return block[len("python -c '"):].rstrip()[:-1]


# torch as each machine reports it: version.cuda, version.hip, __version__, the GPU's capability.
MACHINES = [
    ("13.0", None, "2.10.0+cu130", (9, 0), "cu130-torch2.10-sm90", "cu130sm90atorch2.10.0"),   # H100
    ("13.0", None, "2.10.0+cu130", (8, 9), "cu130-torch2.10-sm89", MACHINE_BUILD),             # RTX 4090
    ("12.8", None, "2.8.0+cu128", (12, 0), "cu128-torch2.8-sm120", "cu128torch2.8"),          # RTX 5090
    ("12.10", None, "2.8.0+cu12.10", (8, 0), "cu12.10-torch2.8-sm80", "cu12torch2.8cxx11abiTRUE"),
    (None, "6.4.43482", "2.8.0+rocm6.4", None, "rocm6.4-torch2.8", None),
]


@pytest.mark.parametrize("cuda, hip, version, capability, printed, build", MACHINES,
                         ids=[machine[4] for machine in MACHINES])
def test_the_readme_snippet_prints_a_selector_the_index_reads_as_it_is(index, pip, tmp_path, cuda, hip, version,
                                                                       capability, printed, build):
    fake = tmp_path / "machine"  # torch is not installed here: a module that reports this machine
    fake.mkdir()
    (fake / "torch.py").write_text(
        f"import types\n__version__ = {version!r}\nversion = types.SimpleNamespace(cuda={cuda!r}, hip={hip!r})\n"
        f"cuda = types.SimpleNamespace(is_available=lambda: {capability is not None!r},\n"
        f"                             get_device_capability=lambda: {capability!r})\n")
    result = subprocess.run([sys.executable, "-c", readme_selector_snippet()], capture_output=True, text=True,
                            env={"PYTHONPATH": str(fake), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == printed
    with index.get(f"/variants/{printed}/simple/") as response:  # 200, not a redirect
        assert response.url == index.url + f"variants/{printed}/simple/"
    if build is None:
        return
    report = tmp_path / "report.json"
    pip("install", "--dry-run", "--ignore-installed", "--report", str(report),
        "--index-url", index.url + f"variants/{printed}/simple/", "flash_attn")
    versions = [item["metadata"]["version"] for item in json.loads(report.read_text())["install"]]
    assert versions[0] == f"{RELEASE}+{build}"


def test_a_selector_that_cannot_be_met_fails_with_the_reason(index, pip, tmp_path):
    result = pip("install", "--dry-run", "--ignore-installed", "--report", str(tmp_path / "report.json"), "--index-url",
                 index.url + "variants/cu130-cu128/simple/", "flash-attn", check=False)
    assert result.returncode != 0
    assert "No matching distribution found for flash-attn" in result.stderr, result.stderr
    with pytest.raises(urllib.error.HTTPError) as refused:
        index.get("/variants/cu130-cu128/simple/flash-attn/")
    assert refused.value.code == 400
    assert refused.value.read().decode() == (
        "400 Bad Request: use cu130 or cu128: the variant selector 'cu130-cu128' names a CUDA version twice "
        "(cu130 and cu128), and a machine has one\n")
