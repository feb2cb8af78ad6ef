"""The 9.x SDK overlay: `pinecone` 9.1.0 laid over .venv's 10.x for the tests marked `sdk9`.

pinery runs on the `pinecone` 10.x SDK (API 2026-07), and .venv has it. The emulator still serves
API 2025-10 to 8.x and 9.x clients, and the tests marked `sdk9` check that surface with the real
9.x client, in-process. `make test` runs them in a second pytest run with
`PYTHONPATH=.compat-venvs/pinecone-9-overlay`, where 9.1.0 shadows 10.x (docs/architecture.md,
"Tests").

The overlay is a folder, not a venv: `pip install --target <overlay> --no-deps` of compat/clients.py's
`pinecone-9` pin (`pinecone==9.1.0`), plus each distribution 9.1.0 needs (its dependencies and
theirs, extras included: `httpx[http2]` needs `h2`, which needs `hpack` and `hyperframe`) that
.venv lacks or has at a version 9.1.0 does not accept, at the version compat/locks/pinecone-9.txt
pins. Everything else comes from .venv.

    python compat/overlay.py            # make it when missing or stale; print its path
    python compat/overlay.py --force    # make it again

A stamp file in the overlay holds a hash of the interpreter's version, the pin, the lock and
.venv's versions of the lock's distributions: the overlay is made again only when one changes.
Run it with .venv's python (the Makefile does).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compat.clients import BY_NAME  # noqa: E402
from compat.run import LOCKS, VENVS  # noqa: E402

CLIENT = BY_NAME["pinecone-9"]
OVERLAY = VENVS / "pinecone-9-overlay"
LOCK = LOCKS / f"{CLIENT.name}.txt"
STAMP = ".overlay-stamp"
# .venv's own distributions are what is looked at, even when this runs with the overlay on PYTHONPATH.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != OVERLAY]


def pins() -> dict[str, str]:
    """compat/locks/pinecone-9.txt as {canonical name: version}; the client's own pins win."""
    lines = [*LOCK.read_text().splitlines(), *CLIENT.requirements]
    out = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out[canonicalize_name(Requirement(name).name)] = version.strip()
    return out


def key() -> str:
    """What the overlay depends on: the interpreter, the pins, and .venv's versions of the pinned distributions."""
    parts = [sys.version, *CLIENT.requirements, LOCK.read_text()]
    for name in sorted(pins()):
        try:
            parts.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name} absent")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def current() -> bool:
    stamp = OVERLAY / STAMP
    return stamp.exists() and stamp.read_text().strip() == key()


def pip_target(folder: Path, requirement: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input",
                           "--no-deps", "--target", str(folder), requirement], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pip install --target {folder} {requirement} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def find(name: str, folder: Path) -> metadata.Distribution | None:
    """The distribution `name` as the overlaid interpreter sees it: the overlay first, then .venv."""
    for dist in metadata.distributions(path=[str(folder)]):
        if canonicalize_name(dist.metadata["Name"]) == name:
            return dist
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def build(folder: Path) -> list[str]:
    """Make the overlay in `folder`; the requirements it installed there."""
    pinned = pins()
    root = CLIENT.requirements[0]
    pip_target(folder, root)
    added = [root]
    todo: list[tuple[str, frozenset[str]]] = [(canonicalize_name(Requirement(root).name), frozenset())]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        dist = find(name, folder)
        assert dist is not None, name
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker and not any(req.marker.evaluate({"extra": extra}) for extra in (extras or {""})):
                continue
            dep = canonicalize_name(req.name)
            have = find(dep, folder)
            if have is None or not req.specifier.contains(have.version, prereleases=True):
                if dep not in pinned:
                    raise SystemExit(f"{name} needs {req}, which .venv does not satisfy and {LOCK.relative_to(ROOT)} "
                                     "does not pin; add it there (`python compat/run.py --clients pinecone-9 --lock`)")
                pip_target(folder, f"{dep}=={pinned[dep]}")
                added.append(f"{dep}=={pinned[dep]}")
                have = find(dep, folder)
                assert have is not None and req.specifier.contains(have.version, prereleases=True), (req, have)
            todo.append((dep, frozenset(req.extras)))
    return added


def ensure(force: bool = False) -> Path:
    """The overlay, made (in a fresh folder, then moved into place) when missing, stale or forced."""
    if not force and current():
        return OVERLAY
    fresh = OVERLAY.with_name(OVERLAY.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    added = build(fresh)
    (fresh / STAMP).write_text(key() + "\n")
    shutil.rmtree(OVERLAY, ignore_errors=True)
    fresh.rename(OVERLAY)
    print(f"{OVERLAY.relative_to(ROOT) if OVERLAY.is_relative_to(ROOT) else OVERLAY}: {', '.join(added)}", flush=True)
    return OVERLAY


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="make the overlay again even when it is current")
    args = parser.parse_args(argv)
    ensure(force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
