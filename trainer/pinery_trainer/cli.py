"""`python -m pinery_trainer --config FILE [--set PATH=VALUE ...]`: one training process.

Run it under torchrun (one process per GPU), or with plain python for a single process. The
configuration is checked before torch is imported; exit codes are in exit_codes.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Optional, Sequence, Union

from pinery_trainer import exit_codes
from pinery_trainer.config import TrainerConfig
from pinery_trainer.configfile import ConfigError, load_config
from pinery_trainer.report import Reporter, log
from pinery_trainer.stopping import StopRequest


def parser(prog: str = "python -m pinery_trainer") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="pinery's built-in FSDP2 trainer. Run one process per GPU under torchrun.",
        epilog=(
            "The environment overrides the file: PINERY_CHECKPOINT_DIR, PINERY_CHECKPOINT_INTERVAL; "
            "--set overrides both. Exit codes: 0 done, 1 failure, 78 invalid configuration, "
            "143 stopped by SIGTERM (after a checkpoint)."
        ),
    )
    p.add_argument("--config", metavar="FILE", help="YAML or JSON file with the trainer configuration")
    p.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="PATH=VALUE",
        help="override one field, for example --set steps=20 --set optim.lr=1e-3 (repeatable)",
    )
    p.add_argument("--check", action="store_true", help="only validate the configuration, print it as JSON, and exit")
    return p


def rank() -> int:
    return int(os.environ.get("RANK", "0") or 0)


def report_config_error(error: ConfigError) -> int:
    log(f"invalid configuration: {error}", rank())
    Reporter(rank()).event(
        "error",
        reason="InvalidConfiguration",
        message=str(error),
        problems=[{"field": f, "message": m} for f, m in error.problems],
        exitCode=exit_codes.CONFIG_ERROR,
    )
    return exit_codes.CONFIG_ERROR


def prepare(args: argparse.Namespace) -> Union[TrainerConfig, int]:
    """The configuration to run, or the exit code when there is nothing to run (--check, errors)."""
    try:
        config = load_config(args.config, args.sets)
    except ConfigError as e:
        return report_config_error(e)
    if args.check:
        print(config.model_dump_json(by_alias=True, indent=2))
        return exit_codes.OK
    return config


def main(argv: Optional[Sequence[str]] = None) -> int:
    # First of all, so that a SIGTERM during start-up is honoured rather than fatal.
    stop = StopRequest().install()
    config = prepare(parser().parse_args(argv))
    return config if isinstance(config, int) else run_worker(config, stop)


def run_worker(config: TrainerConfig, stop: StopRequest) -> int:
    """Train, then leave through distributed.exit_process (never returns when torch loaded)."""
    from pinery_trainer import distributed

    code, synchronise = exit_codes.FAILURE, False
    try:
        from pinery_trainer.train import Trainer

        runtime = distributed.init(config.process_group_timeout_seconds, config.fsdp)
        code = Trainer(config, runtime, stop).run()
        synchronise = True
    except ConfigError as e:
        code = report_config_error(e)
    except BaseException as e:  # noqa: BLE001 - reported, then the exit code says it all
        # (DCP's CheckpointException is a BaseException; SystemExit and Ctrl-C end up here too.)
        traceback.print_exc()
        Reporter(rank()).event("error", reason=type(e).__name__, message=str(e)[:2000], exitCode=exit_codes.FAILURE)
    distributed.exit_process(code, synchronise)
    return code  # pragma: no cover - exit_process does not return


if __name__ == "__main__":
    sys.exit(main())
