"""The one way to a Dask cluster: a connected ``distributed`` client from a scheduler address, a
client, or a ``LocalCluster`` started for the call (used by the Dask engine and the sharded arena fit).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .errors import LLMPowerError

__all__ = ["ENGINES", "TABLE_ENGINES", "dask_client"]

#: the engines of ``diagnose_files`` and ``--engine``: this process, a Dask cluster, or the table engines
#: (DuckDB in process, a Spark session, a Ray cluster) of :mod:`llm_power.engines.contract`
ENGINES = ("local", "dask", "duckdb", "spark", "ray")
#: the engines that read long tables where they live and hand the driver aligned item shards
TABLE_ENGINES = ("duckdb", "spark", "ray")


def dask_client(scheduler: Any, n_workers: int | None) -> tuple[Any, Callable[[], None]]:
    """A connected client and how to release it (a local cluster is closed, a given client kept).

    ``scheduler``: None (a ``LocalCluster`` of ``n_workers`` single-threaded worker processes on the
    loopback, default one per core), an address (``"tcp://10.0.0.5:8786"``) or a connected ``Client``.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        msg = "engine='dask' (--engine dask) needs the dask extra: pip install 'llm-power[dask]'"
        raise LLMPowerError(msg) from exc
    if scheduler is not None and not isinstance(scheduler, str):
        return scheduler, lambda: None
    import logging

    for name in ("distributed", "distributed.nanny", "distributed.scheduler", "distributed.worker",
                 "distributed.core", "distributed.comm"):  # the cluster's chatter is not the user's news
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        if scheduler is not None:
            client = Client(scheduler, timeout=30)
            return client, client.close
        # the loopback, always: finding a routable address needs a network the machine may not have
        cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=None, host="127.0.0.1")
        client = Client(cluster)
    except (OSError, TimeoutError, RuntimeError, ValueError) as exc:
        where = f"the scheduler {scheduler}" if scheduler is not None else "a local Dask cluster"
        msg = f"engine='dask' (--engine dask): cannot start or reach {where} ({type(exc).__name__}: {exc})"
        raise LLMPowerError(" ".join(msg.split())[:400]) from None

    def close() -> None:
        client.close()
        cluster.close()

    return client, close
