"""python -m snodo: the snodo command line."""

import sys

from snodo.cli import main

if __name__ == "__main__":
    sys.exit(main())
