"""Test-session setup loaded before collection (see `addopts` in pyproject.toml).

loguru's default handler holds the `sys.stderr` object of import time; under pytest's output capture that
stream is later closed, which makes loguru print "Logging error ... I/O operation on closed file" noise.
A sink that looks `sys.stderr` up at write time avoids it.
"""

from __future__ import annotations

import sys


def pytest_configure(config: object) -> None:
    from loguru import logger

    logger.remove()
    logger.add(lambda message: sys.stderr.write(message), level="WARNING")
