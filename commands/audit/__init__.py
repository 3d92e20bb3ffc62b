"""What happened: history, time travel, replay and diff, export, reports and integrity."""
