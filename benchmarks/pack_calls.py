"""Pack calls from the host's aggregation call to a number: how deep fAcc and VRB's relative drop are computed
and how many Python-level calls into ``lmms_eval_tasks`` the first aggregations make.

One launcher run in this process (``lmms_eval --model random_guess --tasks hallusionbench_sample,vrb_sample``,
the real launcher and host, the offline rule judge) under ``sys.setprofile``/``threading.setprofile``: every
Python-level call whose code lives in ``lmms_eval_tasks`` counts (comprehensions and generator resumptions
too). An aggregation is a call of the pack's ``aggregate`` (``framework/hook_factory.py``) from the host;
the depth of a call is the number of pack frames from that aggregation (1) down to it. Measured:

- ``fAcc_depth``: the shallowest ``group_shares`` (HallusionBench's fAcc, qAcc, aAcc) under
  hallusionbench_sample's first aggregation;
- ``vrb_relative_drop_depth``: the shallowest ``drop_ratio`` called from ``model_summary`` (a model's relative
  accuracy drop) under the first aggregation of the vrb_sample group;
- ``vrb_first_aggregation_calls`` and ``hallusionbench_first_aggregation_calls``: pack calls during the first
  aggregation of a VRB level task and of hallusionbench_sample (judging and the report included);
- ``strict_json_calls``: calls of ``reporting/schema.py:to_strict_json`` during that HallusionBench one.

Exits 1 when a target (``TARGETS``) is missed. ``--quick`` runs the same with ``--limit 4`` (the numbers then
say little; the targets are not checked).
Last line: ``RESULT fAcc_depth=... vrb_relative_drop_depth=... vrb_first_aggregation_calls=...
hallusionbench_first_aggregation_calls=... strict_json_calls=...``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# issue 38: at most 6 pack calls below the host's aggregation call; the first VRB aggregation under 1,000
TARGETS = {"fAcc_depth": 6, "vrb_relative_drop_depth": 6, "vrb_first_aggregation_calls": 999}
AGGREGATION = ("framework/hook_factory.py", "aggregate")


@dataclass
class Aggregation:
    """One aggregation call of the host into the pack: which, its pack calls, the depths of the calls."""

    label: str
    calls: int = 0
    by_name: dict[str, int] = field(default_factory=dict)
    depths: dict[str, int] = field(default_factory=dict)  # shallowest depth of each watched function
    paths: dict[str, list[str]] = field(default_factory=dict)  # its pack frames, the aggregation first


class CallCounter:
    """``sys.setprofile`` callback: counts the pack's calls inside each host aggregation call."""

    WATCHED = ("group_shares", "drop_ratio")

    def __init__(self, package: Path) -> None:
        self.package = str(package) + os.sep
        self.done: list[Aggregation] = []
        self.current: Aggregation | None = None
        self.entry: Any = None  # the frame of the aggregation in progress
        self.lock = threading.Lock()

    def is_pack(self, code: Any) -> bool:
        return code.co_filename.startswith(self.package)

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "return" and frame is self.entry:
            with self.lock:
                self.done.append(self.current)
                self.current = self.entry = None
            return
        if event != "call" or not self.is_pack(frame.f_code):
            return
        code = frame.f_code
        if self.current is None:
            caller = frame.f_back
            if (
                code.co_name == AGGREGATION[1]
                and code.co_filename.endswith(AGGREGATION[0])
                and (caller is None or not self.is_pack(caller.f_code))
            ):
                self.entry, self.current = frame, Aggregation(self.label_of(frame))
            else:
                return
        with self.lock:
            aggregation = self.current
            if aggregation is None:
                return
            aggregation.calls += 1
            aggregation.by_name[code.co_name] = aggregation.by_name.get(code.co_name, 0) + 1
        if code.co_name in self.WATCHED:
            path = self.path(frame)
            if path is not None:
                key = code.co_name
                if key == "drop_ratio" and frame.f_back.f_code.co_name != "model_summary":
                    key = "drop_ratio (a cell's or a corruption's)"
                if len(path) < aggregation.depths.get(key, len(path) + 1):
                    aggregation.depths[key], aggregation.paths[key] = len(path), path

    def path(self, frame: Any) -> list[str] | None:
        """The pack frames from the aggregation down to ``frame`` (its depth is their number); None on
        another thread."""
        names: list[str] = []
        while frame is not None:
            if self.is_pack(frame.f_code):
                names.append(frame.f_code.co_qualname)
            if frame is self.entry:
                return names[::-1]
            frame = frame.f_back
        return None

    @staticmethod
    def label_of(frame: Any) -> str:
        """``task:<name>`` or ``group:<name>`` of an aggregation call, from its arguments and closure."""
        names = frame.f_locals
        if "group" in names:
            return f"group:{names['group']}:{names.get('metric')}"
        items = names.get("items") or [{}]
        record = getattr(items[0], "record", items[0])
        return f"task:{record.get('task')}:{names.get('metric')}"


def first(done: list[Aggregation], prefix: str) -> Aggregation:
    """The first aggregation whose label starts with ``prefix``."""
    for aggregation in done:
        if aggregation.label.startswith(prefix):
            return aggregation
    sys.exit(f"pack_calls: no aggregation {prefix}* was seen: {[a.label for a in done][:10]}")


def run(limit: int | None) -> list[Aggregation]:
    """The launcher run under the call counter; the aggregations it saw."""
    from lmms_eval_tasks.host.launcher import main

    counter = CallCounter(ROOT / "lmms_eval_tasks")
    with tempfile.TemporaryDirectory(prefix="pack_calls_") as folder:
        os.environ["LMMS_EVAL_TASKS_JUDGE"] = "rule"
        arguments = ["--model", "random_guess", "--tasks", "hallusionbench_sample,vrb_sample",
                     "--output_path", folder, *(["--limit", str(limit)] if limit else [])]  # fmt: skip
        threading.setprofile(counter.profile)
        sys.setprofile(counter.profile)
        try:
            code = main(arguments)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    if code != 0:
        sys.exit(f"pack_calls: the launcher run exited {code}")
    return counter.done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="--limit 4: checks the script, not the targets")
    arguments = parser.parse_args()
    done = run(4 if arguments.quick else None)
    hallusionbench = first(done, "task:hallusionbench_sample:")
    vrb_task = first(done, "task:vrb_sample_")
    vrb_group = first(done, "group:vrb_sample:")
    found = {
        "fAcc_depth": hallusionbench.depths.get("group_shares", -1),
        "vrb_relative_drop_depth": vrb_group.depths.get("drop_ratio", -1),
        "vrb_first_aggregation_calls": vrb_task.calls,
        "hallusionbench_first_aggregation_calls": hallusionbench.calls,
        "strict_json_calls": hallusionbench.by_name.get("to_strict_json", 0),
    }
    for aggregation in (hallusionbench, vrb_task, vrb_group):
        busiest = sorted(aggregation.by_name.items(), key=lambda item: -item[1])[:6]
        print(f"{aggregation.label}: {aggregation.calls} pack calls; most: {busiest}")
        for name, path in aggregation.paths.items():
            print(f"  {name}, {len(path)} calls deep: {' -> '.join(path)}")
    missed = [f"{name}={found[name]} (target <= {limit})" for name, limit in TARGETS.items()
              if not 0 < found[name] <= limit]  # fmt: skip
    if missed and not arguments.quick:
        print(f"missed: {', '.join(missed)}", file=sys.stderr)
    print("RESULT " + " ".join(f"{name}={value}" for name, value in found.items()))
    if missed and not arguments.quick:
        sys.exit(1)


if __name__ == "__main__":
    main()
