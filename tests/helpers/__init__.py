"""Test helpers shared by more than one test area."""
