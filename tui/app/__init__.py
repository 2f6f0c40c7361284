"""The full-screen Textual app: ``app`` (ScarsApp), ``backend`` (its one door to the durable
layer), ``viewmodel`` (rows, filters, decision states), ``keymap``, ``palette``, ``screens/``
and ``widgets/``."""
