"""OpenAPI v3 structural schemas as Kubernetes uses them in CRDs.

- `convert`:          pydantic JSON schema -> structural schema (for the CRD generator)
- `structural`:       the API server's structural-schema rules, as a checker
- `value_validation`: validate a value against a structural schema (types, bounds, CEL rules)
- `prune`:            prune unknown fields and apply defaults, as the API server does
- `cel`:              evaluate `x-kubernetes-validations` rules
"""
