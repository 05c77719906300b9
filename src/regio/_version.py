"""The version of regio (``regio.__version__``, ``regio --version``), in one place below
every layer, so the command line reads it without importing the public face."""

__version__ = "0.1.0"
