"""The local pod runner: a stand-in kubelet that runs pods' containers as local processes.

Images are not pulled: containers run with the local Python environment. Each pod gets its own
loopback address, cluster DNS names resolve to those addresses, volumes are local directories,
and pod status is written back to the API as a kubelet would.
"""
