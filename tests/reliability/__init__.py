"""Reliability suites in local mode: operator chaos, Pinecone faults and training faults.

Each suite runs the real pieces (control plane, Pinecone emulator, pod runner and the operator
as its own `pinery run` process, as `pinery.local.cluster.LocalCluster` runs them), is seeded
and bounded in time, and returns a JSON-able result with its numbers. The tests in
tests/reliability/test_*.py run them: the reduced profile in `make test`, the full one
with `make chaos` and `make faults` (docs/reliability.md).
"""
