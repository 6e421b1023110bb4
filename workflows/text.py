"""Text from files and servers as the shells show it: control and bidi characters escaped
(measurements.safe_text's rule, one for the terminal, the app and the reports). Pure `re`, so
the CLI's light commands can load it."""

from __future__ import annotations

from measurements.safe_text import escape_hidden

__all__ = ["escape_hidden"]
