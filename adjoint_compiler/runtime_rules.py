"""Helpers called by the built-in rule templates in `rules/` (re-exported by `runtime` as `rt.*`)."""
from __future__ import annotations

import numpy as np  # noqa: F401
