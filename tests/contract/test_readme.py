"""The README's promises: its two commands, and manifests that validate."""

import re

import yaml

from pinery.manifest_check import validate_text
from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()


def test_quick_start_has_the_two_commands():
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "make demo" in quick_start and "make test" in quick_start


def test_yaml_examples_in_the_readme_are_valid():
    blocks = re.findall(r"```yaml\n(.*?)```", README, re.S)
    kinds = [yaml.safe_load(b)["kind"] for b in blocks]
    assert sorted(kinds) == ["FSDPJob", "VectorIndex"]
    problems, valid = validate_text("\n---\n".join(blocks))
    assert problems == [] and len(valid) == 2


def test_linked_documents_exist():
    for link in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (REPO_ROOT / link).is_file(), link
