"""The local control plane: a Kubernetes API server emulator faithful enough for Kopf and kubectl.

- `server`: `LocalApiServer` (start/stop, TLS, token, kubeconfig) and `pki` (its CA)
- `routes`: HTTP paths, bodies and content negotiation; `watch_stream` (watch streams), `logs`
  (pod logs), `discovery`, `table`, `openapi`, `protobuf`
- `operations`: the verbs (create, get, list, update, patch, delete) every write goes through
- `admission`: ObjectMeta rules, CRD schemas (pruning, defaults, validation, CEL), CRD rules;
  `builtins`: defaults and rules of the built-in kinds
- `patch`, `strategic`, `apply`: merge and JSON patches, strategic merge, server-side apply
- `store`: objects, indexes and resourceVersions; `watch_cache`: fan-out and history; `selectors`
- `controllers` and `gc`: CRDs, ServiceAccounts, garbage collection, namespace deletion
- `persistence`: snapshot and change log under the state directory
- `resources`: the resource types; `conversion`: stored form vs. API version; `errors`: Status
"""
