import pytest

from pinery.settings import OperatorSettings


def test_defaults():
    s = OperatorSettings()
    assert s.namespaces == () and s.resync_seconds == 300.0
    assert s.default_secret_namespace == "pinery-system"
    assert s.trainer_image.startswith("ghcr.io/pinery-dev/pinery-trainer:")


def test_from_env_parses_types_and_round_trips():
    env = {"PINERY_NAMESPACES": "a, b", "PINERY_RESYNC_SECONDS": "2.5", "PINERY_PINECONE_CONCURRENCY": "3", "PINERY_PINECONE_SECRET_NAMESPACE": "keys"}
    s = OperatorSettings.from_env(env)
    assert s.namespaces == ("a", "b") and s.resync_seconds == 2.5 and s.pinecone_concurrency == 3
    assert s.default_secret_namespace == "keys"
    assert OperatorSettings.from_env(s.to_env()) == s


def test_bad_values_name_the_variable():
    with pytest.raises(ValueError, match="PINERY_METRICS_PORT='x' is not a valid int"):
        OperatorSettings.from_env({"PINERY_METRICS_PORT": "x"})
