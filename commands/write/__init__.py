"""What goes in: add, ingest, notes and procedures, and the checks every write passes."""
