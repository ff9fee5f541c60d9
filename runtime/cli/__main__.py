"""``python -m hloforge.runtime.cli``: the ``hloforge`` command."""
import sys

from hloforge.runtime.cli.main import main

sys.exit(main())
