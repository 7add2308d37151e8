"""A log dir that fails for real under a running broker (tests run as root: chmod would not do)."""

from __future__ import annotations

import shutil
from pathlib import Path


def replace_with_a_file(directory: Path) -> None:
    """Take a log dir away as Kafka's LogDirFailureTest does: the dir goes (renamed aside at once,
    then removed: the broker may be writing a checkpoint in it) and a file takes its name, so that
    the next file the broker creates there fails (ENOTDIR)."""
    aside = directory.with_name(directory.name + ".failed")
    directory.rename(aside)
    directory.write_text("a file where a log dir was")
    shutil.rmtree(aside, ignore_errors=True)
