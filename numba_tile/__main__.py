"""``python -m numba_tile``: see :mod:`numba_tile.command_line`."""

import sys

from .command_line import main

sys.exit(main())
