# syntax=docker/dockerfile:1
#
# Two images from one file:
#   docker build --target operator -t ghcr.io/pinery-dev/pinery:0.1.0 .
#   docker build --target trainer  -t ghcr.io/pinery-dev/pinery-trainer:0.1.0 .
# For GPU clusters, build the trainer on a CUDA base with the matching torch wheels:
#   docker build --target trainer \
#     --build-arg TRAINER_BASE=nvidia/cuda:12.8.1-base-ubuntu24.04 \
#     --build-arg TORCH_INDEX_URL=<PyTorch's wheel index for CUDA 12.8> .
# See docs/install.md.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm
# Base of the trainer image: the slim Python image (CPU), or a CUDA image for GPU clusters.
ARG TRAINER_BASE=python:3.11-slim-bookworm

# ---- build: the operator's virtualenv, without extras (no torch) ----
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator ./operator
COPY trainer ./trainer
RUN python -m venv /opt/pinery \
 && /opt/pinery/bin/pip install --no-cache-dir .

# ---- operator: `pinery run`, as a non-root numeric user ----
FROM ${PYTHON_IMAGE} AS operator
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="pinery" \
      org.opencontainers.image.description="Kubernetes operator for Pinecone vector indexes and PyTorch FSDP training jobs" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/pinery-dev/pinery" \
      org.opencontainers.image.documentation="https://github.com/pinery-dev/pinery/blob/main/docs/install.md" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /opt/pinery /opt/pinery
ENV PATH=/opt/pinery/bin:$PATH \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# The chart runs it with a read-only root filesystem; only /tmp (an emptyDir) is written.
USER 65532:65532
WORKDIR /tmp
EXPOSE 8080 8081
ENTRYPOINT ["pinery"]
CMD ["run"]

# ---- trainer: torch and the built-in FSDP2 trainer ----
FROM ${TRAINER_BASE} AS trainer
ARG VERSION=0.1.0
# Must match the `trainer` extra in pyproject.toml (a test checks).
ARG TORCH_VERSION=2.13.0
# Wheel index for torch (a CPU-only or a CUDA build); empty means pip's default index.
ARG TORCH_INDEX_URL=""
LABEL org.opencontainers.image.title="pinery-trainer" \
      org.opencontainers.image.description="pinery's built-in PyTorch FSDP2 trainer for FSDPJob pods" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/pinery-dev/pinery" \
      org.opencontainers.image.documentation="https://github.com/pinery-dev/pinery/blob/main/docs/install.md" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# CUDA base images come without Python; the slim Python image already has it.
# hadolint ignore=DL3008
RUN if ! command -v python3 >/dev/null; then \
      apt-get update \
      && apt-get install -y --no-install-recommends python3 python3-venv \
      && rm -rf /var/lib/apt/lists/*; \
    fi
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator ./operator
COPY trainer ./trainer
RUN python3 -m venv /opt/pinery \
 && if [ -n "${TORCH_INDEX_URL}" ]; then \
      /opt/pinery/bin/pip install --no-cache-dir --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"; \
    fi \
 && /opt/pinery/bin/pip install --no-cache-dir ".[trainer]" \
 && rm -rf /src \
 && mkdir -p /workspace \
 && chown 65532:65532 /workspace
# torch, triton and friends keep caches under $HOME.
ENV PATH=/opt/pinery/bin:$PATH \
    HOME=/tmp
USER 65532:65532
WORKDIR /workspace
# FSDPJob pods set their own command (torchrun with the trainer); this only shows the versions.
CMD ["python3", "-c", "import torch, pinery_trainer; print('pinery-trainer', pinery_trainer.__version__, 'torch', torch.__version__)"]
