"""PEP 825 variant.json as an attacker sends it (issue 24, item 3): past each of its limits, it is
refused with a 400 whose message leads with the fix, and nothing is stored, whichever way the
wheel arrives (`curl -F` to /legacy/, `curl -T` to /api/v1/files/); at every limit at once it is
stored and every read route (the project, its variant matrix, a file's details, the variant
indexes, the release's variants.json) answers with the whole of it, as the catalog kept it at
ingest. The binary at 3603e40 stored each refused file, and parsed it again on every read."""

from __future__ import annotations

import json
import pathlib
import random
import urllib.request

import pytest

from test_pep825_variants import build_variant, release_file, variant_json
from test_upload_refusals import simple_filenames, wait_for
from test_uploads import curl, rows, spool_files
from test_validation_refusals import server  # noqa: F401  (the fixture: a server, its data, upload and admin tokens)

# pep825::limits, as the README states them.
BYTES, NAMESPACES, FEATURES, TOTAL_FEATURES, VALUES, TOTAL_VALUES, NAME_LENGTH = 65536, 16, 32, 256, 128, 1024, 64
LABEL = "cu128_sm90"
SELECTOR = "cu128-sm90"


def arches(count: int) -> list[str]:
    """`count` distinct sm_arch values, 90_real among them."""
    return ["90_real"] + [f"{index}_real" for index in range(100, 100 + count - 1)]


def values(count: int, prefix: str = "v") -> list[str]:
    return [f"{prefix}{index}" for index in range(count)]


def at_every_limit() -> tuple[dict, tuple[str, ...]]:
    """Properties holding VALUES values in a feature, TOTAL_VALUES in all, NAMESPACES namespaces and
    FEATURES features in one, and names and values of NAME_LENGTH characters."""
    long_value = "x" * NAME_LENGTH
    properties = {"nvidia": {"cuda_version_lower_bound": ["12.8"], "sm_arch": arches(VALUES)}}
    properties["x86_64"] = {f"f{index}": [f"w{index}"] for index in range(FEATURES - 1)}
    properties["x86_64"]["n" * NAME_LENGTH] = [long_value]
    used = 1 + VALUES + FEATURES
    spaces = NAMESPACES - 2
    extra = TOTAL_VALUES - used - spaces  # past one value in each namespace left
    for space in range(spaces):
        count = 1 + min(VALUES - 1, extra)
        extra -= count - 1
        properties[f"space{space}"] = {"many": values(count)}
        used += count
    assert used == TOTAL_VALUES, used
    return properties, tuple(properties)


def whitespace(count: int) -> str:
    """JSON whitespace that deflates too little to look like a zip bomb."""
    return "".join(random.Random(825).choices(" \t\r\n", k=count))


def document(properties: dict, namespaces: tuple[str, ...] | None = None) -> str:
    return variant_json(LABEL, properties, namespaces or tuple(properties))


def past_limits() -> dict[str, tuple[str, str]]:
    """case -> (variant.json, what the refusal leads with after "fix variant.json and rebuild the wheel: ")."""
    path = f"variants.{LABEL}"
    many_features = {f"f{index}": ["1"] for index in range(FEATURES + 1)}
    spread = {f"s{space}": {f"f{index}": ["1"] for index in range(FEATURES)} for space in range(TOTAL_FEATURES // FEATURES + 1)}
    values_spread = {f"s{space}": {"many": values(VALUES)} for space in range(TOTAL_VALUES // VALUES + 1)}
    fits = document({"nvidia": {"sm_arch": ["90_real"]}})
    return {
        "values in a feature": (document({"nvidia": {"sm_arch": arches(VALUES + 1)}}),
                                f"list at most {VALUES} values per feature: {path}.nvidia.sm_arch lists {VALUES + 1}"),
        # The file: 3,000 sm_arch values, 66 KB, stored and then made every read take seconds.
        "the issue's 3000 sm_arch values": (document({"nvidia": {"sm_arch": arches(3000)}}),
                                            f"list at most {VALUES} values per feature"),
        "values in all": (document(values_spread), f"use at most {TOTAL_VALUES} values in all: {path}.s8.many "
                                                   f"brings the count to {TOTAL_VALUES + VALUES}"),
        "features in a namespace": (document({"nvidia": many_features}),
                                    f"list at most {FEATURES} features per namespace: {path}.nvidia has {FEATURES + 1}"),
        "features in all": (document(spread), f"use at most {TOTAL_FEATURES} features in all"),
        "namespaces in a label": (document({f"s{index}": {"f": ["1"]} for index in range(NAMESPACES + 1)},
                                           tuple(f"s{index}" for index in range(NAMESPACES))),
                                  f"use at most {NAMESPACES} namespaces per label: {path} has {NAMESPACES + 1}"),
        "namespaces listed": (variant_json(LABEL, {}, tuple(f"s{index}" for index in range(NAMESPACES + 1))),
                              f"list at most {NAMESPACES} namespaces in default-priorities: "
                              f"default-priorities.namespace lists {NAMESPACES + 1}"),
        "a long value": (document({"nvidia": {"sm_arch": ["9" * (NAME_LENGTH + 1)]}}),
                         f"use values of at most {NAME_LENGTH} characters: {path}.nvidia.sm_arch has one of "
                         f"{NAME_LENGTH + 1}"),
        "a long feature name": (document({"nvidia": {"f" * (NAME_LENGTH + 1): ["1"]}}),
                                f"use feature names of at most {NAME_LENGTH} characters"),
        # Padded with whitespace, judged by the size the archive declares before a byte is inflated.
        "one byte past the size": (fits + whitespace(BYTES + 1 - len(fits)),
                                   f"keep variant.json within {BYTES} bytes: it is {BYTES + 1} (whitespace counts)"),
        "5 MiB of whitespace": (fits + whitespace(5 * 1024 * 1024),
                                f"keep variant.json within {BYTES} bytes: it is {len(fits) + 5 * 1024 * 1024}"),
    }


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return json.load(answer)


def assert_nothing_stored(url: str, data: pathlib.Path) -> None:
    assert rows(data) == []
    assert simple_filenames(url, "flash-attn") is None
    wait_for(lambda: spool_files(data) == [], "the spool file to be removed")


@pytest.mark.parametrize("case", list(past_limits()))
def test_a_variant_json_past_a_limit_is_refused_with_the_fix_and_nothing_is_stored(server, tmp_path, case):
    running, data, tokens = server
    text, reason = past_limits()[case]
    wheel = build_variant(tmp_path / "farm", LABEL, text=text)
    expected = "fix variant.json and rebuild the wheel: " + reason
    for route in (("-F", f"content=@{wheel}", running.url + "legacy/"),
                  ("-T", str(wheel), running.url + f"api/v1/files/{wheel.name}")):
        status, body = curl("-u", f"__token__:{tokens['upload']}", *route)
        assert status == 400, f"{case}: {status} {body[:300]}"
        message = json.loads(body)["error"] if body.startswith("{") else body  # twine's routes answer text
        assert expected in message and message.index(expected) < 40, f"{case}: {message[:400]}"
        assert_nothing_stored(running.url, data)


def test_a_variant_json_at_every_limit_is_stored_and_every_read_shows_it_whole(server, tmp_path):
    running, data, tokens = server
    properties, namespaces = at_every_limit()
    text = document(properties, namespaces)
    assert len(text) <= BYTES
    wheel = build_variant(tmp_path / "farm", LABEL, text=text)
    status, body = curl("-u", f"__token__:{tokens['upload']}", "-F", f"content=@{wheel}", running.url + "legacy/")
    assert status == 201, body
    expected = sorted(f"{space} :: {feature} :: {value}" for space, features in properties.items()
                      for feature, listed in features.items() for value in listed)
    assert len(expected) == TOTAL_VALUES

    def shown(build: dict) -> list[str]:
        assert build["pep825"]["label"] == LABEL
        return sorted(build["pep825"]["properties"])

    matrix = get(running.url + "api/v1/projects/flash-attn/variants")
    (build,) = [one for version in matrix["versions"] for one in version["builds"]]
    assert shown(build) == expected
    assert SELECTOR in build["selectors"], build["selectors"]
    project = get(running.url + "api/v1/projects/flash-attn")
    assert json.dumps(project).count("x86_64 :: " + "n" * NAME_LENGTH + " :: " + "x" * NAME_LENGTH) >= 1
    assert shown(get(running.url + f"api/v1/files/{wheel.name}")) == expected
    for selector in (SELECTOR, "cu12-sm90", "cu128"):
        assert simple_filenames(running.url + f"variants/{selector}/", "flash-attn") == \
            sorted([wheel.name, "flash_attn-2.8.3-variants.json"]), selector
    # The release file, made from the stored rows, maps the label to every property.
    release = json.loads(release_file(running.url)[1])
    assert release["variants"] == {LABEL: {space: {feature: sorted(listed) for feature, listed in features.items()}
                                           for space, features in properties.items()}}
