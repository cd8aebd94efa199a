"""Frozen-app entry point (PyInstaller). freeze_support lets worker processes start in the bundle."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from inspector.cli import main

    sys.exit(main())
