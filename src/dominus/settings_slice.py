"""The base of every feature's settings slice."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class SettingsSlice(BaseSettings):
    """A feature's own knobs. A process validates only the composed `dominus.config.Settings`
    (a feature is handed that object typed as its slice), so a slice's validator is built the
    first time a slice is used alone, not at import: building every slice's schema at import
    cost each command about 60 million instructions (some 12 ms) before it read an argument.
    The composed class inherits the setting and builds its own on first use."""

    model_config = SettingsConfigDict(defer_build=True)
