"""Renderers: terminal tables (rich) and JSON. No statistics in here."""
