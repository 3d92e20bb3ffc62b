"""The prompt-injection screen's parts: normalised views and instruction patterns."""
