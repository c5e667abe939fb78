"""A file with no test: its status is no_tests, which no report may list as passed."""
