"""tbcheck.py - what every ternbench test script does with its checks: `check(cond, what)`
records and prints a failure and goes on; `done(text)` exits nonzero naming how many
failed, else prints text. Imported from the scripts' own directory (sys.path[0])."""
import sys

fails = []


def check(cond, what):
    """Record `what` as failed unless cond; returns cond as a bool."""
    if not cond:
        fails.append(what)
        print("FAIL:", what)
    return bool(cond)


def done(text="all checks passed"):
    """Exit 1 with the number of failed checks, or print text."""
    if fails:
        sys.exit("%d check(s) failed" % len(fails))
    print(text)
