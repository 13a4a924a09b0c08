"""python -m snodo: the snodo command line."""

import sys

from snodo.cli import main

sys.exit(main())
