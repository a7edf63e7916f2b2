"""Command-line interface: one module per subcommand; no statistics in here."""
