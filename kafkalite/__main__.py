"""``python -m kafkalite`` is the ``kafkalite`` command."""

from kafkalite.cli import main

if __name__ == "__main__":
    main()
