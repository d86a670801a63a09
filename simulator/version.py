"""The package version, in one place (the wheel metadata, sweep manifests and `specroof --version` read it)."""

__version__ = "0.4.1"
