"""The import rule of the test suites (tests/support/README.md): a layer imports from its own
folder, from tests.support and from tests.conftest, never from another layer; tests/support
and tests/conftest.py import from no layer."""

import ast

import pytest

from tests.conftest import REPO_ROOT

TESTS = REPO_ROOT / "tests"
LAYERS = sorted(p.name for p in TESTS.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name != "support")


def imports_of(path):
    """The `tests.<folder>` (or `tests.conftest`) each import in `path` reaches into."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] if node.module != "tests" else [f"tests.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "tests" and len(parts) > 1:
                yield node.lineno, parts[1]


def offenders(folder, allowed):
    return [f"{p.relative_to(REPO_ROOT)}:{line}: tests.{target}"
            for p in sorted(folder.rglob("*.py")) for line, target in imports_of(p) if target not in allowed]


def test_the_layers_are_the_expected_ones():
    assert set(LAYERS) >= {"unit", "integration", "e2e", "reliability", "security", "contract", "fuzz"}


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_itself_tests_support_and_tests_conftest(layer):
    assert offenders(TESTS / layer, {layer, "support", "conftest"}) == []


def test_tests_support_imports_no_layer():
    assert offenders(TESTS / "support", {"support", "conftest"}) == []


def test_the_root_conftest_imports_no_layer():
    lines = [f"{line}: tests.{target}" for line, target in imports_of(TESTS / "conftest.py") if target != "support"]
    assert lines == []
