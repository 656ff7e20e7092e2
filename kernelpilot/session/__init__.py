"""Sessions on disk: the git workspace, the JSONL log, reading finished sessions back (as trajectories for finetuning
too), export and accept."""
