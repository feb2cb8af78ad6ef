"""Client compatibility suite: real Pinecone clients against local mode's emulator (`make compat`).

For each client in compat/clients.py this creates (or reuses) a virtual environment under
`.compat-venvs/<name>/`, starts one Pinecone emulator, runs the client's flow script from
compat/flows/ with that environment's Python, and collects the JSON result the flow writes:
one entry per step, passed, failed (with the error text) or skipped.

Results go to benchmarks/results/compat/<client>.json, and a markdown table of all the results
there to benchmarks/results/compat/results.md; `--update-docs` also writes the table into
docs/local-mode.md between the `compat:begin` and `compat:end` markers. The exit status is 1
when any client that ran failed a step (or could not be installed).

    python compat/run.py                          # every client, installing what is missing
    python compat/run.py --clients pinecone-7,pinecone-10
    python compat/run.py --no-install             # only the clients whose venvs exist
    python compat/run.py --lock                   # reinstall and rewrite compat/locks/

A venv is installed again only when its requirements change: a stamp file in it holds a hash
of the interpreter's version, the client's pins and its lock.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compat.clients import BY_NAME, CLIENTS, Client  # noqa: E402

VENVS = Path(os.environ.get("PINERY_COMPAT_VENV_DIR", ROOT / ".compat-venvs")).resolve()
FLOWS = ROOT / "compat" / "flows"
LOCKS = ROOT / "compat" / "locks"
COMMON_CONSTRAINTS = LOCKS / "common.txt"
RESULTS = ROOT / "benchmarks" / "results" / "compat"
DOCS = ROOT / "docs" / "local-mode.md"
BEGIN, END = "<!-- compat:begin -->", "<!-- compat:end -->"
STAMP = ".compat-stamp"
API_KEY = "pclocal-compat-key"
# Packages no client may bring in (CPU time and disk; none of the flows needs them).
FORBIDDEN = ("torch",)


# -- venvs ---------------------------------------------------------------------------------------

def venv_dir(client: Client) -> Path:
    return VENVS / client.name


def venv_python(client: Client) -> Path:
    return venv_dir(client) / "bin" / "python"


def lock_file(client: Client) -> Path:
    return LOCKS / f"{client.name}.txt"


def requirements_key(client: Client, python: str) -> str:
    version = subprocess.run([python, "-c", "import sys; print(sys.version)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    parts = [version, *client.requirements, COMMON_CONSTRAINTS.read_text()]
    lock = lock_file(client)
    parts.append(lock.read_text() if lock.exists() else "")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def installed(client: Client, python: str) -> bool:
    stamp = venv_dir(client) / STAMP
    return (venv_python(client).exists() and stamp.exists()
            and stamp.read_text().strip() == requirements_key(client, python))


def pip(client: Client, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv_python(client)), "-m", "pip", "--disable-pip-version-check", "--no-input", *args],
                          capture_output=True, text=True)


def install(client: Client, python: str, *, lock: bool = False) -> float:
    """Create or update the client's venv; the seconds it took. Raises RuntimeError on failure."""
    started = time.monotonic()
    if not venv_python(client).exists():
        subprocess.run([python, "-m", "venv", str(venv_dir(client))], check=True)
    (venv_dir(client) / STAMP).unlink(missing_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as reqs:
        reqs.write("\n".join(client.requirements) + "\n")
    try:
        args = ["install", "--quiet", "-r", reqs.name, "-c", str(COMMON_CONSTRAINTS)]
        if lock_file(client).exists() and not lock:
            args += ["-c", str(lock_file(client))]
        done = pip(client, *args)
    finally:
        os.unlink(reqs.name)
    if done.returncode != 0:
        raise RuntimeError(f"pip install failed for {client.name}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    frozen = pip(client, "list", "--format=freeze")  # name==version, also for a wheel from a file
    names = {line.split("==")[0].lower() for line in frozen.stdout.splitlines()}
    forbidden = [name for name in FORBIDDEN if name in names]
    if forbidden:
        raise RuntimeError(f"{client.name} pulled in {', '.join(forbidden)}")
    if lock:
        pinned = [line for line in frozen.stdout.splitlines()
                  if "==" in line and line.split("==")[0].lower() not in ("pip", "setuptools", "wheel")]
        lock_file(client).write_text(f"# {client.name}: `python compat/run.py --lock` writes this file.\n"
                                     + "\n".join(sorted(pinned, key=str.lower)) + "\n")
    (venv_dir(client) / STAMP).write_text(requirements_key(client, python) + "\n")
    return time.monotonic() - started


# -- the emulator and the flows ------------------------------------------------------------------

def start_emulator(state_dir: Path, ready_delay: float):
    from pinery.local.pinecone import PineconeEmulator
    return PineconeEmulator(state_dir=state_dir, port=0, api_key=API_KEY, ready_delay=ready_delay,
                            record_exchanges=True).start_in_thread()


def exchanges_since(emulator, start: int) -> list[dict[str, Any]]:
    return emulator.call(lambda: list((emulator.exchanges or [])[start:]))


def exchange_count(emulator) -> int:
    return emulator.call(lambda: len(emulator.exchanges or []))


def header(exchange: dict[str, Any], name: str) -> str | None:
    for key, value in exchange["headers"].items():
        if key.lower() == name.lower():
            return value
    return None


def http_errors(exchanges: list[dict[str, Any]], limit: int = 20) -> list[dict[str, Any]]:
    """The requests the emulator answered with 4xx or 5xx, for the emulator's engineers."""
    out = []
    for ex in exchanges:
        if ex["status"] >= 400:
            out.append({"operation": ex["operation"], "method": ex["method"], "path": ex["path"],
                        "status": ex["status"], "api_version": header(ex, "X-Pinecone-Api-Version"),
                        "request": ex["body"][:500].decode("utf-8", "replace"),
                        "response": ex["response"][:500].decode("utf-8", "replace")})
    return out[:limit]


def run_flow(client: Client, emulator, timeout: float) -> dict[str, Any]:
    from pinery.local.pinecone.grpc_refusal import ADVICE  # what a gRPC client is told (pinecone_grpc.py)
    result_path = Path(tempfile.mkstemp(prefix=f"compat-{client.name}-", suffix=".json")[1])
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "PINECONE_API_KEY": API_KEY,
        "PINERY_COMPAT_HOST": emulator.url,
        "PINERY_COMPAT_CLIENT": client.name,
        "PINERY_COMPAT_INDEX": f"compat-{client.name}",
        "PINERY_COMPAT_HYBRID": "1" if client.hybrid else "0",
        "PINERY_COMPAT_RESULT": str(result_path),
        "PINERY_COMPAT_GRPC_ADVICE": ADVICE,
    }
    first = exchange_count(emulator)
    started = time.monotonic()
    try:
        done = subprocess.run([str(venv_python(client)), str(FLOWS / client.flow)], env=env, cwd=FLOWS,
                              capture_output=True, text=True, timeout=timeout)
        returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        returncode = None
        stdout = (exc.stdout or b"").decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        stderr = (exc.stderr or b"").decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
    seconds = time.monotonic() - started
    try:
        result = json.loads(result_path.read_text() or "{}")
    except ValueError:
        result = {}
    finally:
        result_path.unlink(missing_ok=True)
    exchanges = exchanges_since(emulator, first)
    steps = result.get("steps", [])
    result.update({
        "client": client.name,
        "kind": client.kind,
        "flow": client.flow,
        "requirements": list(client.requirements),
        "expected_api_version": client.api_version,
        "api_versions_sent": sorted({header(ex, "X-Pinecone-Api-Version") or "(none)" for ex in exchanges}),
        "requests": len(exchanges),
        "http_errors": http_errors(exchanges),
        "returncode": returncode,
        "seconds": round(seconds, 2),
        "steps": steps,
    })
    if returncode is None:
        result["error"] = f"the flow ran past {timeout:g} s"
    elif returncode != 0 and not steps:
        result["error"] = f"the flow exited {returncode} before reporting a step"
    failed = [s for s in steps if s["status"] not in ("passed", "not applicable")]  # compat/flows/_flow.py
    result["passed"] = bool(steps) and not failed and returncode == 0
    if returncode != 0 or failed:
        result["stderr_tail"] = (stderr or "")[-4000:]
        result["stdout_tail"] = (stdout or "")[-2000:]
    return result


# -- reporting -----------------------------------------------------------------------------------

def summary(result: dict[str, Any]) -> str:
    steps = result.get("steps", [])
    passed = sum(s["status"] == "passed" for s in steps)
    if result.get("passed"):
        if result.get("kind") == "grpc-refusal":
            return f"gRPC refused with the documented message ({passed}/{len(steps)} steps)"
        skipped = sum(s["status"] == "not applicable" for s in steps)
        return f"passed ({passed}/{len(steps)} steps" + (f", {skipped} not applicable)" if skipped else ")")
    failed = [s["name"] for s in steps if s["status"] == "failed"]
    skipped = [s["name"] for s in steps if s["status"] == "skipped"]
    text = f"**failed** ({passed}/{len(steps)} steps passed"
    if failed:
        text += "; failed: " + ", ".join(failed)
    if skipped:
        text += f"; {len(skipped)} skipped after"
    text += ")"
    if result.get("error"):
        text += f"; {result['error']}"
    return text


def table(results_dir: Path) -> str:
    rows = ["| Client | Packages | SDK | API version sent | Result |", "| --- | --- | --- | --- | --- |"]
    for client in CLIENTS:
        path = results_dir / f"{client.name}.json"
        result = json.loads(path.read_text()) if path.exists() else None
        packages = ", ".join(f"`{r}`" for r in client.requirements)
        if result is None:
            rows.append(f"| {client.name} | {packages} | {client.sdk} | {client.api_version} | not run |")
            continue
        sent = ", ".join(result.get("api_versions_sent", [])) or client.api_version
        rows.append(f"| {client.name} | {packages} | {client.sdk} | {sent} | {summary(result)} |")
    stamps = sorted({json.loads(p.read_text()).get("date", "") for p in results_dir.glob("*.json")} - {""})
    when = f" Run on {stamps[-1]}" if stamps else ""
    return "\n".join(rows) + f"\n\nGenerated by `make compat` (compat/run.py).{when}.\n"


def update_docs(markdown: str) -> None:
    text = DOCS.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOCS} has no {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOCS.write_text(f"{head}{BEGIN}\n{markdown}{END}{tail}")


def print_result(result: dict[str, Any]) -> None:
    print(f"{result['client']}: {summary(result)} in {result.get('seconds', 0):.1f} s, "
          f"sent {', '.join(result.get('api_versions_sent', [])) or '-'}")
    for step in result.get("steps", []):
        if step["status"] == "failed":
            print(f"    {step['name']}: {step['error'][:600]}")
    if result.get("error"):
        print(f"    {result['error']}")
        tail = result.get("stderr_tail", "").strip().splitlines()[-8:]
        for line in tail:
            print(f"      {line}")


# -- main ----------------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="", help="comma-separated client names (default: all): "
                        + ", ".join(c.name for c in CLIENTS))
    parser.add_argument("--no-install", action="store_true", help="use the existing venvs; skip clients without one")
    parser.add_argument("--install-only", action="store_true", help="create or update the venvs, run nothing")
    parser.add_argument("--lock", action="store_true", help="reinstall from the pins alone and rewrite compat/locks/")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"result folder (default {RESULTS.relative_to(ROOT)})")
    parser.add_argument("--update-docs", action="store_true", help=f"write the table into {DOCS.relative_to(ROOT)}")
    parser.add_argument("--python", default=shutil.which("python3.11") or sys.executable,
                        help="the interpreter the venvs are made from (default python3.11)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one flow may run")
    parser.add_argument("--ready-delay", type=float, default=0.5, help="seconds a new index stays Initializing")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.clients.split(",") if n.strip()]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        parser.error(f"unknown client(s) {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    args.selected = [BY_NAME[n] for n in names] if names else list(CLIENTS)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ok = True
    ready: list[Client] = []
    install_failures: dict[str, str] = {}
    for client in args.selected:
        if not args.lock and installed(client, args.python):
            ready.append(client)
        elif args.no_install and venv_python(client).exists():
            print(f"{client.name}: its venv predates a change of its requirements; using it as it is (--no-install)")
            ready.append(client)
        elif args.no_install:
            print(f"{client.name}: skipped, no venv at {venv_dir(client)} (run without --no-install to create it)")
        else:
            print(f"{client.name}: installing {' '.join(client.requirements)} ...", flush=True)
            try:
                seconds = install(client, args.python, lock=args.lock)
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                print(f"{client.name}: install failed: {exc}")
                install_failures[client.name] = str(exc)
                ok = False
                continue
            print(f"{client.name}: installed in {seconds:.1f} s", flush=True)
            ready.append(client)
    if args.install_only:
        return 0 if ok else 1

    args.results.mkdir(parents=True, exist_ok=True)
    for name, error in install_failures.items():
        (args.results / f"{name}.json").write_text(json.dumps(
            {"client": name, "passed": False, "steps": [], "error": f"install failed: {error[-1500:]}",
             "date": time.strftime("%Y-%m-%d")}, indent=2) + "\n")
    if ready:
        with tempfile.TemporaryDirectory(prefix="pinery-compat-") as state:
            emulator = start_emulator(Path(state), args.ready_delay)
            try:
                print(f"emulator at {emulator.url}", flush=True)
                for client in ready:
                    result = run_flow(client, emulator, args.timeout)
                    result["date"] = time.strftime("%Y-%m-%d")
                    (args.results / f"{client.name}.json").write_text(json.dumps(result, indent=2) + "\n")
                    print_result(result)
                    ok = ok and result["passed"]
            finally:
                emulator.stop_thread()
    markdown = table(args.results)
    (args.results / "results.md").write_text("# Client compatibility\n\n" + markdown)
    if args.update_docs:
        update_docs(markdown)
    print(f"results in {args.results}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
