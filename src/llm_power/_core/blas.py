"""Small dense linear algebra under one BLAS thread.

OpenBLAS splits even a 150 x 150 factorisation over every core; on a machine whose cores are busy
(a shared CI runner) the threads wait for each other and a Newton step of a Bradley-Terry fit runs
18-40x slower than on one thread. The fits and sandwiches of the package solve systems of at most a
few thousand unknowns, where one thread is as fast as several on an idle machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["one_blas_thread"]

_CONTROLLER: list[Any] = []  # the threadpoolctl controller, made once (after numpy and scipy load BLAS)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit every loaded BLAS (numpy's and scipy's OpenBLAS, MKL) to one thread inside the block."""
    if not _CONTROLLER:
        try:
            import scipy.linalg  # noqa: F401  (loads scipy's BLAS, so the controller sees it)
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a dependency
            _CONTROLLER.append(None)
        else:
            _CONTROLLER.append(ThreadpoolController())
    controller = _CONTROLLER[0]
    if controller is None:  # pragma: no cover
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield
