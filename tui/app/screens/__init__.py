"""The app's screens: main (triage), round gate, forms, confirm, help, trends, loops inbox."""

# The stylesheet of the screens a key opens (forms, gates, help, trends): read by Textual when the
# first of them opens (each one's CSS_PATH, relative to its module), not before the first frame.
DIALOGS_CSS = "../dialogs.tcss"
