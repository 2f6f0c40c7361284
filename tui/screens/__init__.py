"""scars.tui.screens"""
