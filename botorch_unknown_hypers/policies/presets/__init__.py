r"""The package's presets: ``auto``, ``lb-gp-ucb-auto`` and ``he-gp-ucb-auto``."""
