"""The pure core of the VectorIndex operator: what to ask Pinecone for, and what to report.

Pinecone indexes are seen here as dicts in the shape of the 2025-10 REST API (`describe_index`):
name, dimension, metric, vector_type, host, deletion_protection ("enabled"/"disabled"), tags,
spec ({"serverless": {...}} | {"pod": {...}} | {"byoc": {...}}), status {ready, state}.
The Pinecone gateway converts SDK objects to this shape; nothing here performs I/O.
"""
