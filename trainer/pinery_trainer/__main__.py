import sys

from pinery_trainer.cli import main

sys.exit(main())
