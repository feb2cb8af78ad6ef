"""Pod volumes as local directories, and the mount paths a container sees mapped onto them.

emptyDir -> a directory of the pod (under /dev/shm when medium is Memory); a PVC -> a
directory per claim under the state directory that outlives pods; configMap and secret ->
files written from the objects. Absolute mount paths cannot be created on the host, so the
runner rewrites them in the container's command, arguments, environment and working dir.
"""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path
from typing import Callable

from pinery.local.podrunner.environment import EnvError

Lookup = Callable[[str, str], dict | None]
SHM_ROOT = Path("/dev/shm")


def prepare_volumes(pod: dict, pod_dir: Path, state_dir: Path, lookup: Lookup) -> dict[str, Path]:
    """Create every volume of the pod; return volume name -> local directory."""
    namespace = pod["metadata"].get("namespace", "default")
    dirs: dict[str, Path] = {}
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        name = volume["name"]
        if "persistentVolumeClaim" in volume:
            claim = volume["persistentVolumeClaim"]["claimName"]
            path = state_dir / "volumes" / namespace / claim
        elif "emptyDir" in volume:
            medium = (volume.get("emptyDir") or {}).get("medium")
            if medium == "Memory" and SHM_ROOT.is_dir() and os.access(SHM_ROOT, os.W_OK):
                path = SHM_ROOT / f"pinery-{pod['metadata'].get('uid', pod['metadata']['name'])}" / name
            else:
                path = pod_dir / "volumes" / name
        elif "configMap" in volume or "secret" in volume:
            path = pod_dir / "volumes" / name
            _write_projection(volume, path, lookup)
        elif "downwardAPI" in volume or "projected" in volume:
            path = pod_dir / "volumes" / name  # not populated in local mode (documented)
        else:
            path = pod_dir / "volumes" / name  # other sources (hostPath, nfs...) are plain dirs here
        path.mkdir(parents=True, exist_ok=True)
        dirs[name] = path
    return dirs


def _write_projection(volume: dict, path: Path, lookup: Lookup) -> None:
    kind, source = ("ConfigMap", volume["configMap"]) if "configMap" in volume else ("Secret", volume["secret"])
    name = source.get("name") or source.get("secretName", "")
    obj = lookup(kind, name)
    if obj is None:
        if source.get("optional"):
            return
        raise EnvError(f"{kind.lower()} \"{name}\" not found")
    path.mkdir(parents=True, exist_ok=True)
    data = dict(obj.get("data") or {})
    binary = dict(obj.get("binaryData") or {})
    items = source.get("items")
    keys = [(i["key"], i.get("path", i["key"])) for i in items] if items else [(k, k) for k in [*data, *binary]]
    for key, rel in keys:
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "Secret" and key in data:
            target.write_bytes(base64.b64decode(data[key]))
        elif key in data:
            target.write_text(data[key])
        elif key in binary:
            target.write_bytes(base64.b64decode(binary[key]))
        mode = source.get("defaultMode")
        if mode is not None:
            target.chmod(mode & 0o777)


def mount_map(container: dict, volume_dirs: dict[str, Path]) -> dict[str, str]:
    """mountPath -> local path for one container (subPath honoured)."""
    mounts = {}
    for mount in container.get("volumeMounts") or []:
        base = volume_dirs.get(mount["name"])
        if base is None:
            continue
        local = base / mount["subPath"] if mount.get("subPath") else base
        mounts[mount["mountPath"].rstrip("/") or "/"] = str(local)
    return mounts


def rewrite_paths(text: str, mounts: dict[str, str]) -> str:
    """Replace mount paths (longest first) at the start of path-like tokens in `text`."""
    for mount in sorted(mounts, key=len, reverse=True):
        local = mounts[mount]
        out, i = [], 0
        while True:
            j = text.find(mount, i)
            if j < 0:
                out.append(text[i:])
                break
            before = text[j - 1] if j > 0 else ""
            after = text[j + len(mount)] if j + len(mount) < len(text) else ""
            if before in ("", " ", "=", ":", ",", "'", '"') and after in ("", "/", " ", ",", ":", "'", '"'):
                out.append(text[i:j] + local)
            else:
                out.append(text[i : j + len(mount)])
            i = j + len(mount)
        text = "".join(out)
    return text


def remove_pod_volumes(pod: dict, pod_dir: Path) -> None:
    """Delete what dies with the pod: its directory and memory-backed emptyDirs."""
    shutil.rmtree(pod_dir, ignore_errors=True)
    uid = pod["metadata"].get("uid", pod["metadata"]["name"])
    shutil.rmtree(SHM_ROOT / f"pinery-{uid}", ignore_errors=True)
