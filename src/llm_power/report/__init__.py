"""Views and renderers: ``view.py`` words a result once; the terminal, Markdown, HTML, JSON and
notebook renderers only format it (no statistics in here: ``tests/test_layering.py``).
"""
