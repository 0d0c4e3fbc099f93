"""Tests compile in-process; the on-disk cache is off except where a test turns it on."""
import os

os.environ["ADJOINT_COMPILER_CACHE"] = "0"
