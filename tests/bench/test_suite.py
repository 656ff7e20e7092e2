"""Suites and solutions as users lay them out: KernelBench folders, flat folders, JSONL and Parquet files with a
`code` column; selection by level, glob and a seeded sample stratified by level."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import pytest
from bench_helpers import BROKEN_TASK, REPO, TASK

from kernelpilot.bench.solutions import solution_path
from kernelpilot.bench.suite import SuiteTask, discover_suite, select
from kernelpilot.cli import main
from kernelpilot.errors import UsageError

ROWS = [{"name": "relu bias", "code": TASK.read_text(), "level": 1},
        {"code": BROKEN_TASK, "level": 2},
        {"task": "relu bias", "code": TASK.read_text()}]


def test_kernelbench_checkout_in_level_then_number_order(tmp_path):
    for name in ("level2/1_b.py", "level1/10_c.py", "level1/9_a.py", "level1/notes.txt"):
        (tmp_path / "KernelBench" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "KernelBench" / name).write_text("")
    tasks = discover_suite(tmp_path, tmp_path / "scratch")
    assert [(t.name, t.level) for t in tasks] == [("level1/9_a", 1), ("level1/10_c", 1), ("level2/1_b", 2)]


def test_flat_folder(tmp_path):
    (tmp_path / "b.py").write_text("")
    (tmp_path / "a.py").write_text("")
    assert [(t.name, t.level) for t in discover_suite(tmp_path, tmp_path)] == [("a", None), ("b", None)]


def _check_rows(tasks: list[SuiteTask]) -> None:
    assert [(t.name, t.level) for t in tasks] == [("relu_bias", 1), ("row_00001", 2), ("relu_bias_00002", None)]
    assert tasks[0].path.read_text() == TASK.read_text() and tasks[1].path.read_text() == BROKEN_TASK


def test_jsonl_rows_become_task_files(tmp_path):
    data = tmp_path / "ops.jsonl"
    data.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n")
    _check_rows(discover_suite(data, tmp_path / "scratch"))


def test_parquet_rows_become_task_files(tmp_path):
    parquet = pytest.importorskip("pyarrow.parquet")
    import pyarrow

    data = tmp_path / "ops.parquet"
    columns = {key: [row.get(key) for row in ROWS] for key in ("name", "task", "code", "level")}
    parquet.write_table(pyarrow.table(columns), data)
    _check_rows(discover_suite(data, tmp_path / "scratch"))


def test_a_data_file_without_code_is_refused(tmp_path):
    data = tmp_path / "ops.jsonl"
    data.write_text('{"source": "x"}\n')
    with pytest.raises(UsageError, match="no 'code' column"):
        discover_suite(data, tmp_path)


def test_jsonl_suite_through_the_cli(tmp_path, capsys):
    """No solutions: the loadable rows are missing, the broken one a task error (nothing is evaluated)."""
    data = tmp_path / "ops.jsonl"
    data.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n")
    (tmp_path / "none").mkdir()
    assert main(["bench", str(data), "--solutions", str(tmp_path / "none"), "--device", "cpu", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in result["results"]] == ["missing", "task_error", "missing"]
    assert result["summary"]["by_level"]["none"]["tasks"] == 1 and result["summary"]["task_errors"] == 1


def test_a_flat_suite_has_no_level_none_and_an_unloadable_task_no_reward(tmp_path, capsys):
    """A flat folder's tasks have no level: the tables show the overall row, not "level none"; a task that
    cannot load is left out of the mean reward, so its progress line and row show its reason, not a reward."""
    suite, out = tmp_path / "flat", tmp_path / "out"
    suite.mkdir()
    (suite / "relu_bias.py").write_text(TASK.read_text())
    (suite / "broken.py").write_text(BROKEN_TASK)
    (tmp_path / "solutions").mkdir()
    assert main(["bench", str(suite), "--solutions", str(tmp_path / "solutions"), "--device", "cpu",
                 "--out", str(out)]) == 0
    shown = "".join(capsys.readouterr())  # progress lines, then the final table
    progress = next(line for line in shown.splitlines() if line.startswith("[1/2] broken"))
    assert progress.startswith("[1/2] broken task_error 0.0 s task broken.py does not define"), progress
    assert "[2/2] relu_bias missing reward -1" in shown and "none" not in shown
    report = (out / "report.md").read_text()
    assert "none" not in report and "\n| all | 2 | 1 |" in report
    assert "| broken | - | task_error | - |" in report and "| relu_bias | - | missing | -1 |" in report


EMPTY_SUITES = {
    "folder": ("suite", lambda suite: suite.mkdir(), "no task files (*.py) in {suite} or in level folders under it"),
    "level folders": ("suite", lambda suite: (suite / "level1").mkdir(parents=True), "no task files (*.py) in {suite}"),
    "jsonl": ("ops.jsonl", lambda suite: suite.write_text("\n\n"), "no tasks in {suite}: it has no rows"),
}


@pytest.mark.parametrize("name, make, message", EMPTY_SUITES.values(), ids=EMPTY_SUITES.keys())
def test_an_empty_suite_says_so_not_that_the_selection_left_nothing(tmp_path, capsys, name, make, message):
    """Neither --levels nor --tasks was given: the selection is not what is wrong."""
    suite = tmp_path / name
    make(suite)
    assert main(["bench", str(suite), "--reference-as-candidate", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert message.format(suite=suite) in err and err.count("\n") == 1, err


def _fake_suite() -> list[SuiteTask]:
    sizes = {1: 10, 2: 6, 3: 4}
    return [SuiteTask(f"level{level}/{i}_t", level, Path(f"{i}.py")) for level, n in sizes.items() for i in range(n)]


def test_selection_by_level_and_glob():
    tasks = _fake_suite()
    assert {t.level for t in select(tasks, levels=(2, 3))} == {2, 3}
    assert [t.name for t in select(tasks, pattern="level3/1_*")] == ["level3/1_t"]
    assert len(select(tasks, pattern="1_t")) == 3  # the bare file name matches in every level


def test_sample_is_stratified_and_seeded():
    tasks = _fake_suite()
    sample = select(tasks, sample=10, seed=0)
    assert Counter(t.level for t in sample) == {1: 5, 2: 3, 3: 2}
    assert sample == select(tasks, sample=10, seed=0) and sample != select(tasks, sample=10, seed=1)
    assert len(select(tasks, sample=7, seed=3)) == 7


def test_levels_are_interleaved_so_a_run_cut_short_has_done_part_of_each():
    """A cut-short 60-task sample of KernelBench had done levels 1 and 2 alone: no projection (stop 32)."""
    tasks = _fake_suite()
    for selected in (select(tasks), select(tasks, sample=10, seed=0)):
        first_half = selected[:len(selected) // 2]
        assert {t.level for t in first_half} == {1, 2, 3}
        for level in (1, 2, 3):  # each level's own order is kept
            names = [t.name for t in selected if t.level == level]
            assert names == sorted(names, key=lambda name: int(name.split("/")[1].split("_")[0]))
    assert [t.level for t in select(tasks)][:4] == [1, 2, 3, 1]


def test_solutions_mirrored_flat_or_workspace(tmp_path):
    task = SuiteTask("level1/3_x", 1, Path("3_x.py"))
    assert solution_path(tmp_path, task) is None
    (tmp_path / "3_x").mkdir()
    assert solution_path(tmp_path, task) == tmp_path / "3_x"
    (tmp_path / "level1").mkdir()
    (tmp_path / "level1" / "3_x.py").write_text("")
    assert solution_path(tmp_path, task) == tmp_path / "level1" / "3_x.py"


def test_the_bench_package_imports_nothing_above_it():
    """It runs on GPU machines and Ray workers that have torch and rich alone (ray and matplotlib only where
    they are needed, imported inside)."""
    above = ("textual", "litellm", "git", "kernelpilot.agent", "kernelpilot.session", "kernelpilot.tui",
             "kernelpilot.commands", "kernelpilot.finetune")
    for path in (REPO / "kernelpilot" / "bench").glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        names |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not [n for n in names if n == "ray" and path.name != "ray_executor.py" or n.startswith(above)], path
