"""Input blobs scattered to a Dask cluster once and shared by every job that names them."""

from __future__ import annotations

import distributed

from orchestrator.run.jobs import BlobIndex


class ScatteredBlobs:
    """The blobs of jobs in flight, by sha256, each scattered at most once while its future lives."""

    def __init__(self, client: distributed.Client) -> None:
        self.client = client
        self.index = BlobIndex()
        self._futures: dict[str, distributed.Future] = {}

    def future(self, sha: str) -> distributed.Future:
        future = self._futures.get(sha)
        if future is None or future.status in ("error", "cancelled", "lost"):
            future = self.client.scatter(self.index.read(sha), hash=False)  # a fresh key: never one being released
            self._futures[sha] = future
        return future

    def futures(self, shas: set[str]) -> dict[str, distributed.Future]:
        return {sha: self.future(sha) for sha in shas}

    def forget(self, sha: str) -> None:
        self._futures.pop(sha, None)
