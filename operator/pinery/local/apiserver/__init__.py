"""The local control plane: a Kubernetes API server emulator faithful enough for Kopf and kubectl."""
