"""`python -m simulator` is the `specroof` command."""

import sys

from .cli import main

sys.exit(main())
