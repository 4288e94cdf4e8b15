"""Prints how many examples the run ran and how many say why they cannot."""

import test_examples


def pytest_terminal_summary(terminalreporter):
    counts = test_examples.COUNTS
    terminalreporter.write_line(f"examples: {counts['run']} run ({counts['commands']} shell lines), "
                                f"{counts['not run']} not run (each says why)")
