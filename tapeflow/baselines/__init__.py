"""Real tools TapeFlow is measured against (optional extras), behind TapeFlow's passes."""
