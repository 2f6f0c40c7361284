"""scars.tui.commands"""
