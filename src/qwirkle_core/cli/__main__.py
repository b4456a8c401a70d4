"""``python -m qwirkle_core.cli``: the ``qwirkle`` command."""

import sys

from . import main

sys.exit(main())
