"""Exit codes of the trainer, so that an FSDPJob can tell retryable failures from permanent ones."""

OK = 0
# Generic failure (an exception during training): retryable by a gang restart.
FAILURE = 1
# The configuration is invalid (sysexits EX_CONFIG): retrying cannot help.
CONFIG_ERROR = 78
# The trainer was asked to stop (SIGTERM) and saved a checkpoint first (128 + SIGTERM).
TERMINATED = 143

# Exit codes an FSDPJob running the built-in trainer never retries.
NON_RETRYABLE = (CONFIG_ERROR,)
