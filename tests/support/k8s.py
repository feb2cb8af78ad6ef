"""Validate built Kubernetes objects against the API's own schemas (kubernetes-validate)."""

import kubernetes_validate

# Two supported Kubernetes releases, strictly (unknown fields are errors).
VERSIONS = ("1.30", "1.32")


def assert_valid(obj: dict) -> None:
    for version in VERSIONS:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(p) for p in exc.path)
            raise AssertionError(f"{obj['kind']}/{obj['metadata']['name']} invalid for Kubernetes {version}: {path}: {exc.message}") from None
