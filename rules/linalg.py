"""Rules: linalg."""
