"""Rules: shape."""
