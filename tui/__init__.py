"""scars.tui — everything that talks to a terminal: the CLI, the Textual app, gate prompts."""
