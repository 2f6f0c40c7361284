"""samsara, the loop scars was built for: a feature directory (``changes/<feature>/``) read into a
``Feature``, its decisions, rounds, watches and logs, and the writer session that records them."""
