"""Local mode: a Kubernetes control plane, a Pinecone emulator and a pod runner on loopback.

For trying pinery without a cluster, for demos and as the test harness. Real use is a real
cluster.
"""
