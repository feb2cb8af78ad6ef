"""The layering rules of DESIGN.md: torch stays in the trainer, the trainer stays independent."""

import ast
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO_ROOT

OPERATOR = REPO_ROOT / "operator" / "pinery"
TRAINER = REPO_ROOT / "trainer" / "pinery_trainer"


def imported_modules(folder):
    """(file, top-level module) for every import statement under folder."""
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                yield path, node.module.split(".")[0]


def test_operator_never_imports_torch():
    offenders = [f"{p.relative_to(REPO_ROOT)}: {m}" for p, m in imported_modules(OPERATOR) if m == "torch"]
    assert offenders == []


@pytest.mark.parametrize("forbidden", ["pinery", "kopf", "kubernetes", "pinecone"])
def test_trainer_never_imports_the_operator_side(forbidden):
    offenders = [f"{p.relative_to(REPO_ROOT)}" for p, m in imported_modules(TRAINER) if m == forbidden]
    assert offenders == []


def test_trainer_config_and_cli_import_without_torch():
    code = (
        "import sys, pinery.api, pinery.manifest_check, pinery.cli, pinery_trainer.config, pinery_trainer.exit_codes;"
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_operator_install_does_not_pull_torch_and_trainer_extra_pins_it():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert not any(dep.startswith("torch") for dep in project["dependencies"])
    assert "torch==2.13.0" in project["optional-dependencies"]["trainer"]
    pinecone = [d for d in project["dependencies"] if d.startswith("pinecone")]
    # The 10.x SDK (API 2026-07); pinery.gateways.pinecone reaches one internal of it (its HTTP
    # client, for 2026-04 creates), so the major version is bounded.
    assert pinecone == ["pinecone>=10.2,<11"]
