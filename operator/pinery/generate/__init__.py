"""What is generated from the API models: the CRDs, their schemas, docs/api-reference.md."""
