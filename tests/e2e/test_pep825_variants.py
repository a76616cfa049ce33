"""PEP 825 variant wheels from CI to the installers: one flash-attn release built as a null
variant, three CUDA/SM variants and a plain wheel, uploaded with twine, `curl -F` and `curl -T`;
the index's generated {name}-{version}-variants.json, linked with its hash on both page formats,
validates against the PEP appendix's JSON schema and follows every delete; uploads that break
the PEP's rules are refused with the reason and leave nothing behind; and Debian's pip 23, which
knows nothing of variants, installs the plain wheel from an index that holds both kinds."""

from __future__ import annotations

import hashlib
import json
import pathlib
import sqlite3
import subprocess
import sys
import urllib.request

from jsonschema import Draft202012Validator

from conftest import ingest
from test_remote_downloads import answer_headers
from test_remote_register import payload, post
from test_uploads import curl, make_token, twine
from test_validation_refusals import server  # noqa: F401  (the fixture: a server, its data, upload and admin tokens)
from wheelbuilder import build_wheel, read_metadata

PY = f"cp{sys.version_info.major}{sys.version_info.minor}"  # Debian's python3 runs this and pip
NATIVE_TAGS = f"{PY}-{PY}-linux_x86_64"
SCHEMA_URL = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
SCHEMA = json.loads((pathlib.Path(__file__).parent.parent / "data" / "pep825_variant_schema_0.1.1.json").read_text())
JSON_PAGE = "application/vnd.pypi.simple.v1+json"
RELEASE_FILE = "flash_attn-2.8.3-variants.json"


def cuda(lower_bound: str, *arches: str) -> dict:
    return {"nvidia": {"cuda_version_lower_bound": [lower_bound], "sm_arch": list(arches)}}


# label -> properties, as CI would name the builds of one release.
VARIANTS = {
    "null": {},
    "cu128_sm90": cuda("12.8", "90_real"),
    "cu128_sm120": cuda("12.8", "120_real"),
    "cu130_sm100": cuda("13.0", "120_real", "100_real"),
}


def variant_json(label: str, properties: dict, namespaces: tuple[str, ...] = ("nvidia",)) -> str:
    return json.dumps({"$schema": SCHEMA_URL, "default-priorities": {"namespace": list(namespaces)},
                       "variants": {label: properties}})


def build_variant(farm: pathlib.Path, label: str, properties: dict | None = None, *, text: str | None = None,
                  tags: str = NATIVE_TAGS, payload: bytes = b"", **extra) -> pathlib.Path:
    """A flash_attn 2.8.3 variant wheel; `text` replaces its variant.json (None: made from `properties`);
    `payload` is stored as its native library."""
    files = {"flash_attn/__init__.py": f"BUILD = {label!r}\n"}
    if payload:
        files["flash_attn/_native.so"] = payload
    if text != "":
        files["flash_attn-2.8.3.dist-info/variant.json"] = text or variant_json(label, properties or {})
    return build_wheel(farm, "flash_attn", "2.8.3", tags, filename=f"flash_attn-2.8.3-{tags}-{label}.whl",
                       files=files, **extra)


def build_plain(farm: pathlib.Path) -> pathlib.Path:
    return build_wheel(farm, "flash_attn", "2.8.3", NATIVE_TAGS, files={"flash_attn/__init__.py": "BUILD = 'plain'\n"})


def fetch(url: str, accept: str = JSON_PAGE) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": accept}), timeout=30) as answer:
        return answer.read()


def page_files(url: str) -> dict[str, dict]:
    return {entry["filename"]: entry for entry in json.loads(fetch(url + "simple/flash-attn/"))["files"]}


def release_file(url: str) -> tuple[dict, bytes]:
    """The variants.json the JSON page links, after checking its link's hash and size."""
    entry = page_files(url)[RELEASE_FILE]
    body = fetch(entry["url"] if entry["url"].startswith("http") else url + entry["url"].lstrip("/"), "*/*")
    assert hashlib.sha256(body).hexdigest() == entry["hashes"]["sha256"]
    assert len(body) == entry["size"]
    return entry, body


def rows(data: pathlib.Path) -> list[str]:
    with sqlite3.connect(data / "catalog.db") as db:
        return [row[0] for row in db.execute("SELECT filename FROM files ORDER BY filename")]


def upload_release(running, tokens, farm: pathlib.Path) -> None:
    """The plain wheel and the null variant by twine, the CUDA builds by curl -F, curl -T and twine."""
    auth = f"__token__:{tokens['upload']}"
    uploaded = twine(running.url, tokens["upload"], build_plain(farm), build_variant(farm, "null"))
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    status, body = curl("-u", auth, "-F", f"content=@{build_variant(farm, 'cu128_sm90', VARIANTS['cu128_sm90'])}",
                        running.url + "legacy/")
    assert status == 201, body
    status, body = curl("-u", auth, "-T", str(build_variant(farm, "cu128_sm120", VARIANTS["cu128_sm120"])),
                        running.url + "api/v1/files/")
    assert status == 201, body
    uploaded = twine(running.url, tokens["upload"], build_variant(farm, "cu130_sm100", VARIANTS["cu130_sm100"]))
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr


def test_variant_wheels_upload_and_the_release_file_validates_against_the_pep_schema(server, tmp_path):
    running, data, tokens = server
    upload_release(running, tokens, tmp_path / "farm")

    entry, body = release_file(running.url)
    document = json.loads(body)
    Draft202012Validator.check_schema(SCHEMA)
    Draft202012Validator(SCHEMA).validate(document)
    assert document["$schema"] == SCHEMA_URL
    assert document["default-priorities"] == {"namespace": ["nvidia"]}
    sorted_values = {label: {space: {feature: sorted(values) for feature, values in features.items()}
                             for space, features in properties.items()} for label, properties in VARIANTS.items()}
    assert document["variants"] == sorted_values
    assert "core-metadata" not in entry and "requires-python" not in entry
    # Its URL names its bytes: cached for good, and revalidated by its hash.
    url = running.url + entry["url"].lstrip("/")
    status, headers = curl("-D", "-", "-o", "/dev/null", "-H", f'If-None-Match: "{entry["hashes"]["sha256"]}"', url)
    assert status == 304 and "immutable" in headers, headers

    # The HTML page links it too, with its hash; every variant wheel is on both pages.
    html = fetch(running.url + "simple/flash-attn/", "text/html").decode()
    assert f"/{RELEASE_FILE}#sha256={entry['hashes']['sha256']}\">{RELEASE_FILE}</a>" in html
    for label in VARIANTS:
        assert f"flash_attn-2.8.3-{NATIVE_TAGS}-{label}.whl" in html
    assert len(page_files(running.url)) == len(VARIANTS) + 2  # the plain wheel and variants.json


def test_the_release_file_answers_head_ranges_and_conditionals_as_every_download(server, tmp_path):
    running, data, tokens = server
    wheel = build_variant(tmp_path / "farm", "cu128_sm90", VARIANTS["cu128_sm90"])
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 201, body
    entry, body = release_file(running.url)
    url = running.url + entry["url"].lstrip("/")
    etag = f'"{entry["hashes"]["sha256"]}"'
    every = {"server", "etag", "cache-control", "accept-ranges"}

    status, whole = answer_headers(url)
    assert status == 200 and every <= set(whole), whole
    assert whole["etag"] == etag and whole["content-type"] == "application/json"
    assert whole["content-length"] == str(len(body))
    status, head = answer_headers(url, method="HEAD")
    assert (status, head) == (200, whole)  # HEAD says what GET says

    status, part = answer_headers(url, "-r", "0-9")
    assert status == 206 and every <= set(part), part
    assert part["content-range"] == f"bytes 0-9/{len(body)}"
    status, ranged = curl("-r", "5-", url)
    assert status == 206 and ranged.encode() == body[5:]
    status, ranged_head = answer_headers(url, "-r", "0-9", method="HEAD")
    assert (status, ranged_head) == (206, part)

    status, current = answer_headers(url, "-H", f"If-None-Match: {etag}")
    assert status == 304 and every <= set(current), current  # Server too, as every download's 304
    status, outside = answer_headers(url, "-r", f"{len(body)}-")
    assert status == 416 and outside["content-range"] == f"bytes */{len(body)}", outside
    status, stale = curl("-r", "0-9", "-H", 'If-Range: "an-older-copy"', url)
    assert status == 200 and stale.encode() == body


def test_the_release_file_follows_deletes_and_goes_with_the_last_variant(server, tmp_path):
    running, data, tokens = server
    upload_release(running, tokens, tmp_path / "farm")
    old_entry, _ = release_file(running.url)
    admin = ("-H", f"Authorization: Bearer {tokens['admin']}")

    status, body = curl(*admin, "-X", "DELETE", running.url + f"api/v1/files/flash_attn-2.8.3-{NATIVE_TAGS}-cu128_sm90.whl")
    assert status == 200, body
    entry, body = release_file(running.url)
    assert entry["hashes"] != old_entry["hashes"]
    assert sorted(json.loads(body)["variants"]) == ["cu128_sm120", "cu130_sm100", "null"]
    status, _ = curl(running.url + old_entry["url"].lstrip("/"))
    assert status == 404  # the old content's URL names bytes the index no longer has

    for label in ("null", "cu128_sm120", "cu130_sm100"):
        status, body = curl(*admin, "-X", "DELETE", running.url + f"api/v1/files/flash_attn-2.8.3-{NATIVE_TAGS}-{label}.whl")
        assert status == 200, body
    assert list(page_files(running.url)) == [f"flash_attn-2.8.3-{NATIVE_TAGS}.whl"]


def test_yanks_metadata_and_requires_python_work_for_variant_wheels(server, tmp_path):
    running, data, tokens = server
    farm = tmp_path / "farm"
    wheel = build_variant(farm, "cu128_sm90", VARIANTS["cu128_sm90"], requires_python=">=3.9")
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 201, body
    _, before = release_file(running.url)

    status, body = curl("-H", f"Authorization: Bearer {tokens['admin']}", "-H", "Content-Type: application/json",
                        "-d", '{"reason": "broken on H100"}', running.url + f"api/v1/files/{wheel.name}/yank")
    assert status == 200, body
    files = page_files(running.url)
    assert files[wheel.name]["yanked"] == "broken on H100"
    assert files[wheel.name]["requires-python"] == ">=3.9"
    # A yanked wheel is still on the index, so the release file still maps its label.
    assert release_file(running.url)[1] == before
    metadata = fetch(running.url + files[wheel.name]["url"].lstrip("/") + ".metadata", "*/*")
    assert metadata == read_metadata(wheel)
    assert hashlib.sha256(metadata).hexdigest() == files[wheel.name]["core-metadata"]["sha256"]


def test_uploads_that_break_pep_825_are_refused_with_the_reason(server, tmp_path):
    running, data, tokens = server
    farm = tmp_path / "farm"
    auth = ("-u", f"__token__:{tokens['upload']}")

    def upload(path: pathlib.Path) -> tuple[int, str]:
        return curl(*auth, "-F", f"content=@{path}", running.url + "legacy/")

    assert upload(build_variant(farm, "cu128_sm90", VARIANTS["cu128_sm90"]))[0] == 201
    kept = rows(data)

    # The same label with other properties, on another platform: 409, naming both files and sets.
    other = build_variant(farm / "other", "cu128_sm90", cuda("12.8", "80_real"), tags=f"{PY}-{PY}-manylinux_2_28_x86_64")
    status, body = upload(other)
    assert status == 409, body
    assert "give the build another variant label" in body
    assert f"flash_attn-2.8.3-{NATIVE_TAGS}-cu128_sm90.whl has nvidia :: cuda_version_lower_bound :: 12.8, " \
           "nvidia :: sm_arch :: 90_real" in body
    assert f"{other.name} has nvidia :: cuda_version_lower_bound :: 12.8, nvidia :: sm_arch :: 80_real" in body

    refused = {
        "missing": (build_variant(farm, "cu128_sm75", text=""), "rebuild the wheel with its variant.json"),
        "other label": (build_variant(farm, "cu128_sm86", text=variant_json("cu128_sm89", cuda("12.8", "89_real"))),
                        "must list exactly the filename's label 'cu128_sm86'"),
        "old format": (build_variant(farm, "cu126", text=variant_json("cu126", {}).replace("v0.1.1", "v0.1.0")),
                       "format '0.1.0' is not supported; this index reads 0.1.1"),
        "null with properties": (build_variant(farm / "null", "null", cuda("12.8", "90_real")),
                                 "variants.null has properties"),
        "empty values": (build_variant(farm, "cu129", {"nvidia": {"sm_arch": []}}), "variants.cu129.nvidia.sm_arch is empty"),
        "repeated value": (build_variant(farm, "cu131", cuda("13.1", "90_real", "90_real")), "lists '90_real' twice"),
        "bad value": (build_variant(farm, "cu132", cuda("13.2", "SM90")), "the value 'SM90'"),
        "unlisted namespace": (build_variant(farm, "avx", text=variant_json("avx", {"x86_64": {"level": ["v3"]}})),
                               "uses namespace 'x86_64', which default-priorities.namespace does not list"),
        "repeated key": (build_variant(farm, "cu133", text=variant_json("cu133", {}).replace(
            '"variants"', '"variants": {}, "variants"')), "key 'variants' appears twice"),
        "namespace order": (build_variant(farm, "cu134", text=variant_json("cu134", cuda("13.4", "90_real"),
                                                                           ("x86_64", "nvidia"))), None),
        # A name without a label is the build for every machine; a variant.json in it says otherwise.
        "variant.json without a label": (
            build_wheel(farm / "unlabelled", "flash_attn", "2.8.3", NATIVE_TAGS,
                        files={"flash_attn-2.8.3.dist-info/variant.json": variant_json("cu128_sm90",
                                                                                      VARIANTS["cu128_sm90"])}),
            "rename the wheel with the variant label its variant.json lists"),
    }
    for case, (path, reason) in refused.items():
        if reason is None:
            continue
        status, body = upload(path)
        assert status == 400 and reason in body, f"{case}: {status} {body}"
    assert rows(data) == kept, "a refused upload left a row"

    # Namespace priorities merge when one list is part of the other, and conflict otherwise.
    assert upload(refused["namespace order"][0])[0] == 201
    status, body = upload(build_variant(farm, "cu135", text=variant_json("cu135", cuda("13.5", "90_real"),
                                                                         ("nvidia", "x86_64"))))
    assert status == 400, body
    assert "default-priorities.namespace conflicts" in body and '["x86_64","nvidia"]' in body, body
    document = json.loads(release_file(running.url)[1])
    Draft202012Validator(SCHEMA).validate(document)
    assert document["default-priorities"]["namespace"] == ["x86_64", "nvidia"]


def test_pip_23_installs_the_plain_build_and_skips_the_variant_names(server, tmp_path, pip):
    running, data, tokens = server
    upload_release(running, tokens, tmp_path / "farm")
    target = tmp_path / "site"
    result = pip("install", "-vv", "--index-url", running.url + "simple/", "--target", str(target), "flash_attn==2.8.3")
    namespace: dict = {}
    exec((target / "flash_attn" / "__init__.py").read_text(), namespace)
    assert namespace["BUILD"] == "plain", result.stdout
    # pip read the page, saw the variant names and the release file, and passed over them.
    assert f"flash_attn-2.8.3-{NATIVE_TAGS}-cu128_sm90.whl" in result.stdout
    downloaded = [line for line in result.stdout.splitlines() if "Downloading" in line or "Collecting" in line]
    assert not any("-variants.json" in line or "_sm" in line or "-null.whl" in line for line in downloaded), downloaded


def test_inspect_prints_the_variant_label(wheelhouse_bin):
    result = subprocess.run([str(wheelhouse_bin), "inspect", f"flash_attn-2.8.3-{NATIVE_TAGS}-cu128_sm90.whl",
                             f"flash_attn-2.8.3-{NATIVE_TAGS}-null.whl", f"flash_attn-2.8.3-{NATIVE_TAGS}.whl"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    reports = [json.loads(line) for line in result.stdout.splitlines()]
    assert [report["variant_label"] for report in reports] == ["cu128_sm90", "null", None]
    assert reports[0]["platform_tags"] == ["linux_x86_64"]


def test_variant_indexes_and_the_static_export_link_the_release_file(server, tmp_path, wheelhouse_bin):
    running, data, tokens = server
    upload_release(running, tokens, tmp_path / "farm")
    entry, body = release_file(running.url)

    # The variant index of a CUDA 12.9 machine with an H100 lists the best PEP 825 build for it
    # beside the plain one, and the release file; a CPU machine gets the null variant.
    for selector, expected in (("cu129-sm90", "cu128_sm90"), ("cu130-sm120", "cu130_sm100"), ("cpu", "null")):
        listed = json.loads(fetch(running.url + f"variants/{selector}/simple/flash-attn/"))["files"]
        names = sorted(item["filename"] for item in listed)
        assert names == sorted([f"flash_attn-2.8.3-{NATIVE_TAGS}.whl", f"flash_attn-2.8.3-{NATIVE_TAGS}-{expected}.whl",
                                RELEASE_FILE]), (selector, names)
        assert [item["hashes"] for item in listed if item["filename"] == RELEASE_FILE] == [entry["hashes"]]

    out = tmp_path / "site"
    result = subprocess.run([str(wheelhouse_bin), "export", "--data", str(data), "--out", str(out), "--base-url", "/"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    exported = json.loads((out / "simple" / "flash-attn" / "index.json").read_text())
    [linked] = [item for item in exported["files"] if item["filename"] == RELEASE_FILE]
    assert linked["hashes"] == entry["hashes"]
    assert (out / linked["url"].lstrip("/")).read_bytes() == body

    # The admin API shows each build's label and properties.
    matrix = json.loads(fetch(running.url + "api/v1/projects/flash-attn/variants", "application/json"))
    builds = {build["filename"]: build for version in matrix["versions"] for build in version["builds"]}
    sm90 = builds[f"flash_attn-2.8.3-{NATIVE_TAGS}-cu128_sm90.whl"]
    assert sm90["pep825"] == {"label": "cu128_sm90", "properties": [
        "nvidia :: cuda_version_lower_bound :: 12.8", "nvidia :: sm_arch :: 90_real"]}
    assert sm90["family"] == "PEP 825 · cu128_sm90"
    assert "cu128-sm90" in sm90["selectors"]
    assert builds[f"flash_attn-2.8.3-{NATIVE_TAGS}.whl"]["pep825"] is None


def test_a_private_index_serves_the_release_file_to_tokens_for_its_project(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    farm = tmp_path / "farm"
    build_variant(farm, "null")
    build_variant(farm, "cu128_sm90", VARIANTS["cu128_sm90"])
    assert ingest(wheelhouse_bin, data, farm).returncode == 0  # `wheelhouse ingest` reads variant.json too
    team = make_token(wheelhouse_bin, data, "team", "--scope", "read", "--project", "flash-attn")
    others = make_token(wheelhouse_bin, data, "others", "--scope", "read", "--project", "kernels")
    running = start_server(data, "--private")
    status, body = curl("-H", f"Authorization: Bearer {team}", "-H", f"Accept: {JSON_PAGE}",
                        running.url + "simple/flash-attn/")
    assert status == 200, body
    [entry] = [item for item in json.loads(body)["files"] if item["filename"] == RELEASE_FILE]
    url = running.url + entry["url"].lstrip("/")
    status, body = curl("-H", f"Authorization: Bearer {team}", url)
    assert status == 200 and hashlib.sha256(body.encode()).hexdigest() == entry["hashes"]["sha256"], body
    assert sorted(json.loads(body)["variants"]) == ["cu128_sm90", "null"]
    status, body = curl("-H", f"Authorization: Bearer {others}", url)
    assert status == 403 and "may not read project 'flash-attn'" in body, body
    status, _ = curl(url)
    assert status == 401


def test_variant_wheels_register_from_a_github_release_reading_variant_json_by_range(
        tmp_path, wheelhouse_bin, start_server, fake_github):
    """Registered release assets are held to the same PEP 825 rules as uploads, their variant.json
    read by Range like METADATA: a small fraction of each 2 MiB wheel crosses the wire."""
    data = tmp_path / "data"
    token = make_token(wheelhouse_bin, data, "ci")
    running = start_server(data, *fake_github.server_flags())
    farm = tmp_path / "farm"
    good = [build_variant(farm, label, properties, payload=payload(seed))
            for seed, (label, properties) in enumerate(VARIANTS.items())]
    # Same label as a registered build of the release, other properties: a 409 naming both.
    clash = build_variant(farm / "clash", "cu128_sm90", cuda("12.9", "90_real"), tags="py3-none-linux_x86_64",
                          payload=payload(10))
    # Its variant.json lists another label than its filename: a 400.
    stray = build_variant(farm / "stray", "cu126", text=variant_json("cu128", cuda("12.6", "90_real")),
                          payload=payload(11))
    fake_github.add_release("owner", "flash", "v2.8.3", [*good, clash, stray])

    def register(wheel: pathlib.Path) -> tuple[int, dict]:
        return post(running.url + "api/v1/remote", token,
                    {"url": fake_github.download_url("owner", "flash", "v2.8.3", wheel.name)})

    for wheel in good:
        status, body = register(wheel)
        assert status == 201 and body["outcome"] == "added", body
        assert 0 < body["bytes_transferred"] < wheel.stat().st_size * 0.10, body
    status, body = register(clash)
    assert status == 409 and body["error"].startswith("give the build another variant label"), body
    assert good[1].name in body["detail"] and clash.name in body["detail"], body
    status, body = register(stray)
    assert status == 400 and body["error"].startswith("rebuild the wheel") and "'cu126'" in body["error"], body
    assert "lists cu128" in body["detail"], body

    assert rows(data) == sorted(wheel.name for wheel in good)
    _, served = release_file(running.url)
    document = json.loads(served)
    Draft202012Validator(SCHEMA).validate(document)
    assert sorted(document["variants"]) == sorted(VARIANTS)
    assert document["variants"]["cu130_sm100"]["nvidia"]["sm_arch"] == ["100_real", "120_real"]
