"""ternbench: measure, model and compare the cost of communication (see cli.py)."""
