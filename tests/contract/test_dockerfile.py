"""The Dockerfile: linted, shaped as documented, and its install commands work.

No Docker engine runs here, so the images are not built; instead the operator stage's install is
replayed in a fresh virtualenv, with the files the Dockerfile copies.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field

import pytest
import yaml

from tests.conftest import REPO_ROOT
from tests.support.chart import require_tool

DOCKERFILE = REPO_ROOT / "Dockerfile"
OCI_LABELS = ("title", "description", "version", "source", "licenses")


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]

    def last(self, keyword: str) -> str:
        found = self.all(keyword)
        assert found, f"stage {self.name} has no {keyword}"
        return found[-1]


def parse_dockerfile() -> tuple[dict[str, str], dict[str, Stage]]:
    """(global ARG defaults, stages by name) of the Dockerfile, line continuations joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    args, stages, current = {}, {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            base, _, name = rest.partition(" AS ")
            current = stages[name.strip()] = Stage(base.strip(), name.strip())
        elif current is None:
            assert keyword == "ARG", line
            name, _, default = rest.partition("=")
            args[name] = default
        else:
            current.instructions.append((keyword, rest.strip()))
    return args, stages


def labels(stage: Stage) -> dict[str, str]:
    found = {}
    for args in stage.all("LABEL"):
        for token in shlex.split(args):
            name, _, value = token.partition("=")
            found[name] = value
    return found


def pip_installs(stage: Stage) -> list[list[str]]:
    """The argument lists of every `pip install` in the stage's RUN instructions."""
    installs = []
    for run in stage.all("RUN"):
        for command in re.split(r"&&|;|\bthen\b", run):
            words = shlex.split(command)
            for i in range(len(words) - 1):
                if words[i].endswith("pip") and words[i + 1] == "install":
                    installs.append(words[i + 2 :])
    return installs


def test_hadolint_passes():
    hadolint = require_tool("hadolint")
    required = [f"--require-label=org.opencontainers.image.{name}:text" for name in OCI_LABELS if name != "source"]
    result = subprocess.run(
        [hadolint, "--format", "json", "--failure-threshold", "info",
         "--require-label=org.opencontainers.image.source:url", *required, str(DOCKERFILE)],
        capture_output=True, text=True, timeout=60,
    )
    assert json.loads(result.stdout or "[]") == [] and result.returncode == 0, result.stdout + result.stderr


def test_targets_and_their_entry_points():
    _, stages = parse_dockerfile()
    assert {"operator", "trainer"} <= stages.keys()
    operator = stages["operator"]
    assert json.loads(operator.last("ENTRYPOINT")) == ["pinery"]
    assert json.loads(operator.last("CMD")) == ["run"]
    for stage in (operator, stages["trainer"]):
        user = stage.last("USER")
        assert re.fullmatch(r"[1-9][0-9]*:[1-9][0-9]*", user), f"{stage.name} must run as a numeric non-root user"
        assert all(labels(stage).get(f"org.opencontainers.image.{name}") for name in OCI_LABELS)
    # The chart's default user is the image's user.
    values = yaml.safe_load((REPO_ROOT / "charts/pinery/values.yaml").read_text())
    assert operator.last("USER") == f"{values['runAsUser']}:{values['runAsUser']}"
    assert operator.last("EXPOSE").split() == ["8080", "8081"]


def test_operator_image_installs_no_extras_and_no_torch():
    _, stages = parse_dockerfile()
    build = stages[stages["operator"].all("COPY")[0].split("--from=")[1].split()[0]]
    assert pip_installs(build) == [["--no-cache-dir", "."]]
    assert not any("torch" in " ".join(i) for i in pip_installs(stages["operator"]) + pip_installs(build))


def test_trainer_image_selects_its_base_and_torch_build():
    args, stages = parse_dockerfile()
    trainer = stages["trainer"]
    assert trainer.base == "${TRAINER_BASE}" and args["TRAINER_BASE"] == args["PYTHON_IMAGE"]
    assert args["PYTHON_IMAGE"].startswith("python:3.11-slim")
    installs = pip_installs(trainer)
    assert installs[-1] == ["--no-cache-dir", ".[trainer]"]
    assert ["--no-cache-dir", "--index-url", "${TORCH_INDEX_URL}", "torch==${TORCH_VERSION}"] in installs
    torch_version = next(a.split("=", 1)[1] for a in trainer.all("ARG") if a.startswith("TORCH_VERSION="))
    trainer_extra = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["trainer"]
    assert f"torch=={torch_version}" in trainer_extra


def copied_sources(stage: Stage) -> list[str]:
    sources = []
    for args in stage.all("COPY"):
        if not args.startswith("--from"):
            sources += args.split()[:-1]
    return sources


def test_dockerignore_lets_in_exactly_what_is_copied():
    _, stages = parse_dockerfile()
    patterns = [p for p in (REPO_ROOT / ".dockerignore").read_text().splitlines() if p and not p.startswith("#")]
    assert patterns[0] == "*", "the context starts empty and lets files in one by one"
    let_in = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    copied = {s.rstrip("/") for stage in stages.values() for s in copied_sources(stage)}
    assert let_in == copied


@pytest.mark.slow
def test_operator_install_works_in_a_fresh_virtualenv(tmp_path):
    """Replays the operator stage: copy what it copies, `pip install .` into a new venv (reusing
    pip's wheel cache, which the image build turns off), then run `pinery --help` and the image's
    command with --help."""
    _, stages = parse_dockerfile()
    build = stages[stages["operator"].all("COPY")[0].split("--from=")[1].split()[0]]
    src = tmp_path / "src"
    src.mkdir()
    for source in copied_sources(build):
        path = REPO_ROOT / source
        if path.is_dir():
            shutil.copytree(path, src / source, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(path, src / source)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(src)],
        capture_output=True, text=True, timeout=600,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    help_run = subprocess.run([str(venv / "bin" / "pinery"), "--help"], capture_output=True, text=True, timeout=60)
    assert help_run.returncode == 0 and "usage: pinery" in help_run.stdout, help_run.stderr
    # The image's command: ENTRYPOINT pinery, CMD run.
    command = [json.loads(stages["operator"].last("ENTRYPOINT"))[0], *json.loads(stages["operator"].last("CMD"))]
    run_help = subprocess.run([str(venv / "bin" / command[0]), *command[1:], "--help"], capture_output=True, text=True, timeout=60)
    assert run_help.returncode == 0 and "usage: pinery run" in run_help.stdout, run_help.stderr
    probe = "import importlib.util as u; print(u.find_spec('torch') is None, u.find_spec('kopf') is not None)"
    result = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["True", "True"], "torch must not be installed; kopf must be"
