"""Judge calibration against human labels, the labels file, and judge noise across samples.

Every expected number here is computed by hand (in comments, or by a plain confusion-matrix / loop
implementation written in the test), never by the code under test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from evalkit.analysis.agreement import METRICS, agreement_metrics, bootstrap_metrics, rank_average
from evalkit.analysis.calibration import calibrate
from evalkit.analysis.labels import Labels, labels_frame, labels_path
from evalkit.analysis.noise import judge_noise
from evalkit.errors import EvalkitError
from evalkit.reporting.charts import calibration_heatmap

# ------------------------------------------------------------------------------------------------ helpers


def scored(rows: list[dict], evaluators: dict[str, str]) -> pd.DataFrame:
    """A scored case table: ``rows`` give item, turn, prompt, response and ``<key>`` / ``<key>_result``."""
    df = pd.DataFrame(rows)
    df["turn"] = pd.array(df["turn"].tolist() if "turn" in df else [None] * len(df), dtype="Int64")
    for key in evaluators.values():
        for suffix in ("_result", "_reason"):
            if f"{key}{suffix}" not in df:
                df[f"{key}{suffix}"] = None
        df[f"{key}_threshold"] = 3.0
    df.attrs["evalkit"] = {"scored": [{"name": name, "key": key} for name, key in evaluators.items()]}
    return df


def table_from_scores(judge: list, human: list | None = None, name: str = "Relevance") -> pd.DataFrame:
    """Single-turn rows 0..n-1 scored ``judge`` by evaluator ``name`` (key: lower-case name)."""
    key = name.lower()
    return scored(
        [
            {
                "item": i,
                "turn": None,
                "prompt": f"q{i}",
                "response": f"a{i}",
                key: float(s),
                f"{key}_result": "pass" if s >= 3 else "fail",
                f"{key}_reason": f"reason {i}",
            }
            for i, s in enumerate(judge)
        ],
        {name: key},
    )


def hand_kappa(judge: list, human: list, labels: list, quadratic: bool) -> float:
    """Cohen's kappa from the confusion matrix, the textbook way: 1 - sum(w * O) / sum(w * E)."""
    k = len(labels)
    index = {label: i for i, label in enumerate(labels)}
    observed = np.zeros((k, k))
    for j, h in zip(judge, human):
        observed[index[h], index[j]] += 1
    n = observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    weights = np.array(
        [[((a - b) ** 2 / (k - 1) ** 2 if quadratic else float(a != b)) for b in range(k)] for a in range(k)]
    )
    return 1.0 - (weights * observed).sum() / (weights * expected).sum()


def hand_spearman(x, y) -> float:
    return float(np.corrcoef(rank_average(x), rank_average(y))[0, 1])


# ------------------------------------------------------------------------------------------------ metrics


def test_unweighted_kappa_of_a_known_two_by_two_table():
    # Rows: human pass / fail; columns: judge pass / fail. [[20, 5], [10, 15]], n = 50.
    # p_o = (20 + 15) / 50 = 0.7; human pass 25/50, judge pass 30/50;
    # p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    human = [1] * 25 + [0] * 25
    judge = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    metrics = agreement_metrics(judge, human, scale=False)
    assert metrics["kappa"] == pytest.approx(0.4)
    assert metrics["exact"] == pytest.approx(0.7)
    assert math.isnan(metrics["within_one"])
    assert metrics["bias"] == pytest.approx(0.6 - 0.5)
    assert hand_kappa(judge, human, [1, 0], quadratic=False) == pytest.approx(0.4)


def test_quadratic_weighted_kappa_by_hand():
    # human (1, 2, 3), judge (1, 3, 3) on the 1-5 scale; weights (a - b)^2 / 16.
    # Observed: pairs (1,1), (2,3), (3,3) -> sum w*O = (0 + 1 + 0) / 16 = 1/16.
    # Expected: human marginal {1:1, 2:1, 3:1}, judge {1:1, 3:2}, E_ab = r_a c_b / 3:
    #   a=1: (1-1)^2*1 + (1-3)^2*2 = 8;  a=2: 1*1 + 1*2 = 3;  a=3: 4*1 + 0*2 = 4  -> 15 / 3 / 16 = 5/16.
    # kappa = 1 - (1/16) / (5/16) = 0.8.
    human, judge = [1, 2, 3], [1, 3, 3]
    assert agreement_metrics(judge, human)["kappa"] == pytest.approx(0.8)
    assert hand_kappa(judge, human, [1, 2, 3, 4, 5], quadratic=True) == pytest.approx(0.8)


def test_quadratic_kappa_matches_the_confusion_matrix_on_random_scores():
    rng = np.random.default_rng(7)
    human = rng.integers(1, 6, size=120)
    judge = np.clip(human + rng.integers(-2, 3, size=120), 1, 5)
    expected = hand_kappa(judge.tolist(), human.tolist(), [1, 2, 3, 4, 5], quadratic=True)
    assert agreement_metrics(judge, human)["kappa"] == pytest.approx(expected)


def test_exact_and_within_one():
    # differences judge - human: 0, -1, +2, 0, -2 -> exact 2/5, within one 3/5, bias -1/5.
    metrics = agreement_metrics([1, 2, 4, 5, 3], [1, 3, 2, 5, 5])
    assert metrics["n"] == 5
    assert metrics["exact"] == pytest.approx(2 / 5)
    assert metrics["within_one"] == pytest.approx(3 / 5)
    assert metrics["bias"] == pytest.approx(-1 / 5)


def test_spearman_with_ties_uses_average_ranks():
    # x = (1, 2, 2, 3) ranks (1, 2.5, 2.5, 4); y = (1, 3, 2, 4) ranks (1, 3, 2, 4); both mean 2.5.
    # deviations x: (-1.5, 0, 0, 1.5), y: (-1.5, 0.5, -0.5, 1.5)
    # cov = 2.25 + 0 + 0 + 2.25 = 4.5; ssx = 4.5; ssy = 5 -> rho = 4.5 / sqrt(22.5) = 3 / sqrt(10).
    assert rank_average([1, 2, 2, 3]).tolist() == [1.0, 2.5, 2.5, 4.0]
    assert rank_average([3, 1, 3, 3]).tolist() == [3.0, 1.0, 3.0, 3.0]
    assert agreement_metrics([1, 2, 2, 3], [1, 3, 2, 4])["spearman"] == pytest.approx(3 / math.sqrt(10))


def test_undefined_metrics_are_nan():
    same = agreement_metrics([4, 4, 4], [4, 4, 4])
    assert same["exact"] == 1.0
    assert math.isnan(same["kappa"]) and math.isnan(same["spearman"])
    assert math.isnan(agreement_metrics([], [])["exact"])


def test_bootstrap_is_seeded_contains_the_estimate_and_equals_a_plain_loop():
    rng = np.random.default_rng(3)
    human = rng.integers(1, 6, size=60)
    judge = np.clip(human + rng.integers(-1, 2, size=60), 1, 5)
    first = bootstrap_metrics(judge, human, resamples=500, seed=11)
    again = bootstrap_metrics(judge, human, resamples=500, seed=11)
    other = bootstrap_metrics(judge, human, resamples=500, seed=12)
    assert first == again
    assert first != other
    point = agreement_metrics(judge, human)
    for metric in ("exact", "within_one", "kappa", "spearman", "bias"):
        low, high = first[metric]
        assert low <= point[metric] <= high, metric
    assert first["kappa"][0] < first["kappa"][1]

    # The same draws, resampled the plain way: index the pairs, recompute each metric from scratch.
    draws = np.random.default_rng(11).integers(0, 60, size=(500, 60))
    values = {"exact": [], "kappa": [], "spearman": [], "bias": []}
    for draw in draws:
        j, h = judge[draw], human[draw]
        values["exact"].append(np.mean(j == h))
        values["kappa"].append(hand_kappa(j.tolist(), h.tolist(), [1, 2, 3, 4, 5], quadratic=True))
        values["spearman"].append(hand_spearman(j, h))
        values["bias"].append(np.mean(j - h))
    for metric, series in values.items():
        low, high = np.percentile(series, [2.5, 97.5])
        assert first[metric] == pytest.approx((low, high)), metric


# ------------------------------------------------------------------------------------------------ labels


def test_labels_round_trip(tmp_path):
    document = tmp_path / "demo.json"
    path = labels_path(document)
    assert path == tmp_path / "demo.labels.json"
    labels = Labels.for_document(document, labeller="ana")
    assert len(labels) == 0
    labels.set(2, 1, "Relevance", score=3, note="half right")
    labels.set(0, None, "Relevance", score=5, verdict="pass")
    labels.set(0, None, "Coherence", verdict="FAIL", labeller="bo")
    labels.set(2, 1, "Relevance", score=2, note="wrong turn")  # replaces
    assert labels.save() == path
    assert [p.name for p in tmp_path.iterdir()] == ["demo.labels.json"]  # no temporary file left

    data = json.loads(path.read_text())
    assert data["version"] == 2
    assert [(e["item"], e["turn"], e["evaluator"]) for e in data["labels"]] == [
        (0, None, "Coherence"),
        (0, None, "Relevance"),
        (2, 1, "Relevance"),
    ]
    first = data["labels"][0]
    assert set(first) == {
        "item",
        "turn",
        "evaluator",
        "score",
        "verdict",
        "note",
        "labeller",
        "at",
        "prompt_sha256",
    }
    assert first["verdict"] == "fail" and first["score"] is None and first["labeller"] == "bo"
    assert data["labels"][2]["score"] == 2 and data["labels"][2]["note"] == "wrong turn"
    assert data["labels"][2]["labeller"] == "ana"
    assert data["labels"][2]["at"].endswith("+00:00")

    loaded = Labels.load(path)
    assert loaded.to_dict() == labels.to_dict()
    assert loaded.get(2, 1, "Relevance")["score"] == 2
    assert loaded.remove(0, None, "Coherence") and not loaded.remove(0, None, "Coherence")
    frame = Labels.load(path).frame()
    assert list(frame.columns) == [
        "item",
        "turn",
        "evaluator",
        "score",
        "verdict",
        "note",
        "labeller",
        "at",
        "prompt_sha256",
    ]
    assert str(frame["turn"].dtype) == "Int64" and str(frame["score"].dtype) == "Int64"
    assert frame["turn"].isna().tolist() == [True, True, False]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"score": 6}, "score must be a whole number from 1 to 5"),
        ({"score": 0}, "score must be a whole number from 1 to 5"),
        ({"score": 2.5}, "score must be a whole number from 1 to 5"),
        ({"score": True}, "score must be a whole number from 1 to 5"),
        ({"score": "4"}, "score must be a whole number from 1 to 5"),
        ({"verdict": "ok"}, "verdict must be 'pass' or 'fail'"),
        ({}, "give a score (1-5), a verdict ('pass' / 'fail') or both"),
    ],
)
def test_label_values_are_validated(kwargs, message):
    with pytest.raises(EvalkitError) as caught:
        Labels().set(3, None, "Relevance", **kwargs)
    assert message in str(caught.value)
    assert "item 3" in str(caught.value)


def test_label_keys_are_validated():
    with pytest.raises(EvalkitError, match="item must be a whole number >= 0"):
        Labels().set(-1, None, "Relevance", score=3)
    with pytest.raises(EvalkitError, match="turn must be a whole number >= 0"):
        Labels().set(0, 1.5, "Relevance", score=3)
    with pytest.raises(EvalkitError, match="evaluator must be the evaluator's name"):
        Labels().set(0, None, "", score=3)
    with pytest.raises(EvalkitError, match="no file yet"):
        Labels().save()


def test_label_files_are_validated(tmp_path):
    path = tmp_path / "x.labels.json"
    with pytest.raises(EvalkitError, match="does not exist"):
        Labels.load(path)
    assert len(Labels.load(path, missing_ok=True)) == 0

    def write(data) -> None:
        path.write_text(json.dumps(data) if not isinstance(data, str) else data)

    label = {"item": 0, "turn": None, "evaluator": "Relevance", "score": 4}
    cases = [
        ("{not json", "not valid JSON"),
        ({"version": 1, "items": []}, "it looks like an eval document"),
        ({"version": 3, "labels": []}, "has version 3"),
        ({"version": 1, "labels": {}}, '"labels" must be a list'),
        ({"version": 1, "labels": [{**label, "score": 9}]}, "label #0"),
        ({"version": 1, "labels": [{**label, "colour": "red"}]}, "unknown field(s) colour"),
        ({"version": 1, "labels": [label, {**label, "score": 2}]}, "a second label for the same item"),
    ]
    for data, message in cases:
        write(data)
        with pytest.raises(EvalkitError) as caught:
            Labels.load(path)
        assert message in str(caught.value), (data, str(caught.value))
    write({"version": 1, "labels": [label]})
    assert Labels.load(path).get(0, None, "Relevance")["score"] == 4


def test_labels_from_a_dataframe():
    frame = labels_frame(
        pd.DataFrame({"item": [0, 1], "turn": [None, 2], "score": [4, np.nan], "verdict": [None, "pass"]})
    )
    assert frame["evaluator"].tolist() == ["", ""]
    assert frame["score"].tolist()[0] == 4 and frame["score"].isna().tolist() == [False, True]
    assert frame["turn"].tolist()[1] == 2
    with pytest.raises(EvalkitError, match="labels row 1"):
        labels_frame(pd.DataFrame({"item": [0, 1], "score": [4, 7]}))
    with pytest.raises(EvalkitError, match="needs an 'item' column"):
        labels_frame(pd.DataFrame({"row": [0], "score": [4]}))


# ------------------------------------------------------------------------------------------------ calibrate


def test_pairing_by_item_and_turn_skips_missing_labels():
    df = scored(
        [
            {
                "item": 0,
                "turn": None,
                "prompt": "p0",
                "response": "r0",
                "relevance": 4.0,
                "relevance_result": "pass",
            },
            {
                "item": 1,
                "turn": None,
                "prompt": "p1",
                "response": "r1",
                "relevance": 1.0,  # a leftover score on an errored row is not used
                "relevance_result": "error",
            },
            {
                "item": 2,
                "turn": 0,
                "prompt": "p2a",
                "response": "r2a",
                "relevance": 4.0,
                "relevance_result": "pass",
            },
            {
                "item": 2,
                "turn": 1,
                "prompt": "p2b",
                "response": "r2b",
                "relevance": 2.0,
                "relevance_result": "fail",
            },
        ],
        {"Relevance": "relevance"},
    )
    labels = Labels()
    labels.set(0, None, "Relevance", score=4)
    labels.set(1, None, "Relevance", score=2)  # the judge errored: skipped
    labels.set(2, 0, "Relevance", score=5)
    labels.set(2, 1, "Relevance", score=1, note="off topic")
    labels.set(2, None, "Relevance", score=3)  # item 2 has no single-turn row: skipped
    labels.set(7, None, "Relevance", score=3)  # not in the table: skipped
    c = calibrate(df, "Relevance", labels, resamples=50)
    row = c.table.loc["Relevance"]
    assert row["labels"] == 6 and row["n"] == 3 and row["on"] == "score"
    pairs = c.pairs
    assert pairs["item"].tolist() == [0, 2, 2]
    assert pairs["turn"].isna().tolist() == [True, False, False]
    assert pairs["turn"].tolist()[1:] == [0, 1]
    assert pairs["judge_value"].tolist() == [4.0, 4.0, 2.0]
    assert pairs["human_value"].tolist() == [4, 5, 1]
    # judge (4, 4, 2) vs human (4, 5, 1): exact 1/3, within one 3/3, bias (0 - 1 + 1) / 3 = 0.
    assert row["exact"] == pytest.approx(1 / 3)
    assert row["within_one"] == pytest.approx(1.0)
    assert row["bias"] == pytest.approx(0.0)
    assert row["kappa"] == pytest.approx(hand_kappa([4, 4, 2], [4, 5, 1], [1, 2, 3, 4, 5], quadratic=True))
    worst = c.disagreements
    assert worst[["item", "human_note", "prompt", "response"]].values.tolist() == [
        [2, "", "p2a", "r2a"],
        [2, "off topic", "p2b", "r2b"],
    ]
    assert worst["difference"].tolist() == [-1.0, 1.0]


def test_two_judges_on_the_same_labels():
    df = table_from_scores([1, 2, 3, 4, 5])
    df["reversed"] = [5.0, 4.0, 3.0, 2.0, 1.0]
    df["reversed_result"] = ["pass", "pass", "pass", "fail", "fail"]
    df["reversed_reason"] = [f"why {i}" for i in range(5)]
    df.attrs["evalkit"]["scored"].append({"name": "Reversed", "key": "reversed"})
    labels = pd.DataFrame({"item": range(5), "score": [1, 2, 3, 4, 5], "evaluator": "Relevance"})
    c = calibrate(df, ["Relevance", "Reversed"], labels, resamples=200)
    assert c.table.index.tolist() == ["Relevance", "Reversed"]
    good, bad = c.table.loc["Relevance"], c.table.loc["Reversed"]
    assert (good["exact"], good["kappa"], good["spearman"]) == pytest.approx((1.0, 1.0, 1.0))
    # reversed: exact 1/5 (item 2); D_o = (16 + 4 + 0 + 4 + 16) / 5 = 8, D_e = 2 + 2 + 0 = 4 -> kappa -1.
    assert bad["exact"] == pytest.approx(0.2)
    assert bad["kappa"] == pytest.approx(-1.0)
    assert bad["spearman"] == pytest.approx(-1.0)
    assert bad["within_one"] == pytest.approx(1 / 5)  # differences 4, 2, 0, -2, -4
    # Disagreements: all Reversed, largest |difference| first, with the judge's reason.
    worst = c.disagreements
    assert set(worst["judge"]) == {"Reversed"}
    assert worst["difference"].abs().tolist() == [4.0, 4.0, 2.0, 2.0]
    assert worst["judge_reason"].tolist()[0] == "why 0"
    for metric in METRICS:
        assert f"{metric}_low" in c.table.columns and f"{metric}_high" in c.table.columns


def test_verdict_labels_give_unweighted_kappa_on_results():
    # Judge results by score >= 3, human verdicts; the 2x2 table [[20, 5], [10, 15]] again -> kappa 0.4.
    judge = [5] * 20 + [1] * 5 + [5] * 10 + [1] * 15
    human = ["pass"] * 25 + ["fail"] * 25
    df = table_from_scores(judge)
    c = calibrate(df, "relevance", pd.DataFrame({"item": range(50), "verdict": human}), resamples=100)
    row = c.table.loc["Relevance"]
    assert row["on"] == "verdict" and row["kappa_kind"] == "unweighted"
    assert row["kappa"] == pytest.approx(0.4)
    assert row["exact"] == pytest.approx(0.7)
    assert math.isnan(row["within_one"])
    assert set(c.disagreements["judge_value"]) == {"pass", "fail"}


def test_labels_are_chosen_by_evaluator(tmp_path):
    df = table_from_scores([4, 2])
    labels = Labels(tmp_path / "l.labels.json")
    labels.set(0, None, "Relevance", score=4)
    labels.set(1, None, "Relevance", score=2)
    labels.set(0, None, "Coherence", score=1)
    labels.set(1, None, "Coherence", score=5)
    labels.save()
    c = calibrate(df, "Relevance", tmp_path / "l.labels.json", resamples=20)  # from the file
    assert c.table.loc["Relevance", "exact"] == 1.0
    c = calibrate(df, "Relevance", labels, evaluator="Coherence", resamples=20)
    assert c.table.loc["Relevance", "exact"] == 0.0
    only_coherence = Labels()
    only_coherence.set(0, None, "Coherence", score=4)
    assert calibrate(df, "Relevance", only_coherence, resamples=20).table.loc["Relevance", "n"] == 1
    labels.remove(0, None, "Relevance")
    labels.remove(1, None, "Relevance")
    labels.set(0, None, "Groundedness", score=3)
    with pytest.raises(EvalkitError, match="no human labels for judge 'Relevance'"):
        calibrate(df, "Relevance", labels)
    with pytest.raises(EvalkitError, match="no evaluator 'Fluency' is scored"):
        calibrate(df, "Fluency", labels)
    with pytest.raises(EvalkitError, match="no human labels yet"):
        calibrate(df, "Relevance", Labels())


def test_runs_mapping_heatmap_and_html():
    labels = pd.DataFrame({"item": range(4), "score": [5, 4, 2, 1], "note": ["", "", "<b>n</b>", ""]})
    v1 = table_from_scores([5, 4, 3, 1])
    v2 = table_from_scores([5, 4, 2, 1])
    v1.loc[2, "prompt"] = "<script>alert(1)</script>"
    c = calibrate({"v1": v1, "v2": v2}, "Relevance", labels, resamples=50)
    assert c.table.index.tolist() == ["v1: Relevance", "v2: Relevance"]
    assert c.table["exact"].tolist() == pytest.approx([0.75, 1.0])
    figure = calibration_heatmap(c, "v1: Relevance")
    # rows: human 1..5, columns: judge 1..5; human 2 was judged 3.
    assert figure.data[0].z[1][2] == 1
    assert "v1: Relevance" in figure.layout.title.text
    page = c._repr_html_()
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "&lt;b&gt;n&lt;/b&gt;" in page
    # the disagreement's "judge vs human" cell is the two values, never a dict method (issue 18, item 1)
    assert '<td class="num">3 vs 2</td>' in page and "built-in method" not in page
    with pytest.raises(EvalkitError, match="no judge 'nope'"):
        calibration_heatmap(c, "nope")


# ------------------------------------------------------------------------------------------------ noise


def noise_samples() -> list[pd.DataFrame]:
    """Three samples of Relevance (1-5, threshold 3) and a deterministic exactMatch over four items."""
    samples = [
        ([5, 3, 2, 4], ["pass", "pass", "fail", "pass"]),
        ([5, 2, 2, None], ["pass", "fail", "fail", "error"]),
        ([4, 4, 1, 4], ["pass", "pass", "fail", "pass"]),
    ]
    frames = []
    for scores, results in samples:
        df = scored(
            [
                {
                    "item": i,
                    "turn": None,
                    "prompt": f"q{i}",
                    "response": f"a{i}",
                    "relevance": np.nan if s is None else float(s),
                    "relevance_result": r,
                    "exactMatch": i % 2 == 0,
                    "exactMatch_result": "pass" if i % 2 == 0 else "fail",
                }
                for i, (s, r) in enumerate(zip(scores, results))
            ],
            {"Relevance": "relevance", "ExactMatch": "exactMatch"},
        )
        frames.append(df)
    return frames


def test_judge_noise_on_three_samples():
    noise = judge_noise(noise_samples())
    assert noise.samples == 3
    rows = noise.rows[noise.rows["judge"] == "Relevance"].reset_index(drop=True)
    # item 0: 5, 5, 4 -> spread 1, std sqrt(((1/3)^2 * 2 + (2/3)^2) / 2) = sqrt(1/3)
    # item 1: 3, 2, 4 -> spread 2, std 1, pass / fail / pass: a flip
    # item 2: 2, 2, 1 -> spread 1, std sqrt(1/3), never passes
    # item 3: 4, error, 4 -> spread 0 over the two scores, std 0, not complete
    assert rows["spread"].tolist() == [1.0, 2.0, 1.0, 0.0]
    assert rows["std"].tolist() == pytest.approx([math.sqrt(1 / 3), 1.0, math.sqrt(1 / 3), 0.0])
    assert rows["flip"].tolist() == [False, True, False, False]
    assert rows["complete"].tolist() == [True, True, True, False]
    assert rows["pass_all"].tolist() == [True, False, False, False]
    assert rows["pass_any"].tolist() == [True, True, False, True]
    assert rows["errors"].tolist() == [0, 0, 0, 1]
    assert rows["scores"][1] == [3.0, 2.0, 4.0]
    assert rows["results"][3] == ["pass", "error", "pass"]

    table = noise.table
    relevance = table.loc["Relevance"]
    assert relevance["rows"] == 4 and relevance["complete"] == 3
    assert relevance["mean_spread"] == pytest.approx((1 + 2 + 1 + 0) / 4)
    assert relevance["max_spread"] == 2.0
    assert relevance["mean_std"] == pytest.approx((2 * math.sqrt(1 / 3) + 1 + 0) / 4)
    assert relevance["flips"] == 1
    assert relevance["flip_rate"] == pytest.approx(1 / 3)
    # over the complete rows 0-2: passes 3 + 2 + 0 of 9 samples; all three pass: row 0; any: rows 0, 1.
    assert relevance["pass_rate"] == pytest.approx(5 / 9)
    assert relevance["pass_hat_k"] == pytest.approx(1 / 3)
    assert relevance["pass_at_k"] == pytest.approx(2 / 3)

    exact = table.loc["ExactMatch"]
    assert exact["mean_spread"] == 0.0 and exact["flip_rate"] == 0.0
    assert exact["pass_hat_k"] == exact["pass_at_k"] == pytest.approx(0.5)
    assert "Judge noise over 3 samples" in noise._repr_html_()


def test_judge_noise_inputs():
    frames = noise_samples()
    one = judge_noise(frames, "relevance")
    assert one.table.index.tolist() == ["Relevance"]
    long = pd.concat([f.assign(sample=s) for s, f in enumerate(frames)], ignore_index=True)
    long.attrs = frames[0].attrs
    assert judge_noise(long, "Relevance").table.equals(one.table)
    shuffled = [frames[0], frames[1].iloc[::-1], frames[2].iloc[1:]]  # row order and a missing row
    partial = judge_noise(shuffled, "Relevance")
    assert partial.unmatched == 1 and partial.table.loc["Relevance", "rows"] == 3
    assert partial.rows["spread"].tolist() == [2.0, 1.0, 0.0]
    with pytest.raises(EvalkitError, match="at least two samples"):
        judge_noise(frames[:1])
    with pytest.raises(EvalkitError, match="needs a 'sample' column"):
        judge_noise(frames[0])
    changed = frames[2].copy()
    changed.loc[1, "prompt"] = "another question"
    with pytest.raises(EvalkitError, match="sample 2 has another prompt than sample 0 at item 1"):
        judge_noise([frames[0], frames[1], changed])


def test_template_rows_read_their_keys_before_dict_methods():
    """``row.values`` / ``row.items`` in a template is the row's key, not ``dict.values`` (issue 18, item 1)."""
    from evalkit.analysis.templating import environment

    template = environment().from_string("{{ row.values }}|{{ row.items }}|{{ row.judge }}")
    assert template.render(row={"values": "3 vs 2", "items": 4, "judge": "j"}) == "3 vs 2|4|j"
