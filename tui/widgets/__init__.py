"""scars.tui.widgets"""
