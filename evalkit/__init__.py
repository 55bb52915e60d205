"""evalkit: analysis of AI-agent benchmark runs."""
__version__ = "0.1.0"
