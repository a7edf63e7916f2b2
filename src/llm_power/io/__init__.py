"""Readers: turn result files into aligned per-item score arrays. Errors name file, record, field."""

from .plain import ItemScores, align_pair, read_item_scores, read_wide_matrix, read_wide_scores

__all__ = ["ItemScores", "align_pair", "read_item_scores", "read_wide_matrix", "read_wide_scores"]
