"""Trusted publishing end to end: a local OIDC issuer over HTTPS (tests/e2e/oidc_issuer.py), the
exchange performed as the PyPA publish action and `uv publish` perform it, and the minted token
used by twine and curl against the real binary; publishers managed by the CLI and the admin API."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import time
import urllib.request

import requests

from publishing_clients import pep807, pypa_action, uv_publish
from test_uploads import curl, make_token, twine
from trusted_publishing import INDEX_SCHEMES, index, index_arguments, issuer, fresh_issuer  # noqa: F401
from wheelbuilder import build_wheel


def scrape(url: str) -> str:
    with urllib.request.urlopen(url + "metrics", timeout=10) as response:
        return response.read().decode()


def test_the_pypa_action_exchange_then_twine_publishes(index, tmp_path):
    index.publisher("flash-attn")
    exchanged = pypa_action(index.url + "legacy/", index.issuer.ci_environment(), index.issuer.ca, scheme=index.scheme)
    assert exchanged.status == 200, exchanged.refusal
    assert exchanged.payload["success"] is True
    assert abs(exchanged.payload["expires"] - (time.time() + 900)) < 30
    [(name, projects, builds)] = index.minted_tokens()
    assert json.loads(projects) == ["flash-attn"] and builds is None

    wheel = build_wheel(tmp_path / "dist", "flash-attn", "2.8.3+cu130torch2.10", "cp312-cp312-linux_x86_64")
    uploaded = twine(index.url, exchanged.token, wheel)
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    assert index.files() == [(wheel.name, name)]
    # The audit log says which run minted the token that uploaded the file.
    [(actor, target, detail)] = index.audit("mint_token")
    assert actor == "oidc Dao-AILab/flash-attention" and target == name
    claims = json.loads(detail)["claims"]
    assert claims["job_workflow_ref"] == "Dao-AILab/flash-attention/.github/workflows/release.yml@refs/tags/v2.8.3"
    page = scrape(index.url)
    assert 'wheelhouse_oidc_token_exchanges_total{outcome="minted"} 1' in page
    assert 'wheelhouse_oidc_key_fetches_total{result="fetched"} 1' in page
    assert "wheelhouse_trusted_publishers 1" in page
    assert 'wheelhouse_http_requests_total{route="trusted_publishing",status="200"}' in page


def test_the_uv_publish_exchange_then_curl_publishes(index, tmp_path):
    index.publisher("kernels")
    exchanged = uv_publish(index.url + "legacy/", index.issuer.ci_environment(), index.issuer.ca, scheme=index.scheme)
    assert exchanged.status == 200, exchanged.refusal
    wheel = build_wheel(tmp_path / "dist", "kernels", "1.0.0")
    status, body = curl("-u", f"__token__:{exchanged.token}", "-F", f"content=@{wheel}", index.url + "legacy/")
    assert status == 201, body
    # The token is limited to its project, and to uploads.
    other = build_wheel(tmp_path / "dist", "xformers", "0.0.30")
    status, body = curl("-u", f"__token__:{exchanged.token}", "-T", str(other), index.url + "api/v1/files/" + other.name)
    assert status == 403, body
    status, _ = curl("-H", f"Authorization: Bearer {exchanged.token}", index.url + "api/v1/tokens")
    assert status == 403
    assert [row[0] for row in index.files()] == [wheel.name]


def test_pep807_discovery_names_the_exchange_endpoints(index):
    for path in ("legacy/", "api/v1/files/"):
        found = pep807(index.url + path)
        assert found.status_code == 200, found.text
        document = found.json()
        assert document == {"audience-endpoint": index.url + "_/oidc/audience",
                            "token-mint-endpoint": index.url + "_/oidc/mint-token",
                            "features": ["multi-use-token"], "default-features": ["multi-use-token"]}
        assert requests.get(document["audience-endpoint"], timeout=10).json() == {"audience": "wheelhouse"}
    assert pep807(index.url + "simple/").status_code == 404
    assert requests.get(index.url + ".well-known/pytp", timeout=10).status_code == 404


def test_the_audience_follows_the_settings(tmp_path, wheelhouse_bin, start_server, fresh_issuer):
    def audience_of(*flags: str) -> str:
        data = tmp_path / f"data{len(flags)}"
        data.mkdir()
        server = start_server(data, *flags)
        answer = requests.get(server.url + "_/oidc/audience", timeout=10)
        assert answer.headers["Content-Type"] == "application/json" and answer.headers["Cache-Control"] == "no-store"
        return answer.json()["audience"]

    assert audience_of() == "wheelhouse"
    assert audience_of("--public-url", "https://pkgs.example.com/wheels/") == "pkgs.example.com"
    assert audience_of("--oidc-audience", "wheels-prod", "--public-url", "https://x.example/") == "wheels-prod"


def test_discovery_behind_a_proxy_names_the_public_url(tmp_path, wheelhouse_bin, start_server):
    data = tmp_path / "data"
    data.mkdir()
    server = start_server(data, "--public-url", "https://pkgs.example.com/wheels/")
    found = requests.get(server.url + ".well-known/pytp?discover=%2Fwheels%2Flegacy%2F", timeout=10)
    assert found.status_code == 200
    assert found.json()["token-mint-endpoint"] == "https://pkgs.example.com/wheels/_/oidc/mint-token"
    assert requests.get(server.url + ".well-known/pytp?discover=%2Flegacy%2F", timeout=10).status_code == 404


def test_a_label_pattern_keeps_a_runner_to_its_builds(index, tmp_path):
    index.publisher("flash-attn", "--labels", "cu130*")
    exchanged = pypa_action(index.url + "legacy/", index.issuer.ci_environment(), index.issuer.ca, scheme=index.scheme)
    assert exchanged.status == 200, exchanged.refusal
    [(_, _, builds)] = index.minted_tokens()
    assert json.loads(builds) == [{"project": "flash-attn", "labels": "cu130*"}]
    dist = tmp_path / "dist"
    good = build_wheel(dist, "flash-attn", "2.8.3+cu130torch2.10", "cp312-cp312-linux_x86_64")
    assert twine(index.url, exchanged.token, good).returncode == 0
    for version in ("2.8.3+cu128torch2.8", "2.8.3"):
        wrong = build_wheel(dist, "flash-attn", version, "cp312-cp312-linux_x86_64")
        refused = twine(index.url, exchanged.token, wrong)
        assert refused.returncode != 0
        assert "403" in refused.stdout + refused.stderr
        status, body = curl("-u", f"__token__:{exchanged.token}", "-T", str(wrong), index.url + "api/v1/files/" + wrong.name)
        assert status == 403
        assert "may publish only builds labelled 'cu130*'" in body
    assert [row[0] for row in index.files()] == [good.name]
    assert sorted(p.name for p in (index.data / "tmp").iterdir()) == []  # refused uploads leave no spool file


def test_publishers_from_the_cli_and_the_admin_api(index, tmp_path):
    admin = make_token(index.binary, index.data, "alice", "--scope", "admin", "--project", "flash-attn")
    headers = {"Authorization": f"Bearer {admin}"}
    api = index.url + "api/v1/projects/Flash_Attn/publishers"
    body = {"kind": "github", "issuer": index.issuer.url, "repository": "Dao-AILab/flash-attention",
            "owner_id": 77001, "workflow": "release.yml", "environment": "pypi", "label_pattern": "+CU130*"}
    added = requests.post(api, json=body, headers=headers, timeout=10)
    assert added.status_code == 201, added.text
    publisher = added.json()
    assert publisher["project"] == "flash-attn" and publisher["workflow"] == ".github/workflows/release.yml"
    assert publisher["label_pattern"] == "cu130*" and publisher["created_by"] == "alice"
    assert requests.post(api, json=body, headers=headers, timeout=10).status_code == 409
    # The admin of flash-attn may not touch another project's publishers.
    assert requests.get(index.url + "api/v1/projects/kernels/publishers", headers=headers, timeout=10).status_code == 403
    assert requests.post(api, json=body, timeout=10).status_code == 401

    cli_id = index.publisher("flash-attn", workflow="nightly.yml")
    listed = requests.get(api, headers=headers, timeout=10).json()
    assert listed["audience"] == "wheelhouse" and listed["token_lifetime"] == 900
    assert [p["workflow"] for p in listed["publishers"]] == [".github/workflows/release.yml",
                                                             ".github/workflows/nightly.yml"]

    # A token minted by the API's publisher, then the publisher removed: the token stops at once.
    index.issuer.workflow.environment = "pypi"
    exchanged = pypa_action(index.url + "legacy/", index.issuer.ci_environment(), index.issuer.ca, scheme=index.scheme)
    assert exchanged.status == 200, exchanged.refusal
    removed = requests.delete(f"{api}/{publisher['id']}", headers=headers, timeout=10)
    assert removed.status_code == 200, removed.text
    assert removed.json()["tokens_revoked"] == 1
    wheel = build_wheel(tmp_path / "dist", "flash-attn", "2.8.3+cu130", "cp312-cp312-linux_x86_64")
    status, _ = curl("-u", f"__token__:{exchanged.token}", "-T", str(wheel), index.url + "api/v1/files/" + wheel.name)
    assert status == 401
    assert requests.delete(f"{api}/{publisher['id']}", headers=headers, timeout=10).status_code == 404
    assert requests.delete(f"{index.url}api/v1/projects/kernels/publishers/{cli_id}", headers=headers,
                           timeout=10).status_code == 403

    actions = [(target, detail.split(":")[0]) for _, target, detail in index.audit("add_publisher")]
    assert actions == [("flash-attn", f"publisher {publisher['id']}"), ("flash-attn", f"publisher {cli_id}")]
    assert len(index.audit("remove_publisher")) == 1
    page = scrape(index.url)
    assert "wheelhouse_trusted_publishers 1" in page
    assert 'wheelhouse_trusted_publisher_changes_total{change="added"} 1' in page  # the CLI's was another process
    assert 'wheelhouse_trusted_publisher_changes_total{change="removed"} 1' in page


def test_the_cli_lists_and_removes_publishers(index):
    first = index.publisher("flash-attn")
    index.publisher("kernels", "--environment", "release")
    listed = subprocess.run([str(index.binary), "publisher", "list", "--data", str(index.data)], capture_output=True,
                            text=True, timeout=30)
    assert listed.returncode == 0
    assert re.search(rf"^{first} +flash-attn +github Dao-AILab/flash-attention \(owner id 77001\) "
                     r"\.github/workflows/release\.yml issuer=https://127\.0\.0\.1:\d+$", listed.stdout, re.MULTILINE)
    assert "env=release" in listed.stdout
    wrong = subprocess.run([str(index.binary), "publisher", "remove", "--data", str(index.data), "--project", "kernels",
                            first], capture_output=True, text=True, timeout=30)
    assert wrong.returncode == 1 and "has no trusted publisher" in wrong.stderr
    removed = subprocess.run([str(index.binary), "publisher", "remove", "--data", str(index.data), "--project",
                              "flash-attn", first], capture_output=True, text=True, timeout=30)
    assert removed.returncode == 0, removed.stderr
    bad = subprocess.run([str(index.binary), "publisher", "add", "--data", str(index.data), "--project", "x",
                          "--repository", "a/b", "--owner-id", "octocat", "--workflow", "r.yml"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1 and "numeric id" in bad.stderr


def test_a_minted_token_stops_at_its_expiry(index, tmp_path):
    index.publisher("flash-attn")
    exchanged = pypa_action(index.url + "legacy/", index.issuer.ci_environment(), index.issuer.ca, scheme=index.scheme)
    assert exchanged.status == 200, exchanged.refusal
    first = build_wheel(tmp_path / "dist", "flash-attn", "2.8.3+cu130", "cp312-cp312-linux_x86_64")
    status, body = curl("-u", f"__token__:{exchanged.token}", "-T", str(first), index.url + "api/v1/files/" + first.name)
    assert status == 201, body
    # Fifteen minutes pass for the token (the server notices another process's commit at once).
    with sqlite3.connect(index.data / "catalog.db") as db:
        db.execute("UPDATE tokens SET expires_ms = ? WHERE publisher_id IS NOT NULL", (int(time.time() * 1000) - 1,))
    second = build_wheel(tmp_path / "dist", "flash-attn", "2.8.4+cu130", "cp312-cp312-linux_x86_64")
    status, body = curl("-u", f"__token__:{exchanged.token}", "-T", str(second), index.url + "api/v1/files/" + second.name)
    assert status == 401, body
    assert [row[0] for row in index.files()] == [first.name]


def test_a_private_index_still_lets_ci_exchange(tmp_path, wheelhouse_bin, start_server, fresh_issuer):
    data = tmp_path / "data"
    data.mkdir()
    server = start_server(data, "--private", *index_arguments("http", fresh_issuer))
    subprocess.run([str(wheelhouse_bin), "publisher", "add", "--data", str(data), "--project", "kernels", "--issuer",
                    fresh_issuer.url, "--repository", "Dao-AILab/flash-attention", "--owner-id", "77001",
                    "--workflow", "release.yml"], check=True, capture_output=True, timeout=30)
    exchanged = pypa_action(server.url + "legacy/", fresh_issuer.ci_environment(), fresh_issuer.ca, scheme="http")
    assert exchanged.status == 200, exchanged.refusal
    # The minted token uploads, and reads what it may upload (an upload token reads too).
    status, _ = curl("-u", f"__token__:{exchanged.token}", server.url + "simple/kernels/")
    assert status == 404  # no such project yet, but not 401
