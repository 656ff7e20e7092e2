"""One module per CLI verb, each exposing `run(args) -> int`."""
