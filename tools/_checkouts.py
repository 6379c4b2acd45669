"""What the tools reading checkouts of CANN's operator repositories share: their command
line (the folders and one flag, or ``--repo name=path`` pairs)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path


def parse_folders(argv: Sequence[str] | None, doc: str, folders: str, flag: str,
                  flag_help: str) -> argparse.Namespace:
    """``argv`` read as one or more folders (``folders``, paths) and the switch ``flag``; the
    description is the first paragraph of ``doc``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(folders, nargs="+", type=Path)
    parser.add_argument(flag, action="store_true", help=flag_help)
    return parser.parse_args(argv)


def parse_repo(argument: str) -> tuple[str, Path]:
    """``--repo name=path``: a repository's name and its checkout's folder."""
    name, sep, path = argument.partition("=")
    if not sep or not name or not Path(path).is_dir():
        raise argparse.ArgumentTypeError(f"--repo wants name=path to a checkout, not {argument!r}")
    return name, Path(path).resolve()
