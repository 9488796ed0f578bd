"""The triage tests use the fake AUR's fixtures (tests/aur/conftest.py)."""

from tests.aur.conftest import aur_ca, fake_aur  # noqa: F401 - fixtures
