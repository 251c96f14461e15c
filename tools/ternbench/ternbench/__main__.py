"""`python3 -m ternbench ...`: the same command line as the ternbench launcher."""
from .cli import entry

entry()
