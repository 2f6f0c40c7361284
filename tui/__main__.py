from scars.tui.cli import entry

entry()
