"""Pod volumes as local directories, and the mount paths a container sees mapped onto them.

emptyDir -> a directory of the pod (under /dev/shm when medium is Memory); a PVC -> a
directory per claim under the state directory that outlives pods; configMap, secret,
downwardAPI and projected volumes -> files written when the pod starts (not refreshed). Absolute mount paths cannot be created on the host, so the
runner rewrites them in the container's command, arguments, environment and working dir.
"""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path
from typing import Callable

from pinery.local.podrunner.environment import EnvError, field_value

Lookup = Callable[[str, str], dict | None]


class VolumeError(EnvError):
    """A volume that cannot be set up (the kubelet's FailedMount), with the volume's name."""

    def __init__(self, volume: str, message: str):
        super().__init__(message)
        self.volume = volume
SHM_ROOT = Path("/dev/shm")


def claim_dir(state_dir: Path, namespace: str, claim: str) -> Path:
    """Where a PersistentVolumeClaim's data lives: kept across pods and restarts."""
    return state_dir / "volumes" / namespace / claim


def prepare_volumes(pod: dict, pod_dir: Path, state_dir: Path, lookup: Lookup, *, pod_ip: str = "", node: str = "") -> dict[str, Path]:
    """Create every volume of the pod; return volume name -> local directory."""
    namespace = pod["metadata"].get("namespace", "default")
    dirs: dict[str, Path] = {}
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        try:
            dirs[volume["name"]] = _prepare_volume(volume, pod, pod_dir, state_dir, lookup, namespace, pod_ip, node)
        except VolumeError:
            raise
        except EnvError as exc:
            raise VolumeError(volume["name"], str(exc)) from None
    return dirs


def _prepare_volume(volume: dict, pod: dict, pod_dir: Path, state_dir: Path, lookup: Lookup, namespace: str, pod_ip: str, node: str) -> Path:
    name = volume["name"]
    path = pod_dir / "volumes" / name
    if "persistentVolumeClaim" in volume:
        path = claim_dir(state_dir, namespace, volume["persistentVolumeClaim"]["claimName"])
    elif "emptyDir" in volume:
        medium = (volume.get("emptyDir") or {}).get("medium")
        if medium == "Memory" and SHM_ROOT.is_dir() and os.access(SHM_ROOT, os.W_OK):
            path = SHM_ROOT / f"pinery-{pod['metadata'].get('uid', pod['metadata']['name'])}" / name
    elif "configMap" in volume:
        _write_object(path, "ConfigMap", volume["configMap"], volume["configMap"].get("name", ""), lookup)
    elif "secret" in volume:
        _write_object(path, "Secret", volume["secret"], volume["secret"].get("secretName", ""), lookup)
    elif "downwardAPI" in volume:
        _write_downward(path, volume["downwardAPI"], pod, pod_ip, node)
    elif "projected" in volume:
        projected = volume["projected"] or {}
        for source in projected.get("sources") or []:
            source = {"defaultMode": projected.get("defaultMode"), **source}
            if "configMap" in source:
                ref = {"defaultMode": source["defaultMode"], **source["configMap"]}
                _write_object(path, "ConfigMap", ref, ref.get("name", ""), lookup)
            elif "secret" in source:
                ref = {"defaultMode": source["defaultMode"], **source["secret"]}
                _write_object(path, "Secret", ref, ref.get("name", ""), lookup)
            elif "downwardAPI" in source:
                _write_downward(path, {"defaultMode": source["defaultMode"], **source["downwardAPI"]}, pod, pod_ip, node)
            # serviceAccountToken and clusterTrustBundle: not written; the runner mounts the
            # service account itself (podrunner/serviceaccount.py).
    # Other sources (hostPath, nfs, csi...) are plain directories of the pod here.
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write_file(target: Path, content: bytes, mode: int | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    if mode is not None:
        target.chmod(mode & 0o777)


def _write_object(path: Path, kind: str, source: dict, name: str, lookup: Lookup) -> None:
    """The keys of a ConfigMap or Secret as files (all, or the listed `items`)."""
    obj = lookup(kind, name)
    if obj is None:
        if source.get("optional"):
            return
        raise EnvError(f"{kind.lower()} \"{name}\" not found")
    path.mkdir(parents=True, exist_ok=True)
    data = dict(obj.get("data") or {})
    binary = dict(obj.get("binaryData") or {})
    items = source.get("items")
    keys = [(i["key"], i.get("path", i["key"]), i.get("mode")) for i in items] if items else [(k, k, None) for k in [*data, *binary]]
    for key, rel, mode in keys:
        if key in data:
            content = base64.b64decode(data[key]) if kind == "Secret" else data[key].encode()
        elif key in binary:
            content = base64.b64decode(binary[key])
        elif source.get("optional"):
            continue
        else:
            raise EnvError(f"couldn't find key {key} in {kind} {obj['metadata'].get('namespace', '')}/{name}")
        _write_file(path / rel, content, mode if mode is not None else source.get("defaultMode"))


def _write_downward(path: Path, source: dict, pod: dict, pod_ip: str, node: str) -> None:
    """downwardAPI items: fields of the pod as files, read when the pod starts."""
    path.mkdir(parents=True, exist_ok=True)
    for item in source.get("items") or []:
        if "fieldRef" in item:
            value = field_value(pod, item["fieldRef"]["fieldPath"], pod_ip, node)
        else:  # resourceFieldRef: limits are not enforced locally
            value = "0"
        mode = item.get("mode")
        _write_file(path / item["path"], value.encode(), mode if mode is not None else source.get("defaultMode"))


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
