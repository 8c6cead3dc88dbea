"""TapeFlow."""
