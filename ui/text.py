"""Text from files, servers and users as Streamlit shows it: literally. Every element that takes a
string (st.error, st.caption, st.info, ...) reads it as Markdown, so a file named
`![b](http://host/beacon.png)` would fetch an image, `$\\frac{a}{b}$` render as a formula and
`:red[...]` colour the page; plain() escapes what Markdown, KaTeX and Streamlit's directives read.
"""

from __future__ import annotations

import re

from reports.cells import visible

# CommonMark lets any ASCII punctuation be backslash-escaped. These are the ones that change what
# is shown anywhere in a line: links and images ([), formulas ($), Streamlit's :colour[...]
# directives (:), emphasis (* _ ~), code (`), headings (#), tables (|) and autolinks (< >).
# A colon before a letter starts Streamlit's :red[...] directives and :emoji: / :material/...:
# icons; other colons (": ", "http://", "12:30") stay as they are.
_SPECIAL = re.compile(r"([\\`*_\[\]$#~|<>]|:(?=[A-Za-z]))")


def plain(text: object) -> str:
    """`text` escaped so Streamlit shows it as written; control characters (ESC, ...) as \\xNN,
    bidi controls (U+202E, ...) as \\uNNNN."""
    shown = visible(str(text))
    return _SPECIAL.sub(r"\\\1", shown)
