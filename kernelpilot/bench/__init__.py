"""`kernelpilot bench`: a KernelBench-format suite judged by the harness, with the field's metrics.

Imports the harness alone (torch; rich for the live view; ray inside `ray_executor`, matplotlib and pyarrow
where they are needed): it runs on GPU machines and Ray workers that have none of the agent's or the
session's dependencies. The agent's sessions come in as a candidate provider (`commands/bench.py`).

    tasks = select(discover_suite(Path("KernelBench"), scratch), levels=(1, 2), sample=60)
    run = BenchRun(tasks, solutions_provider(Path("solutions")), LocalExecutor(options, workers=1), journal)
    run.start(); run.wait()
    summarize(run.earlier + run.outcomes, p_values=(1.0, 1.5, 2.0))
"""
