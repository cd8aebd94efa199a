"""The Runtime parity tab: model B on two runtimes or thread counts."""
