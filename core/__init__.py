"""scars.core — the domain and the file formats of scars.

Pure Python: this package never imports textual, rich, questionary or scars.tui
(checked by tests/test_purity.py).
"""
