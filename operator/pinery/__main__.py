"""`python -m pinery` is the `pinery` command."""

import sys

from pinery.cli import main

sys.exit(main())
