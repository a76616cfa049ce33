"""Every `wheelhouse token` command line that README.md and deploy/OPERATIONS.md show runs as
written, with only --data pointed at a fresh folder: a renamed option or argument fails here
before it fails an admin rotating tokens."""

from __future__ import annotations

import pathlib
import re
import shlex
import subprocess

import pytest

from server_process import REPO_ROOT

DOCUMENTS = [REPO_ROOT / "README.md", REPO_ROOT / "deploy" / "OPERATIONS.md"]
# From the subcommand to the end of the command: before a `$( … )` closes or a comment starts.
TOKEN_COMMAND = re.compile(r"\bwheelhouse (token [^)#\n]*)")


def documented_token_commands(document: pathlib.Path) -> list[tuple[int, list[str]]]:
    commands = []
    in_code = False
    for number, line in enumerate(document.read_text().splitlines(), start=1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif in_code and (found := TOKEN_COMMAND.search(line)):
            commands.append((number, shlex.split(found.group(1))))
    return commands


def without_data_option(words: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--data":
            skip = True
        elif not word.startswith("--data="):
            out.append(word)
    return out


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_documented_token_commands_run_as_written(document, tmp_path, wheelhouse_bin):
    commands = documented_token_commands(document)
    assert any(words[1] == "revoke" for _, words in commands), f"{document} no longer shows token revoke"
    data = tmp_path / "data"

    def run(words: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run([str(wheelhouse_bin), *words, "--data", str(data)], capture_output=True, text=True,
                              timeout=30)

    created: set[str] = set()
    for number, words in commands:
        words = without_data_option(words)
        if words[1] == "create":
            created.add(words[words.index("--name") + 1])
        if words[1] == "revoke":
            # A guide may revoke a token it created long before; make it here.
            name = words[-1]
            if name not in created:
                assert run(["token", "create", "--name", name]).returncode == 0
                created.add(name)
        result = run(words)
        assert result.returncode == 0, f"{document.name}:{number}: wheelhouse {shlex.join(words)}\n" \
                                       f"{result.stdout}{result.stderr}"
