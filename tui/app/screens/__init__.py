"""The app's screens: main (triage), round gate, forms, confirm, help, trends, loops inbox."""
