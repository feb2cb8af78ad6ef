"""The trainer's configuration: file, environment and --set; errors that name the field."""

from __future__ import annotations

import pytest
import yaml

from pinery_trainer.config import TrainerConfig
from pinery_trainer.configfile import ConfigError, load_config, parse_assignment
from pinery_trainer.presets import PRESETS, resolve_shape
from tests.conftest import REPO_ROOT


def problems(sets, environ=None, path=None):
    with pytest.raises(ConfigError) as info:
        load_config(path, sets, environ or {})
    return info.value.problems


def test_defaults_are_valid_and_small():
    config = load_config(None, [], {})
    assert config == TrainerConfig()
    assert config.model.preset == "tiny" and config.data.source == "synthetic" and config.checkpoint.dir is None


@pytest.mark.parametrize(
    "assignment, path, value",
    [
        ("steps=20", ("steps",), 20),
        ("optim.lr=1e-3", ("optim", "lr"), 1e-3),
        ("data.source=inf", ("data", "source"), "inf"),
        ("fsdp.cpuOffload=true", ("fsdp", "cpuOffload"), True),
        ("data.source=/data/train.jsonl", ("data", "source"), "/data/train.jsonl"),
        ("checkpoint.dir=", ("checkpoint", "dir"), ""),
        ("model.hfPath=/models/a=b", ("model", "hfPath"), "/models/a=b"),
    ],
)
def test_set_reads_values_as_yaml_scalars(assignment, path, value):
    assert parse_assignment(assignment) == (path, value)


def test_file_then_environment_then_set(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({"steps": 5, "checkpoint": {"dir": "/file", "intervalSteps": 2, "keep": 4}}))
    environ = {"PINERY_CHECKPOINT_DIR": "/env", "PINERY_CHECKPOINT_INTERVAL": "9"}
    config = load_config(path, [], environ)
    assert (config.steps, config.checkpoint.dir, config.checkpoint.interval_steps, config.checkpoint.keep) == (5, "/env", 9, 4)
    config = load_config(path, ["checkpoint.intervalSteps=3", "steps=7"], environ)
    assert (config.steps, config.checkpoint.interval_steps) == (7, 3)
    # Empty variables are treated as unset.
    assert load_config(path, [], {"PINERY_CHECKPOINT_DIR": ""}).checkpoint.dir == "/file"


def test_snake_case_is_accepted_too():
    assert load_config(None, ["log_every=3", "optim.warmup_steps=1"], {}).log_every == 3


@pytest.mark.parametrize(
    "sets, field, words",
    [
        (["steps=0"], "steps", "greater than or equal to 1"),
        (["steps=lots"], "steps", "valid integer"),
        (["model.preset=huge"], "model.preset", "'tiny'"),
        (["model.depth=3"], "model.depth", "Extra inputs"),
        (["fsdp.mixedPrecision.paramDtype=float16"], "fsdp.mixedPrecision.paramDtype", "'bfloat16'"),
        (["checkpoint.keep=0"], "checkpoint.keep", "greater than or equal to 1"),
        (["steps=5", "optim.warmupSteps=6"], "optim.warmupSteps", "must not exceed steps (5)"),
        (["globalBatchSize=10", "microBatchSize=4"], "globalBatchSize", "multiple of microBatchSize (4)"),
        (["model.heads=3"], "model.heads", "must divide the model width (128)"),
        (["model.dim=96", "model.heads=32"], "model.heads", "even head width"),
        (["model.kvHeads=3"], "model.kvHeads", "must divide the number of attention heads (4)"),
        (["model.hfPath=/m", "model.layers=2"], "model.layers", "cannot be combined with model.hfPath"),
        (["steps"], "--set", "expected PATH=VALUE"),
        (["a..b=1"], "--set", "not a field path"),
        (["steps=3", "steps.x=1"], "steps", "not a group of fields"),
    ],
)
def test_errors_name_the_field(sets, field, words):
    found = problems(sets)
    assert found[0][0] == field and words in found[0][1], found


def test_default_warm_up_shrinks_for_short_runs_but_a_chosen_one_does_not():
    assert load_config(None, ["steps=4"], {}).warmup_steps() == 4
    assert load_config(None, ["steps=40"], {}).warmup_steps() == 10
    assert problems(["steps=4", "optim.warmupSteps=10"])[0][0] == "optim.warmupSteps"


def test_environment_errors_name_the_variable():
    assert problems([], {"PINERY_CHECKPOINT_INTERVAL": "soon"}) == [
        ("PINERY_CHECKPOINT_INTERVAL", "must be a whole number of steps, not 'soon'")
    ]
    assert problems([], {"PINERY_CHECKPOINT_INTERVAL": "0"})[0][0] == "checkpoint.intervalSteps"


@pytest.mark.parametrize("content, words", [("- 1\n- 2\n", "must hold a mapping"), ("a: [\n", "not valid YAML")])
def test_bad_files(tmp_path, content, words):
    path = tmp_path / "t.yaml"
    path.write_text(content)
    assert words in problems([], path=path)[0][1]
    assert "cannot read" in problems([], path=tmp_path / "missing.yaml")[0][1]


def test_empty_file_means_defaults(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("")
    assert load_config(path, [], {}) == TrainerConfig()


def test_the_example_fsdpjob_trainer_section_is_a_valid_trainer_file():
    job = yaml.safe_load((REPO_ROOT / "examples" / "fsdpjob-builtin-trainer.yaml").read_text())
    config = TrainerConfig.model_validate(job["spec"]["trainer"])
    assert config.steps == 20 and config.model.preset == "tiny"


def test_every_field_has_a_description():
    def walk(model):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name}"
            annotation = field.annotation
            if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
                walk(annotation)

    walk(TrainerConfig)


def test_presets_have_the_documented_sizes():
    sizes = {name: shape.parameters() for name, shape in PRESETS.items()}
    assert 0.9e6 < sizes["tiny"] < 1.1e6
    assert 55e6 < sizes["small"] < 60e6
    assert 130e6 < sizes["base"] < 140e6
    assert 1.0e9 < sizes["1b"] < 1.2e9
    assert 6.5e9 < sizes["7b"] < 7.0e9


def test_overrides_resize_the_feed_forward_and_keep_attention_consistent():
    shape = resolve_shape("tiny", dim=256, heads=8)
    assert (shape.dim, shape.heads, shape.kv_heads, shape.head_dim, shape.ffn_dim) == (256, 8, 8, 32, 704)
    assert resolve_shape("1b", layers=2).kv_heads == 4


def leaf_paths(model, prefix=""):
    for name, field in model.model_fields.items():
        path = f"{prefix}{field.alias or name}"
        annotation = field.annotation
        if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
            yield from leaf_paths(annotation, f"{path}.")
        else:
            yield path


def test_docs_describe_every_field():
    text = (REPO_ROOT / "docs" / "trainer.md").read_text()
    missing = [path for path in leaf_paths(TrainerConfig) if f"`{path}`" not in text]
    assert missing == []


def test_configuration_and_pure_modules_do_not_import_torch():
    # An invalid configuration is reported before torch loads (a second instead of several).
    import subprocess
    import sys

    modules = "cli, launch, configfile, data, sampling, checkpoint_layout, presets, schedule, report, exit_codes"
    code = f"import sys; from pinery_trainer import {modules}; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
