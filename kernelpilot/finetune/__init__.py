"""Offline PPO on logged sessions. Importing this package must stay cheap: transformers, peft and
accelerate (the `finetune` extra) are imported by the modules that train, never here."""
