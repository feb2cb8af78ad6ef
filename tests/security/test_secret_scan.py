"""The secret scan itself (tests/security/secret_scan.py): it fails a test that leaks a key into
its captured output, its log files or a watched local mode, masks the key in the report, and
leaves every other test alone, a test that fails for its own reason included."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT
from tests.support.emulator import TEST_API_KEY
from tests.support.secret_scan import MASK, leaks
from tests.support.vectorindex import API_KEY, OTHER_KEY

GENERATED = "pclocal-" + "0123456789abcdef" * 2  # as pinery local up makes them
REAL_SHAPE = "pcsk_4xTq9_L2mA7vB1nC8dE3fG6hJ0kP5rS"

PROBE = f'''
import logging, sys
from pathlib import Path
from tests.support import secret_scan

def test_logs_a_key():
    logging.getLogger("pinery").warning("calling Pinecone with %s", {TEST_API_KEY!r})

def test_prints_a_generated_key():
    sys.stderr.write("Api-Key: {GENERATED}\\n")

def test_a_subprocess_log_in_tmp_path(tmp_path):
    (tmp_path / "operator.log").write_text("starting\\nheader Api-Key={REAL_SHAPE}\\n")

def test_a_registered_secret():
    secret_scan.register_secret("hunter2-but-longer")
    print("the password is hunter2-but-longer")

def test_a_watched_directory(tmp_path_factory):
    state = tmp_path_factory.mktemp("local")
    secret_scan.watch(state)
    (state / "pods").mkdir()
    (state / "pods" / "trainer.log").write_text("env PINECONE_API_KEY={API_KEY}\\n")
    secret_scan.unwatch(state)

def test_fails_for_its_own_reason():
    print({OTHER_KEY!r})
    assert 1 == 2, "its own failure"

def test_clean(tmp_path):
    (tmp_path / "run.log").write_text("API key was rejected; key ***; pclocal- keys; pcsk_ prefix\\n")
    print("nothing secret: the api-key of Secret pinery-system/pinecone-api-key")
    logging.getLogger("pinery").warning("the API key was rejected (401)")
'''


def test_leaks_finds_every_key_shape_and_masks_it():
    for key in (TEST_API_KEY, API_KEY, OTHER_KEY, GENERATED, REAL_SHAPE):
        assert leaks(f"one\nheader {key} here\nthree") == [f"header {MASK} here"]
    assert leaks("a custom-secret-1 b", ["custom-secret-1"]) == [f"a {MASK} b"]
    assert leaks("Secret pinery-system/pinecone-api-key, key 'api-key': ***; pclocal- and pcsk_ keys") == []


def test_a_leaking_test_fails_and_the_others_are_left_alone(tmp_path, tmp_path_factory):
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE)
    # The probe's own tmp_paths lie outside this test's: the scan of this test must not see them.
    basetemp = tmp_path_factory.mktemp("probe-tmp")
    # -p tests.conftest: the hook comes in through the project's conftest, as in every suite.
    # -rN: no short summary, whose lines pytest shortens except under CI, so counts hold in both.
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rN", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "--rootdir", str(tmp_path), "--basetemp", str(basetemp), str(probe)],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=120,
    )
    out = result.stdout
    # A leak found in a log file at teardown is an error of that test, as pytest reports teardowns.
    assert "4 failed, 3 passed, 2 errors" in out, out + result.stderr
    assert out.count("a Pinecone API key appears in what this test captured") == 5
    for shown in (f"calling Pinecone with {MASK}", f"Api-Key: {MASK}", f"header Api-Key={MASK}",
                  f"the password is {MASK}", f"env PINECONE_API_KEY={MASK}"):
        assert shown in out
    assert "its own failure" in out
    for key in (TEST_API_KEY, API_KEY, GENERATED, REAL_SHAPE, "hunter2-but-longer"):
        assert key not in out
