"""`kernelpilot` command line: parses arguments and hands each verb to `kernelpilot.commands.<verb>`.

User errors (`KernelpilotError`) become one line on stderr and exit status 2; tracebacks are for bugs.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from kernelpilot import __version__
from kernelpilot.errors import KernelpilotError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2 like every other user error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"kernelpilot: error: {message}\n")
        raise SystemExit(2)


POLICY_HELP = "strict (default): forward runs only your kernels; mixed: torch ops too"
SESSIONS_ACTIONS = """actions:
  list       one line per session: id, task, model, candidates, best speedup, how it ended
  show ID    a session's task, model, usage and candidates (on a terminal: the TUI, read-only)
  export ID  write a candidate (--candidate N, default: the best correct one) as a file or a workspace"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kernelpilot", description="LLM-written GPU kernels for your PyTorch model.")
    parser.add_argument("--version", action="version", version=f"kernelpilot {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=_Parser)

    optimize = verbs.add_parser("optimize", help="open the TUI and let an agent write kernels for a model")
    optimize.add_argument("task", nargs="?", help="a KernelBench-format model file")
    optimize.add_argument("--model", help="litellm model string, replay:PATH, or local:NAME_OR_PATH[+ADAPTER] "
                          "(in-process transformers, e.g. local:smollm2-135m; default: config / KERNELPILOT_MODEL)")
    optimize.add_argument("--skill", help="skill name under skills/ or a path to a skill directory")
    optimize.add_argument("--max-turns", type=int)
    optimize.add_argument("--budget-usd", type=float)
    optimize.add_argument("--max-minutes", type=float, help="wall-time budget")
    optimize.add_argument("--device", choices=["cuda", "cpu"])
    optimize.add_argument("--policy", help=POLICY_HELP)
    optimize.add_argument("--headless", action="store_true", help="no TUI: progress on stderr, JSON summary on stdout")
    optimize.add_argument("--resume", metavar="ID", help="continue a session")
    optimize.add_argument("--allow-shell", action="append", default=[], metavar="PATTERN",
                          help="shell commands the agent may run without asking (glob; repeatable)")

    evaluate = verbs.add_parser("eval", help="evaluate a candidate against a task")
    evaluate.add_argument("task")
    evaluate.add_argument("candidate", help="a ModelNew .py file or a workspace directory")
    evaluate.add_argument("--device", choices=["cuda", "cpu"], help="default: cuda when available, else cpu")
    evaluate.add_argument("--json", action="store_true", help="print the result as one JSON object")
    evaluate.add_argument("--timeout", type=float, help="seconds for verify + profile (build has its own limit)")
    evaluate.add_argument("--build-timeout", type=float)
    evaluate.add_argument("--trials", type=int)
    evaluate.add_argument("--timed-runs", type=int)
    evaluate.add_argument("--tol", type=float, help="atol = rtol override")
    evaluate.add_argument("--compile-modes", help="comma-separated torch.compile modes (default: default)")
    evaluate.add_argument("--policy", help=POLICY_HELP)
    evaluate.add_argument("--no-cache", action="store_true", help="re-measure cached baselines")
    evaluate.add_argument("--ncu", action="store_true",
                          help="read Nsight Compute counters (bandwidth, occupancy) when the candidate passes")

    bench = verbs.add_parser("bench", help="evaluate a KernelBench-format suite")
    bench.add_argument("suite", help="a folder of task files (KernelBench's level1/... or flat), or a .jsonl / "
                                     ".parquet file with a 'code' column")
    bench.add_argument("--solutions", metavar="DIR", help="candidates: DIR/NAME.py or DIR/NAME/ for task NAME.py")
    bench.add_argument("--model", help="candidates made by the agent: each task optimised headless (as optimize)")
    bench.add_argument("--reference-as-candidate", action="store_true",
                       help="harness self-test: each task file is its own candidate (ModelNew = Model)")
    bench.add_argument("--device", choices=["cuda", "cpu"], help="default: cuda when available, else cpu")
    bench.add_argument("--policy", help=POLICY_HELP)
    bench.add_argument("--levels", help="comma-separated levels, e.g. 1,2,3")
    bench.add_argument("--tasks", metavar="GLOB", help="only tasks whose name matches, e.g. 'level1/*' or '*Conv*'")
    bench.add_argument("--sample", type=int, metavar="N", help="N tasks drawn at random, stratified by level")
    bench.add_argument("--seed", type=int, default=0, help="seed of --sample")
    bench.add_argument("--p", default="1.0,1.5,2.0", help="fast_p thresholds (comma-separated speedups)")
    bench.add_argument("--workers", type=int, help="evaluations at a time (default: one per GPU; 1 on cpu)")
    bench.add_argument("--executor", choices=["local", "ray"], default="local")
    bench.add_argument("--ray-address", metavar="ADDR", help="an existing Ray cluster (default: a local Ray)")
    bench.add_argument("--json", action="store_true", help="print the results as one JSON object")
    bench.add_argument("--out", metavar="DIR", help="write results.jsonl as it runs, then results.json, report.md, "
                                                    "speedups.png; a later run with the same DIR goes on from there")
    bench.add_argument("--resume", action="store_true", help="go on with the run in --out (as re-running does)")
    bench.add_argument("--timeout", type=float, metavar="S", help="seconds for each verify + profile")

    sessions = verbs.add_parser("sessions", help="list, show and export sessions", epilog=SESSIONS_ACTIONS,
                                description="Read the sessions `kernelpilot optimize` logged (nothing runs).",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sessions.add_argument("action", choices=["list", "show", "export"], help="list | show ID | export ID (below)")
    sessions.add_argument("session_id", nargs="?", metavar="ID", help="a session id, as `sessions list` prints it")
    sessions.add_argument("--out", help="export: where to write (default: in the current folder, "
                                        "named TASK_ID_new.py or TASK_ID/)")
    sessions.add_argument("--format", choices=["single", "workspace"], default="single",
                          help="export: one ModelNew .py file (default), or model_new.py + kernels/ in a folder")
    sessions.add_argument("--candidate", type=int, metavar="N", help="export candidate N (default: the best)")
    sessions.add_argument("--root", help="sessions directory (default: ./.kernelpilot/sessions)")

    finetune = verbs.add_parser("finetune", argument_default=argparse.SUPPRESS,
                                help="train a LoRA adapter on session logs: RFT, critic warm-up, offline PPO")
    finetune.add_argument("sessions", nargs="+", help="session logs, session directories or folders of sessions")
    finetune.add_argument("--base-model", required=True,
                          help="smollm2-135m, a model folder or .gguf file, or a Hugging Face id already cached")
    finetune.add_argument("--stage", choices=["rft", "critic", "ppo", "all"], help="default: all, in that order")
    finetune.add_argument("--lora-rank", type=int)
    finetune.add_argument("--epochs", type=int, help="passes over each stage's sessions")
    finetune.add_argument("--max-steps", type=int, help="optimizer steps per stage at most")
    finetune.add_argument("--lr", type=float, help="the adapter's learning rate")
    finetune.add_argument("--batch-size", type=int, help="sessions per optimizer step, over all processes")
    finetune.add_argument("--reward-shaping", action="store_true",
                          help="reward each turn's attempts, discounted across turns (default: the session's result)")
    finetune.add_argument("--importance-cap", type=float, help="truncate importance weights π_old/π_behaviour here")
    finetune.add_argument("--seed", type=int)
    finetune.add_argument("--out", help="output folder (default: runs/finetune)")
    finetune.add_argument("--resume", action="store_true", help="continue the run under --out from its checkpoint")
    finetune.add_argument("--merge", action="store_true", help="also save the base model with the adapter merged in")
    finetune.add_argument("--fsdp", action="store_true",
                          help="under torchrun/accelerate launch: shard the base model over the processes (FSDP2), "
                               "for a base too large for one device")

    verbs.add_parser("doctor", help="check GPU, driver, toolchain and caches")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module_name = {"eval": "evaluate"}.get(args.verb, args.verb)
    try:
        command = importlib.import_module(f"kernelpilot.commands.{module_name}")
        return command.run(args)
    except KernelpilotError as error:
        sys.stderr.write(f"kernelpilot: {error}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("kernelpilot: interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
