"""Benchmark variants: the losses (logistic regression, MLP) written as people write them.
Each variant is a Workload (see workloads.py) whose `f` is another spelling of a workload's
mathematics and whose `hand` is the hand-written gradient of that mathematics."""
from __future__ import annotations

SPELLINGS: list = []
