"""The `dominus` command line (Typer): one module per command group."""
