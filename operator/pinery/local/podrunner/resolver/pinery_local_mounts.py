"""Mount paths for Python libraries that read fixed absolute paths (loaded by sitecustomize).

A local process cannot see /var/run/secrets/..., where the kubelet mounts a pod's service
account. The pod runner rewrites mount paths in a container's command, args and environment,
but the official `kubernetes` client's load_incluster_config() reads module constants
(SERVICE_TOKEN_FILENAME, SERVICE_CERT_FILENAME): they are mapped when that module is imported,
through PINERY_LOCAL_MOUNTS (JSON: mount path -> local directory).
"""

import importlib.abc
import json
import os
import sys

_MODULE = "kubernetes.config.incluster_config"
_CONSTANTS = ("SERVICE_TOKEN_FILENAME", "SERVICE_CERT_FILENAME")


def local_path(path, mounts):
    """`path` under the longest mount that contains it, mapped; else unchanged."""
    for mount in sorted(mounts, key=len, reverse=True):
        if path == mount or path.startswith(mount.rstrip("/") + "/"):
            return mounts[mount] + path[len(mount):]
    return path


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, mounts):
        self.mounts = mounts

    def find_spec(self, fullname, path, target=None):
        if fullname != _MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                self._wrap(spec.loader)
                return spec
        return None

    def _wrap(self, loader):
        execute, mounts = loader.exec_module, self.mounts

        def exec_module(module):
            execute(module)
            for name in _CONSTANTS:
                if isinstance(getattr(module, name, None), str):
                    setattr(module, name, local_path(getattr(module, name), mounts))

        loader.exec_module = exec_module


def install():
    try:
        mounts = json.loads(os.environ.get("PINERY_LOCAL_MOUNTS") or "{}")
    except ValueError:
        return
    if mounts:
        sys.meta_path.insert(0, _Finder(mounts))
