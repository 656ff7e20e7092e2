"""Sessions on disk: the git workspace, the JSONL log, reading finished sessions back, export and accept."""
