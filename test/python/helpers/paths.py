"""Where the tests find the checkout: its root (benchmarks/, docs/, the lit tests) and the
inputs shared by the test folders, from any folder under test/python."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parents[1]
INPUTS = TESTS / "Inputs"
