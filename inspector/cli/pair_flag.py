"""--allow-unrelated, the same on every command that takes a pair (light: no numerics load while
the parser is built; the check itself is `pair_guard.check_pair_args`)."""

from __future__ import annotations

import argparse

ALLOW_UNRELATED_HELP = ("go on even when the pair check says the two files are not a float model and its quantized "
                        "twin (weights of another training, two quantized or two float models, the same file twice)")


def add_allow_unrelated_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-unrelated", action="store_true", help=ALLOW_UNRELATED_HELP)
