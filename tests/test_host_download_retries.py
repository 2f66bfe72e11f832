"""The host retries a task's dataset download (tenacity: 5 attempts, 2 s apart); the pack keeps that for
what may pass on another try and re-raises at once what fails the same way each time (host/patches.py
``_retried_when_transient``)."""

from __future__ import annotations

import pytest
import tenacity

from lmms_eval_tasks.framework.hook_factory import NOT_TRANSIENT, TaskHooks
from lmms_eval_tasks.host.integration import _retried_when_transient


def _host_like_download(error: Exception, calls: list[int]):
    """A download decorated as lmms-eval 0.7.3 decorates ConfigurableTask.download, failing with ``error``."""

    @tenacity.retry(
        stop=(tenacity.stop_after_attempt(5) | tenacity.stop_after_delay(60)), wait=tenacity.wait_fixed(2)
    )
    def download(self, dataset_kwargs=None):
        calls.append(1)
        raise error

    return download


def test_the_hosts_download_is_tenacity_wrapped_so_its_retries_can_be_narrowed() -> None:
    from lmms_eval.api.task import ConfigurableTask

    from lmms_eval_tasks.host.patch_kit import unwrapped

    assert hasattr(unwrapped(ConfigurableTask.download), "retry_with")


def test_an_error_of_the_packs_process_docs_is_raised_at_the_first_attempt(monkeypatch) -> None:
    def prepared_docs(dataset, task):
        raise FileNotFoundError("contextual: 100 of 100 images are missing")

    hooks = TaskHooks("contextual", lambda doc, results, task: {})
    monkeypatch.setattr(hooks, "_prepared_docs", prepared_docs)  # the checks fail; process_docs marks it
    marked = hooks.process_docs_for("contextual_sample")
    with pytest.raises(FileNotFoundError) as caught:
        marked(None)
    assert getattr(caught.value, NOT_TRANSIENT) is True
    calls: list[int] = []
    download = _retried_when_transient(_host_like_download(caught.value, calls))
    with pytest.raises(FileNotFoundError, match="100 of 100 images"):  # itself, not tenacity's RetryError
        download(object())
    assert calls == [1]


def test_a_dataset_missing_from_an_offline_runs_cache_is_raised_at_the_first_attempt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    missing = ConnectionError("Couldn't reach 'lmms-lab/HallusionBench' on the Hub (OfflineModeIsEnabled)")
    calls: list[int] = []
    with pytest.raises(ConnectionError, match="OfflineModeIsEnabled"):
        _retried_when_transient(_host_like_download(missing, calls))(object())
    assert calls == [1]


@pytest.mark.parametrize(
    "error, offline",
    [
        (ConnectionError("Read timed out"), "1"),  # the network may come back
        (ConnectionError("Couldn't reach 'x' on the Hub (OfflineModeIsEnabled)"), "0"),  # online: a blip
        (ValueError("an error of the host's own code"), "0"),
    ],
)
def test_other_errors_keep_the_hosts_retries(error: Exception, offline: str, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", offline)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", offline)
    calls: list[int] = []
    download = _retried_when_transient(_host_like_download(error, calls))
    download = download.retry_with(wait=tenacity.wait_none())  # the same attempts, without the 2 s waits
    with pytest.raises(tenacity.RetryError):
        download(object())
    assert calls == [1] * 5


def test_a_download_without_tenacity_is_called_as_it_is() -> None:
    def download(self, dataset_kwargs=None):
        return "loaded"

    assert _retried_when_transient(download) is download
