"""What a container with no `command` runs: its image's ENTRYPOINT and CMD.

Local mode pulls no image; it knows the configuration of this project's own images (written
in the Dockerfile, checked by a unit test) and runs their entrypoint from the local Python
environment. The rules are the container runtime's, as Kubernetes documents them
(kubernetes/website "Define a Command and Arguments for a Container"): `command` replaces
ENTRYPOINT and drops CMD; `args` alone replaces CMD.
"""

from __future__ import annotations

from pinery.settings import IMAGE_REPOSITORY

# repository -> (ENTRYPOINT, CMD)
KNOWN: dict[str, tuple[list[str], list[str]]] = {
    f"{IMAGE_REPOSITORY}/pinery": (["pinery"], ["run"]),
}


def repository(image: str) -> str:
    """`registry/name` of an image reference, without tag or digest."""
    name = image.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


def argv(container: dict, known: dict[str, tuple[list[str], list[str]]] = KNOWN) -> list[str] | None:
    """The container's process arguments, or None when they depend on an unknown image."""
    command, args = container.get("command") or [], container.get("args") or []
    if command:
        return [*command, *args]
    config = known.get(repository(container.get("image", "")))
    if config is None:
        return None
    entrypoint, cmd = config
    return [*entrypoint, *(args or cmd)] or None
