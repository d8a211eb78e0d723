"""Argument types for output paths: ``type=output_file`` refuses links (``evalkit.documents.files.output_paths``).

The check runs while the arguments are parsed, so a refused path is an argument error (``Error: --out: ...``)
before any work is done.
"""

from __future__ import annotations

import argparse

from evalkit.documents.files.output_paths import check_output_file, refuse_dangling_links
from evalkit.errors import EvalkitError


def output_file(text: str) -> str:
    """An output file path: not a symbolic link, and not below a dangling one."""
    try:
        check_output_file(text)
    except EvalkitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def output_folder(text: str) -> str:
    """An output folder path: not, and not below, a dangling symbolic link (a link to a folder is fine)."""
    try:
        refuse_dangling_links(text)
    except EvalkitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text
