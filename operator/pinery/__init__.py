"""pinery: a Kubernetes operator for Pinecone vector indexes and PyTorch FSDP training jobs."""

__version__ = "0.1.0"
