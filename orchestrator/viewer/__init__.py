"""``cconductor view``: a local, read-only web viewer of sessions (docs/viewer.md).

Layer: above ``run`` (it renders the report as ``run`` does) and below ``cli``. It reads the
session folder and never writes into it; everything it reads about the committed state goes
through :mod:`orchestrator.viewer.state`, so switching that read to another accessor is one module.
"""
