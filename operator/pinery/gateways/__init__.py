"""The operator's gateways: every call to the Kubernetes API beyond Kopf, and to Pinecone."""
