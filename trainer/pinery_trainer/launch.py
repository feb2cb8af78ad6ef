"""`python -m pinery_trainer.launch --config FILE [--set PATH=VALUE ...]`: torchrun, exit codes kept.

This is `torchrun -m pinery_trainer --config FILE ...` (torchrun's own code, reading the same
PET_* variables), with two differences that matter to an FSDPJob:

- the configuration is checked first, so an invalid one exits 78 in a second, before any
  rendezvous;
- the node exits with the workers' code (78 for a configuration error, 143 after SIGTERM)
  where torchrun would report 1 for every failure, so that `nonRetryableExitCodes` can work.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from pinery_trainer import exit_codes
from pinery_trainer.cli import parser, prepare
from pinery_trainer.report import log


def torchrun_args(config: Optional[str], sets: Sequence[str]) -> list[str]:
    args = ["-m", "pinery_trainer"]
    if config:
        args += ["--config", config]
    for assignment in sets:
        args += ["--set", assignment]
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser("python -m pinery_trainer.launch").parse_args(argv)
    checked = prepare(args)
    if isinstance(checked, int):
        return checked

    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    try:
        run(parse_args(torchrun_args(args.config, args.sets)))
    except ChildFailedError as e:
        codes = [failure.exitcode for failure in e.failures.values()]
        code = exit_codes.launcher_exit_code(codes)
        log(f"workers failed with exit codes {sorted(set(codes))}; exiting {code}")
        return code
    except SignalException as e:
        # torchrun has passed the signal on and waited for the workers (they checkpoint first).
        log(f"stopped by signal {e.sigval}")
        return 128 + int(e.sigval)
    return exit_codes.OK


if __name__ == "__main__":
    sys.exit(main())
