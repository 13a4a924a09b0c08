"""python -m snodo: the snodo command line."""

import sys

import snodo

if getattr(snodo, "__file__", None) is None:  # __init__ never ran: a folder, not the package
    found = next(iter(getattr(snodo, "__path__", [])), "a folder named snodo")
    sys.exit(
        f"snodo: Python took {found} for the snodo package (a clone of snodo there?):"
        " run from another folder, or rename that one"
    )

from snodo.cli import main  # only once the package is the package

if __name__ == "__main__":
    sys.exit(main())
