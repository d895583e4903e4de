"""Native tests: a package, so that its conftest is native.conftest, not the unit tests' conftest."""
