"""ternbench: measure, model and compare the cost of communication (see cli.py)."""
# Keep in step with pyproject.toml's version (tern's project version).
__version__ = "0.1.0"
