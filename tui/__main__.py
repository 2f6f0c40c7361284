from scars.tui.cli.main import entry

entry()
