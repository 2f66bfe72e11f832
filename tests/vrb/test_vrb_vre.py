"""`lmms-eval-tasks vre` on CSV input: the pool table, hand-checked VRE, errors, plots."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.tasks.vrb.cli_vre import InputError, pool_table, read_csv

# The pool of tests/test_vrb_metrics.py::test_pool_vre_ordering_depends_on_the_weights:
# Z flat, P a first drop then flat, Q a steady rise. Equal weights: Z 0 < P 0.7667 < Q 0.8.
CURVES = {
    "Z": [0.8, 0.8, 0.8, 0.8, 0.8, 0.8],
    "P": [0.8, 0.6, 0.6, 0.6, 0.6, 0.6],
    "Q": [0.8, 0.8, 0.7, 0.6, 0.5, 0.4],
}


def _write_csv(path: Path, repeat_clean: bool = False) -> Path:
    lines = ["model,corruption,severity,accuracy"]
    for model, curve in CURVES.items():
        if repeat_clean:
            lines.append(f"{model},snow,0,{curve[0]}")
        else:
            lines.append(f"{model},clean,0,{curve[0]}")
        lines.extend(f"{model},snow,{k},{curve[k]}" for k in range(1, 6))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("repeat_clean", [False, True])
def test_vre_cli_on_a_csv(tmp_path: Path, capsys, repeat_clean: bool) -> None:
    path = _write_csv(tmp_path / "pool.csv", repeat_clean)
    assert main(["vre", str(path)]) == 0
    output = json.loads(capsys.readouterr().out)
    assert set(output) == {"models", "corruptions", "pool", "notes"}
    models = output["models"]
    assert models["Q"]["vre"] == pytest.approx(0.8)
    assert models["P"]["vre"] == pytest.approx(0.2 * (1 + 0.5 + 1 / 3 + 1 + 1))
    assert models["Z"]["vre"] == 0.0
    # raw sub-metrics of P: E = [.2, .4, .4, .4, .4, .4]: F = 1, R = 1, mu = 2.2/6, Delta = .2
    assert models["P"]["first_drop"] == pytest.approx(1.0)
    assert models["P"]["range_of_error"] == pytest.approx(1.0)
    assert models["P"]["average_error"] == pytest.approx(2.2 / 6)
    assert models["P"]["average_difference"] == pytest.approx(0.2)
    assert models["P"]["accuracy_clean"] == 0.8
    assert models["P"]["accuracy_average"] == pytest.approx(3.8 / 6)
    assert models["P"]["relative_accuracy_drop"] == pytest.approx((0.8 - 3.8 / 6) / 0.8)
    for entry in [*models.values(), *output["corruptions"].values()]:
        assert {
            "first_drop",
            "range_of_error",
            "error_rate",
            "average_error",
            "average_difference",
            "vre",
        } <= set(entry)
    assert output["pool"]["models"] == ["P", "Q", "Z"] and output["pool"]["corruptions"] == ["snow"]


def test_vre_cli_weights_and_preferences(tmp_path: Path, capsys) -> None:
    path = _write_csv(tmp_path / "pool.csv")
    assert main(["vre", str(path), "--weights", "0.6,0.1,0.1,0.1,0.1"]) == 0
    by_weights = json.loads(capsys.readouterr().out)["models"]
    assert by_weights["P"]["vre"] == pytest.approx(0.6 + 0.1 * (0.5 + 1 / 3 + 1 + 1))  # P overtakes Q
    assert by_weights["Q"]["vre"] == pytest.approx(0.4)
    assert main(["vre", str(path), "--preferences", f"{math.log(6)},0,0,0,0"]) == 0
    by_preferences = json.loads(capsys.readouterr().out)["models"]
    assert by_preferences["P"]["vre"] == pytest.approx(by_weights["P"]["vre"])
    assert main(["vre", str(path), "--weights", "1,1,1,1,1"]) == 2  # does not sum to 1
    assert "sum to 1" in capsys.readouterr().err


def test_single_model_gets_raw_sub_metrics_and_null_vre(tmp_path: Path, capsys) -> None:
    path = tmp_path / "one.csv"
    path.write_text(
        "model,corruption,severity,accuracy\nm,clean,0,0.8\n"
        + "".join(
            f"m,fog,{k},{value}\n" for k, value in zip(range(1, 6), [0.7, 0.6, 0.6, 0.5, 0.4], strict=True)
        )
    )
    assert main(["vre", str(path)]) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["models"]["m"]["vre"] is None
    assert output["models"]["m"]["first_drop"] == pytest.approx(0.5)  # (.3 - .2) / .2
    assert any("at least two" in note for note in output["notes"])


def test_pool_table_errors(tmp_path: Path) -> None:
    header = "model,corruption,severity,accuracy\n"
    cases = {
        "missing severities": "m,clean,0,0.8\nm,fog,1,0.7\n",
        "no clean level": "".join(f"m,fog,{k},0.5\n" for k in range(1, 6)),
        "not a fraction": "m,clean,0,80\n" + "".join(f"m,fog,{k},50\n" for k in range(1, 6)),
        "conflicts": "m,clean,0,0.8\nm,clean,0,0.7\n" + "".join(f"m,fog,{k},0.5\n" for k in range(1, 6)),
    }
    for expected, body in cases.items():
        path = tmp_path / "bad.csv"
        path.write_text(header + body)
        with pytest.raises(InputError, match=expected):
            pool_table(read_csv(path))
    path.write_text("model,severity,accuracy\nm,0,0.5\n")
    with pytest.raises(InputError, match="missing column"):
        read_csv(path)


def test_models_with_different_corruptions_are_refused(tmp_path: Path, capsys) -> None:
    path = tmp_path / "pool.csv"
    body = "model,corruption,severity,accuracy\na,clean,0,0.8\nb,clean,0,0.8\n"
    body += "".join(f"a,fog,{k},0.5\nb,fog,{k},0.5\na,snow,{k},0.4\n" for k in range(1, 6))
    path.write_text(body)
    assert main(["vre", str(path)]) == 2
    assert "does not cover" in capsys.readouterr().err


def test_plots_are_written(tmp_path: Path, capsys) -> None:
    path = _write_csv(tmp_path / "pool.csv")
    plots = tmp_path / "plots"
    assert main(["vre", str(path), "--plots", str(plots)]) == 0
    written = json.loads(capsys.readouterr().out)["plots"]
    names = sorted(Path(item).name for item in written)
    assert names == sorted(
        [
            "error_vs_severity_P.png",
            "error_vs_severity_Q.png",
            "error_vs_severity_Z.png",
            "radar_models.png",
            "radar_corruption_classes.png",
        ]
    )
    for item in written:
        assert Path(item).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
