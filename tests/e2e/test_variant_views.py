"""One decoded variant, wherever it is shown: `wheelhouse inspect` on a wheel (by path or by bare
filename) and GET /api/v1/files/<filename> on the running server after the wheel was uploaded
agree exactly, for real CUDA filenames (issue 5, item 4). For the filenames DESIGN.md and the
issue spell out (and the others here), the variant is also checked against the value it means."""

from __future__ import annotations

import json
import subprocess
import urllib.parse
import urllib.request

import pytest

from test_uploads import curl, make_token
from wheelbuilder import build_wheel, wheel_filename

# (name, version, build tag, tags, the variant the label means: written out by hand, so that the
# two views cannot agree on a wrong answer)
WHEELS = [
    ("nunchaku", "1.0.2+cu130sm89torch2.10.0", None, "cp313-cp313-linux_x86_64",
     {"cuda": "13.0", "sm": "8.9", "torch": "2.10.0"}),
    ("sageattention", "2.2.0", "280.129", "cp312-cp312-linux_x86_64", {"cuda": "12.9", "torch": "2.8.0"}),
    ("flash_attn", "2.8.3+cu12torch2.7cxx11abiTRUE", None, "cp311-cp311-linux_x86_64",
     {"cuda": "12", "torch": "2.7", "cxx11abi": True}),
    ("flash_attn", "2.8.3+cu128torch2.8", None, "cp312-cp312-linux_x86_64", {"cuda": "12.8", "torch": "2.8"}),
    ("sageattention", "2.2.0+cu130torch2.9.0andhigher.post4", None, "cp39-abi3-win_amd64",
     {"cuda": "13.0", "torch": "2.9.0", "torch_and_higher": True, "unparsed": ["post4"]}),
    ("nunchaku", "1.2.1+cu12.8torch2.8", None, "cp312-cp312-linux_x86_64", {"cuda": "12.8", "torch": "2.8"}),
    ("nunchaku", "1.3.0.dev20260213+cu13.0torch2.11", None, "cp313-cp313-win_amd64",
     {"cuda": "13.0", "torch": "2.11"}),
    ("sageattention", "2.2.0+torch2.9.1.cuda13.1", None, "cp39-abi3-linux_x86_64", {"cuda": "13.1", "torch": "2.9.1"}),
    ("torch", "2.13.0+cpu", None, "cp312-cp312-manylinux_2_28_aarch64", {"cpu": True}),
    ("torch", "2.8.0+cu128", None, "cp310-cp310-manylinux_2_28_x86_64", {"cuda": "12.8"}),
    ("xformers", "0.0.15.dev0+4c06c79.d20221201", None, "cp38-cp38-linux_x86_64",
     {"git_hash": "4c06c79", "build_date": "20221201"}),
    ("flash_attn", "2.7.4.post1+cu12torch2.6cxx11abiFALSE", None, "cp312-cp312-linux_x86_64",
     {"cuda": "12", "torch": "2.6", "cxx11abi": False}),
]
EXPECTED_FILENAMES = {
    "nunchaku-1.0.2+cu130sm89torch2.10.0-cp313-cp313-linux_x86_64.whl",
    "sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl",
    "flash_attn-2.8.3+cu12torch2.7cxx11abiTRUE-cp311-cp311-linux_x86_64.whl",
}


def inspect(binary, *names: str) -> list[dict]:
    result = subprocess.run([str(binary), "inspect", "--", *names], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def file_detail(url: str, filename: str) -> dict:
    with urllib.request.urlopen(url + "api/v1/files/" + urllib.parse.quote(filename), timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def uploaded(tmp_path_factory, wheelhouse_bin):
    """Every wheel of WHEELS uploaded to one running server, with both views of each."""
    from server_process import ServerProcess
    root = tmp_path_factory.mktemp("variants")
    data = root / "data"
    data.mkdir()
    token = make_token(wheelhouse_bin, data, "ci")
    wheels = [build_wheel(root / "dist", name, version, tags, build) for name, version, build, tags, _ in WHEELS]
    assert EXPECTED_FILENAMES <= {wheel.name for wheel in wheels}
    server = ServerProcess(data).start()
    try:
        created = {}
        for wheel in wheels:  # the upload's answer carries the variant it stored
            status, body = curl("-u", f"__token__:{token}", "-H", "Accept: application/json", "-T", str(wheel),
                                server.url + "api/v1/files/")
            assert status == 201, body
            created[wheel.name] = json.loads(body)
        by_path = inspect(wheelhouse_bin, *map(str, wheels))
        by_name = inspect(wheelhouse_bin, *(wheel.name for wheel in wheels))
        details = [file_detail(server.url, wheel.name) for wheel in wheels]
        again = {}
        for wheel in wheels:  # an identical re-upload answers from the stored row
            status, body = curl("-u", f"__token__:{token}", "-H", "Accept: application/json", "-T", str(wheel),
                                server.url + "api/v1/files/")
            assert status == 200, body
            again[wheel.name] = json.loads(body)
        views = {wheel.name: (path_report, name_report, detail, (created[wheel.name], again[wheel.name]))
                 for wheel, path_report, name_report, detail in zip(wheels, by_path, by_name, details)}
        yield server, views
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("row", WHEELS, ids=[f"{name}-{version}-{build or ''}-{tags}" for name, version, build, tags, _
                                             in WHEELS])
def test_inspect_and_the_file_api_show_the_same_variant(uploaded, row):
    name, version, build, tags, stated = row
    filename = wheel_filename(name, version, tags, build)
    path_report, name_report, detail, (created, again) = uploaded[1][filename]
    assert path_report["filename"] == name_report["filename"] == detail["filename"] == filename

    assert path_report["variant"] == name_report["variant"] == detail["variant"], (
        path_report["variant"], detail["variant"])
    assert created["variant"] == again["variant"] == detail["variant"]
    assert detail["variant"] == stated

    # The rest of the decoded name agrees as well.
    assert detail["version"] == path_report["version"]
    assert detail["normalized_version"] == path_report["normalized_version"]
    assert detail["python_tag"] == ".".join(path_report["python_tags"])
    assert detail["abi_tag"] == ".".join(path_report["abi_tags"])
    assert detail["platform_tag"] == ".".join(path_report["platform_tags"])
    expected_build = path_report["build"]["text"] if path_report["build"] else None
    assert detail["build_tag"] == expected_build == build
