"""Extensions for the tools evaluations run in (optional extras)."""
