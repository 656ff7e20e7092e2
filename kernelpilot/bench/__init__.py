"""`kernelpilot bench`: a KernelBench-format suite judged by the harness, with the field's metrics.

Imports the harness alone (torch, rich for the live view; ray inside `ray_executor`, matplotlib and pyarrow
where they are needed): it runs on GPU machines that have neither the agent's nor the session's dependencies.

    tasks = select(discover_suite(path, scratch), levels=(1, 2), pattern=None, sample=None, seed=0)
    provide = solutions_provider(Path("solutions"))          # or the agent's sessions (commands/bench.py)
    outcomes = run_bench(tasks, provide, LocalExecutor(options, workers=1), journal, on_outcome, stop)
    summarize(outcomes, p_values=(1.0, 1.5, 2.0))
"""
