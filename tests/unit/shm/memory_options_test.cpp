// Memory options tests: being written.
