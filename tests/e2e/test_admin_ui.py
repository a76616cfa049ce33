"""The admin web catalog in a real browser: Debian's Chromium, driven by playwright-core from
npm, against the real binary. The browser steps are in browser/admin_ui.mjs; this file builds
the index, runs them, and checks with pip what the page changed. Screenshots of every page go
to tests/e2e/artifacts/."""

from __future__ import annotations

import json
import os
import pathlib
import shlex
import shutil
import subprocess
import time

import pytest

from conftest import ingest
from test_sdists import sdist_bytes
from test_upstream import one_url  # noqa: F401 - a fixture, used by name
from wheelbuilder import build_wheel

HERE = pathlib.Path(__file__).resolve().parent
BROWSER_DIR = HERE / "browser"
ARTIFACTS = HERE / "artifacts"
CHROMIUM = "/usr/bin/chromium"
HOSTILE_SUMMARY = "<img src=x onerror=alert(1)>"

FLASH = {
    "cu128": "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
    "cu130_sm89": "flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl",
    "cu130_sm120": "flash_attn-2.8.3+cu130sm120torch2.10.0-cp312-cp312-linux_x86_64.whl",
    "free_threaded": "flash_attn-2.8.3+cu130sm89torch2.10.0-cp314-cp314t-linux_x86_64.whl",
    "older": "flash_attn-2.7.4+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
    "windows": "flash_attn-2.7.4-cp312-cp312-win_amd64.whl",  # a platform build without a variant
}


def playwright_version() -> str:
    return json.loads((BROWSER_DIR / "package.json").read_text())["dependencies"]["playwright-core"]


@pytest.fixture(scope="session")
def browser_tools() -> None:
    """node, Chromium and playwright-core (installed from npm into browser/node_modules when missing)."""
    for tool in ("node", "npm"):
        assert shutil.which(tool), f"{tool} is not installed; run deploy/install-deps.sh"
    assert pathlib.Path(CHROMIUM).exists(), f"{CHROMIUM} is missing; run deploy/install-deps.sh (Debian's chromium)"
    installed = BROWSER_DIR / "node_modules" / "playwright-core" / "package.json"
    wanted = playwright_version()
    if not installed.exists() or json.loads(installed.read_text())["version"] != wanted:
        result = subprocess.run(["npm", "install", "--prefix", str(BROWSER_DIR), "--no-audit", "--no-fund"],
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"npm install of playwright-core {wanted} failed:\n{result.stdout}\n{result.stderr}"
    ARTIFACTS.mkdir(exist_ok=True)


def token(binary: pathlib.Path, data: pathlib.Path, name: str, scope: str) -> str:
    result = subprocess.run([str(binary), "token", "create", "--data", str(data), "--name", name, "--scope", scope],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def catalog(tmp_path_factory, wheelhouse_bin):
    """flash-attn in six builds (one free-threaded, one for Windows without a label), demo-kernels 1.0 and 1.1, a wheel with a
    hostile summary, and a file to delete behind a page's back; served by the real binary."""
    from server_process import ServerProcess

    root = tmp_path_factory.mktemp("admin-ui")
    farm = root / "farm"
    for filename in FLASH.values():
        version = filename.split("-")[1]
        # METADATA says "flash-attn": pip 23.0 compares Name unnormalised with the requirement.
        build_wheel(farm, "flash-attn", version, filename.split("-", 2)[2].removesuffix(".whl"),
                    summary="Flash attention kernels", requires_python=">=3.9")
    (farm / "flash_attn-2.8.3.tar.gz").write_bytes(sdist_bytes("flash_attn", "2.8.3", pkg_info=(
        "Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.8.3\nSummary: Flash attention kernels\n"
        "Requires-Python: >=3.9\n\n")))
    (farm / "solo_sdist-0.5.tar.gz").write_bytes(sdist_bytes("solo_sdist", "0.5", pkg_info=(
        "Metadata-Version: 2.1\nName: solo-sdist\nVersion: 0.5\nSummary: Only an sdist\n\n")))
    build_wheel(farm, "demo-kernels", "1.0", summary="Demo kernels")
    build_wheel(farm, "demo-kernels", "1.1", summary="Demo kernels")
    build_wheel(farm, "stale-demo", "0.1", summary="Deleted behind the page's back")
    build_wheel(farm, "hostile-meta", "0.1", summary=HOSTILE_SUMMARY,
                metadata_extra="Description-Content-Type: text/html\n")
    data = root / "data"
    result = ingest(wheelhouse_bin, data, farm)
    assert result.returncode == 0, result.stdout + result.stderr
    tokens = {"admin": token(wheelhouse_bin, data, "e2e-admin", "admin"),
              "upload": token(wheelhouse_bin, data, "e2e-ci", "upload")}
    server = ServerProcess(data).start()
    yield server, tokens, root
    code = server.stop()
    assert code == 0, f"wheelhouse serve exited with {code}:\n{server.stderr()}"


def run_scenario(name: str, config: dict, root: pathlib.Path) -> dict:
    config_path = root / f"{name}.json"
    config_path.write_text(json.dumps({"artifacts": str(ARTIFACTS), "chromium": CHROMIUM, **config}))
    result = subprocess.run(["node", str(BROWSER_DIR / "admin_ui.mjs"), name, str(config_path)], capture_output=True,
                            text=True, timeout=300, cwd=BROWSER_DIR)
    assert result.returncode == 0, f"browser scenario {name} failed:\n{result.stderr}\n{result.stdout}"
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen.pop("problems") == [], "the page raised errors or opened a dialog"
    return seen


def test_browse_search_matrix_install_line_and_hostile_metadata(browser_tools, catalog, pip, tmp_path):
    server, tokens, root = catalog
    # Two downloads of the file the scenario opens, so its page has counts to show (the server
    # adds its in-memory counts to the catalog about once a second).
    listing = json.load(server.get("/simple/flash-attn/", {"Accept": "application/vnd.pypi.simple.v1+json"}))
    url = next(f["url"] for f in listing["files"] if f["filename"] == FLASH["cu130_sm89"])
    for _ in range(2):
        server.get(url.removeprefix(server.url.rstrip("/"))).read()
    time.sleep(2.5)
    seen = run_scenario("browse", {
        "base_url": server.url,
        "admin_token": tokens["admin"],
        "search_typed": "Flash_Attn",
        "search_expected": ["flash-attn"],
        "matrix_project": "flash-attn",
        "matrix_version": "2.8.3",
        "older_version": "2.7.4",
        "install_cell": ["cp312", "cu130 · torch2.10 · sm89"],
        "hostile_project": "hostile-meta",
        "with_cu130": ["flash-attn"],
        "with_cu130_torch28": [],
        "with_cu130_sm120": ["flash-attn"],
        "without_cu130": ["demo-kernels", "hostile-meta", "solo-sdist", "stale-demo"],
        "with_sdist": ["flash-attn", "solo-sdist"],
        "without_sdist": ["demo-kernels", "hostile-meta", "stale-demo"],
        "without_wheel": ["solo-sdist"],
    }, root)

    assert seen["search_rows"] == ["flash-attn"]
    assert "1 project" in seen["search_count"]
    assert seen["versions"] == ["2.8.3", "2.7.4"]  # newest first (PEP 440)
    # Column heads in the words the indexes take (torch2.10 for 2.10.0, sm89), each with its
    # variant index shown (issue 16 item 6); a Windows build without a label is not "any".
    assert seen["matrix"] == {
        "cp312": {
            "cu128 · torch2.8": [FLASH["cu128"]],
            "cu130 · torch2.10 · sm89": [FLASH["cu130_sm89"]],
            "cu130 · torch2.10 · sm120": [FLASH["cu130_sm120"]],
        },
        "cp314t": {"cu130 · torch2.10 · sm89": [FLASH["free_threaded"]]},
    }
    assert seen["heads"] == {
        "cu128 · torch2.8": ["/variants/cu128-torch2.8/simple/flash-attn/"],
        "cu130 · torch2.10 · sm89": ["/variants/cu130-torch2.10-sm89/simple/flash-attn/"],
        "cu130 · torch2.10 · sm120": ["/variants/cu130-torch2.10-sm120/simple/flash-attn/"],
    }
    assert seen["older_matrix"] == {"cp312": {"cu128 · torch2.8": [FLASH["older"]], "no variant": [FLASH["windows"]]}}
    # The sdist is on a line of its own, in no column, marked as left out of the variant indexes.
    assert seen["sdist_lines"] == [
        ["2.8.3", "sdist flash_attn-2.8.3.tar.gz in /simple/ only: the variant indexes leave it out, so pip never "
                  "compiles it where no build fits"],
        ["2.7.4", None]]
    assert seen["older_heads"] == {"cu128 · torch2.8": ["/variants/cu128-torch2.8/simple/flash-attn/"],
                                   "no variant": ["in every index"]}
    # Each head's index lists the builds of its column; a build without a variant is in each.
    windows = json.load(server.get("/variants/cu128-torch2.8/simple/flash-attn/",
                                   {"Accept": "application/vnd.pypi.simple.v1+json"}))
    assert FLASH["windows"] in {f["filename"] for f in windows["files"]}
    for family, (index,) in seen["heads"].items():
        listing = json.load(server.get(index, {"Accept": "application/vnd.pypi.simple.v1+json"}))
        column = {name for row in seen["matrix"].values() for name in row.get(family, [])}
        assert column <= {f["filename"] for f in listing["files"]}, (family, index)

    # The filters: every word the builds name, server-side lists, kept in the address.
    assert seen["filter_words"] == {"cuda": ["cu128", "cu130"], "torch": ["torch2.8", "torch2.10"],
                                    "sm": ["sm89", "sm120"], "rocm": [], "python": ["cp312", "cp314t"],
                                    "kind": ["sdist", "wheel"]}
    assert seen["with_cu130"] == ["flash-attn"]
    assert seen["with_cu130_torch28"] == []
    assert seen["with_cu130_sm120"] == ["flash-attn"]
    assert seen["without_cu130"] == ["demo-kernels", "hostile-meta", "solo-sdist", "stale-demo"]
    assert seen["without_count"] == "4 projects without a cu130 build"
    assert "cuda=cu130" in seen["filter_address"] and "lacks=1" in seen["filter_address"]
    assert seen["reloaded"] == seen["without_cu130"]
    # The kind of file filters too (issue 28 item 2), and a release of sdists alone says so.
    assert seen["with_sdist"] == ["flash-attn", "solo-sdist"]
    assert seen["without_sdist"] == ["demo-kernels", "hostile-meta", "stale-demo"]
    assert seen["without_wheel"] == ["solo-sdist"]
    assert seen["without_wheel_count"] == "1 project without a wheel"
    assert seen["sdist_only_line"] == ("sdist solo_sdist-0.5.tar.gz no wheel in this release: pip builds it from this "
                                       "sdist on every machine")
    assert seen["sdist_only_tables"] == 0
    assert seen["summary"] == "Flash attention kernels"
    assert seen["requires_python"] == ">=3.9"
    assert seen["file_name"] == FLASH["cu130_sm89"]
    assert len(seen["file_sha256"]) == 64
    assert "13.0" in seen["file_variant"] and "8.9" in seen["file_variant"]
    assert seen["chart_bars"] == 30
    assert seen["download_total"] == "2 in all"
    for page in ("project_text", "file_text"):  # an absent value is never shown as "null" or "undefined"
        assert "null" not in seen[page] and "undefined" not in seen[page], seen[page]

    pip_line, uv_line = seen["install_lines"]
    index = f"{server.url}variants/cu130-torch2.10-sm89/simple/"
    assert pip_line == f'pip install "flash-attn==2.8.3+cu130sm89torch2.10.0" --extra-index-url {index}'
    assert uv_line == f'uv pip install "flash-attn==2.8.3+cu130sm89torch2.10.0" --extra-index-url {index}'
    # The line works: pip, told of a cp312 Linux machine, fetches exactly that cell's file.
    words = shlex.split(pip_line)
    requirement, url = words[2], words[4]
    dest = tmp_path / "downloads"
    pip("download", "--no-deps", "--only-binary=:all:", "--python-version", "3.12", "--platform", "linux_x86_64",
        "--index-url", url, "--dest", str(dest), requirement)
    assert [path.name for path in dest.iterdir()] == [FLASH["cu130_sm89"]]

    # The hostile summary is text wherever it shows, and nothing ran (no dialog, no image).
    assert seen["hostile_summary"] == HOSTILE_SUMMARY
    assert seen["hostile_file_summary"] == HOSTILE_SUMMARY
    assert f"Summary: {HOSTILE_SUMMARY}" in seen["hostile_metadata"]
    assert seen["hostile_images"] == seen["hostile_file_images"] == seen["hostile_list_images"] == 0
    assert seen["pwned"] is False

    assert seen["phone_overflow"] <= 0, "the page is wider than a phone's screen"
    assert seen["phone_list_overflow"] <= 0, "the filtered list is wider than a phone's screen"
    assert seen["dark_background"] != "rgb(255, 255, 255)"
    for name in ("projects", "projects-search", "project", "file", "project-hostile", "project-phone", "projects-dark",
                 "projects-filter-has", "projects-filter-lacks", "projects-filter-phone", "matrix"):
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000


def newest_demo_kernels(pip, url: str, dest: pathlib.Path) -> str:
    """The demo-kernels wheel pip picks from the index."""
    pip("download", "--no-deps", "--index-url", url + "simple/", "--dest", str(dest), "demo-kernels")
    (wheel,) = dest.iterdir()
    return wheel.name


def test_curation_yank_is_checked_by_the_api_and_pip_follows(browser_tools, catalog, pip, tmp_path):
    server, tokens, root = catalog
    yank_file = "demo_kernels-1.1-py3-none-any.whl"
    assert newest_demo_kernels(pip, server.url, tmp_path / "before") == yank_file

    seen = run_scenario("curate", {
        "base_url": server.url,
        "admin_token": tokens["admin"],
        "upload_token": tokens["upload"],
        "yank_file": yank_file,
        "stale_file": "stale_demo-0.1-py3-none-any.whl",
    }, root)

    # Without a token the API refused, whatever the page offered.
    assert seen["refused"].startswith("Refused: yanks need an API token")
    assert seen["yanked_notice"] == f"{yank_file} is yanked"
    assert seen["yanked_note"] == "Yanked: broken build"
    assert any("e2e-admin yank — broken build" in item for item in seen["history"])
    # pip no longer picks the yanked file.
    assert newest_demo_kernels(pip, server.url, tmp_path / "after") == "demo_kernels-1.0-py3-none-any.whl"

    stale = "no file named stale_demo-0.1-py3-none-any.whl in this index; it may have been deleted since the page was loaded"
    assert seen["stale_notice"] == f"Failed: {stale}"
    assert seen["stale_page_still_there"] is True
    assert seen["stale_yank_notice"] == f"Failed: {stale}"
    assert seen["stale_open"] == stale

    assert seen["new_secret"].strip() and seen["secret_shown_again"] is False
    assert {"e2e-admin", "e2e-ci", "ci-from-the-page"} <= set(seen["tokens"])
    assert seen["create_notice"] == "token ci-from-the-page created"
    assert ["e2e-admin", "create_token", "ci-from-the-page"] in seen["audit"]
    assert ["e2e-admin", "yank", yank_file] in seen["audit"]
    assert ["e2e-admin", "delete_file", "stale_demo-0.1-py3-none-any.whl"] in seen["audit"]
    # The log filters by action, and a short hash as it shows finds that file's entries.
    assert seen["audit_yanks"] == [["e2e-admin", "yank", yank_file]]
    short, full = seen["audit_short_hash"]
    assert len(short) == 12 and len(full) == 64 and full.startswith(short)
    assert set(seen["audit_by_hash"]) <= {"add_file", "delete_file"} and "add_file" in seen["audit_by_hash"]
    assert seen["revoke_notice"] == "token ci-from-the-page is revoked"
    assert seen["low_scope"] == "token 'e2e-ci' has scope upload; token lists and changes need admin"
    for name in ("file-yanked", "file-stale", "admin"):
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000


def test_a_private_index_in_the_browser(browser_tools, tmp_path, wheelhouse_bin, start_server):
    """The page of a --private server: its files load without a token, every read asks for one
    (with the API's message, never the browser's password dialog), a read token shows the
    catalog, and a token for some projects shows those only."""
    farm = tmp_path / "farm"
    build_wheel(farm, "flash-attn", "2.8.3", "cp312-cp312-linux_x86_64", summary="Flash attention kernels")
    build_wheel(farm, "demo-kernels", "1.0", summary="Demo kernels")
    data = tmp_path / "data"
    result = ingest(wheelhouse_bin, data, farm)
    assert result.returncode == 0, result.stdout + result.stderr
    read = token(wheelhouse_bin, data, "team", "read")
    limited = subprocess.run([str(wheelhouse_bin), "token", "create", "--data", str(data), "--name", "kernels-team",
                              "--scope", "read", "--project", "demo-kernels"], capture_output=True, text=True, timeout=60)
    assert limited.returncode == 0, limited.stderr
    server = start_server(data, "--private")

    seen = run_scenario("private", {
        "base_url": server.url,
        "read_token": read,
        "limited_token": limited.stdout.strip(),
        "project": "flash-attn",
        "limited_expected": ["demo-kernels"],
    }, tmp_path)

    assert seen["heading"] == "A token is needed"
    assert seen["refusal"].startswith("reads of this private index need an API token: send 'Authorization: Bearer")
    assert seen["projects"] == ["demo-kernels", "flash-attn"]
    assert seen["versions"] == ["2.8.3"]
    assert seen["file_name"] == "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl"
    assert "Summary: Flash attention kernels" in seen["metadata"]
    assert seen["limited_projects"] == ["demo-kernels"]
    assert seen["limited_count"].startswith("1 project")
    assert seen["limited_heading"] == "Not for this token"
    assert seen["limited_refusal"] == "token 'kernels-team' may not read project 'flash-attn'"


def test_pep825_labels_and_properties_in_the_matrix_and_on_the_file_page(browser_tools, tmp_path, wheelhouse_bin,
                                                                         start_server):
    """PEP 825 builds get a column per label whose head names the label's properties (with the
    variant indexes that list it), and the file page names label and properties."""
    from test_pep825_variants import NATIVE_TAGS, PY, VARIANTS, build_plain, build_variant

    farm = tmp_path / "farm"
    build_plain(farm)
    names = {label: build_variant(farm, label, properties).name for label, properties in VARIANTS.items()}
    data = tmp_path / "data"
    result = ingest(wheelhouse_bin, data, farm)
    assert result.returncode == 0, result.stdout + result.stderr
    server = start_server(data)

    seen = run_scenario("pep825", {"base_url": server.url, "project": "flash-attn", "version": "2.8.3",
                                   "file": names["cu130_sm100"], "null_file": names["null"]}, tmp_path)

    plain = f"flash_attn-2.8.3-{NATIVE_TAGS}.whl"
    assert seen["matrix"] == {PY: {"no variant": [plain], **{f"PEP 825 · {label}": [name]
                                                             for label, name in names.items()}}}
    assert seen["properties"] == {
        "no variant": [],
        "PEP 825 · null": ["no properties (the null variant)"],
        "PEP 825 · cu128_sm90": ["nvidia :: cuda_version_lower_bound :: 12.8", "nvidia :: sm_arch :: 90_real"],
        "PEP 825 · cu128_sm120": ["nvidia :: cuda_version_lower_bound :: 12.8", "nvidia :: sm_arch :: 120_real"],
        "PEP 825 · cu130_sm100": ["nvidia :: cuda_version_lower_bound :: 13.0", "nvidia :: sm_arch :: 100_real",
                                  "nvidia :: sm_arch :: 120_real"],
    }
    # Columns in the order of their properties (issue 28 item 5), not of their labels as strings
    # (which put cu128_sm120 before cu128_sm90).
    assert list(seen["properties"]) == ["no variant", "PEP 825 · null", "PEP 825 · cu128_sm90",
                                        "PEP 825 · cu128_sm120", "PEP 825 · cu130_sm100"]
    # Each CUDA column links the variant indexes that list it; every index it links serves it.
    for family, indexes in seen["heads"].items():
        for index in indexes:
            if not index.startswith("/variants/"):
                continue
            listing = json.load(server.get(index, {"Accept": "application/vnd.pypi.simple.v1+json"}))
            column = {name for row in seen["matrix"].values() for name in row.get(family, [])}
            assert column <= {f["filename"] for f in listing["files"]}, (family, index)
    assert seen["file_name"] == names["cu130_sm100"]
    assert seen["file_label"] == "cu130_sm100"
    assert seen["file_properties"] == seen["properties"]["PEP 825 · cu130_sm100"]
    assert "no properties (the null variant)" in seen["null_text"]
    assert "undefined" not in seen["text"], seen["text"]
    for name in ("pep825-matrix", "pep825-project", "pep825-file"):
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000


def test_trusted_publishers_on_the_project_page(browser_tools, catalog, tmp_path):
    """The project page's trusted publishers: shown and changed with an admin token, refused with
    the API's own message otherwise."""
    server, tokens, _ = catalog
    seen = run_scenario("publishers", {
        "base_url": server.url,
        "project": "flash-attn",
        "admin_token": tokens["admin"],
        "upload_token": tokens["upload"],
    }, tmp_path)
    assert seen["refusal"].startswith("token 'e2e-ci' has scope upload; trusted publisher lists and changes need admin")
    assert seen["audience"] == "wheelhouse"
    assert seen["explanation"].endswith("for an upload token that lives 15 minutes.")
    assert seen["added_notice"] == "Dao-AILab/flash-attention may now publish flash-attn"
    [row] = seen["rows"]
    assert row[1:] == ["github", "Dao-AILab/flash-attention", "77001", ".github/workflows/build-cu130.yml", "any",
                       "cu130*"]
    assert seen["removed_notice"].startswith(f"publisher {row[0]} removed")


def test_the_upstream_page_shows_where_names_come_from(browser_tools, one_url, pip, tmp_path, catalog):
    """After pip installs through the one URL: both upstreams with their page counts, the route,
    the reserved pattern, and the upstream project whose file is now kept here. An index with no
    upstream says it serves its own projects alone."""
    server, upstreams, _ = one_url
    pip("install", "--index-url", server.url + "simple/", "--target", str(tmp_path / "site"), "tinyup==1.0")
    deadline = time.monotonic() + 10  # the file is kept once its download has been checked
    while not json.load(server.get("/api/v1/upstream"))["kept_projects"] and time.monotonic() < deadline:
        time.sleep(0.1)
    seen = run_scenario("upstream", {"base_url": server.url}, tmp_path)
    assert seen["rule"].startswith("A name in this index's catalog (it has, or had, files here) or under a reserved")
    names = [row[0] for row in seen["upstreams"]]
    assert names == ["pypi", "pytorch"]
    pypi = seen["upstreams"][0]
    assert pypi[1].startswith(upstreams.url("pypi"))
    assert int(pypi[3]) >= 1  # tinyup's page was fetched from the stand-in
    assert seen["routes"] == ["cu128: torchy = pytorch"]
    assert [row[0] for row in seen["reserved"]] == ["acme-*"]
    assert seen["kept"] == [["tinyup", "pypi", "1", seen["kept"][0][3]]]
    assert seen["kept_totals"].startswith("1 file, ") and seen["kept_totals"].endswith(", over 1 project")

    local_only, _, _ = catalog
    assert run_scenario("upstream", {"base_url": local_only.url}, tmp_path)["none"].startswith(
        "No upstream is configured (--upstream)")
